package workload

import (
	"fmt"
	"unsafe"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Accumulate is MPI Accumulate with passive-target epochs (the dissertation
// §2) on two nodes: node 0 opens an epoch (Win_lock), issues PerEpoch
// float64 SUM accumulates into node 1's window, and closes it
// (Win_unlock), which waits for one ack per accumulate. The target
// applies each accumulate — on its CPU (CPU), with a kernel its host
// launches (HDN), with a kernel its host progress thread enqueues (HSA), or
// with a kernel its NIC enqueues (XTQ) — and acks once it is applied.
type Accumulate struct {
	Sizes    []unit.Bytes // bytes of each accumulate, cycled (multiples of 8)
	PerEpoch int          // accumulates per epoch
	Epochs   int
	// Stride is the displacement step between the accumulates of an
	// epoch; 0 puts them all at displacement 0 (they then combine into the
	// same elements, which the serial reference must still equal).
	Stride unit.Bytes
	// Window is the target window's bytes; 0 sizes it to hold every
	// accumulate. An accumulate outside it is refused before the run.
	Window     unit.Bytes
	WGSize     int
	CPUThreads int
}

// AccumulateResult is what one run measured.
type AccumulateResult struct {
	Impl     string
	Time     sim.Time // first lock to last unlock completion at the initiator
	PerEpoch sim.Time
	Verified bool
}

// AccumulateDef is the Accumulate's registry entry.
func AccumulateDef() Def {
	return Def{
		Name:     "accumulate",
		Summary:  "2-node MPI Accumulate (float64 SUM) in passive-target epochs (the dissertation's XTQ chapter)",
		Baseline: strategy.CPU,
		Preset:   "xtq", // the XTQ chapter's Accumulate (Table 4.1)
		Impls: []Impl{
			{Name: "remote-tasks", Needs: strategy.NICTasks},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
		},
		NotApplicable: accumulateNotApplicable(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			c, err := newCluster(hw, 2, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			a := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB}, PerEpoch: 3, Epochs: 4, Stride: 2 * unit.KiB, WGSize: 256, CPUThreads: hw.CPU.Cores}
			r, err := a.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: 2, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// accumulateNotApplicable says why the Accumulate does not run on the
// strategies without an implementation.
func accumulateNotApplicable() map[strategy.Strategy]string {
	const spin = "the accumulate adds float64 data into a window on host or GPU cores; the sPIN strategies run datatype-unpack handlers on the NIC, and reductions inside handlers are not modelled"
	return map[strategy.Strategy]string{
		strategy.SpinSpecialized: spin, strategy.SpinHPULocal: spin, strategy.SpinROCP: spin, strategy.SpinRWCP: spin,
	}
}

// reduceNotApplicable says why the Reduce does not run on the strategies
// without an implementation.
func reduceNotApplicable() map[strategy.Strategy]string {
	const spin = "the Reduce adds float64 vectors on host or GPU cores; the sPIN strategies run datatype-unpack handlers on the NIC, and reductions inside handlers are not modelled"
	return map[strategy.Strategy]string{
		strategy.SpinSpecialized: spin, strategy.SpinHPULocal: spin, strategy.SpinROCP: spin, strategy.SpinRWCP: spin,
	}
}

// Validate checks the parameters.
func (a Accumulate) Validate() error {
	switch {
	case len(a.Sizes) == 0:
		return fmt.Errorf("accumulate: no sizes")
	case a.PerEpoch < 1 || a.Epochs < 1 || a.WGSize < 1 || a.CPUThreads < 1:
		return fmt.Errorf("accumulate: per-epoch %d, epochs %d, wg size %d, cpu threads %d: each must be ≥ 1", a.PerEpoch, a.Epochs, a.WGSize, a.CPUThreads)
	case a.Stride < 0 || a.Stride%8 != 0 || a.Window < 0 || a.Window%8 != 0:
		return fmt.Errorf("accumulate stride %v, window %v: must be non-negative multiples of 8 bytes", a.Stride, a.Window)
	}
	for _, s := range a.Sizes {
		if s < 8 || s%8 != 0 || s > 64*unit.MiB {
			return fmt.Errorf("accumulate size %v: must be a multiple of 8 bytes (float64) in [8B, 64MiB]", s)
		}
	}
	return nil
}

// op is one accumulate of the run: its epoch, size and displacement.
type accOp struct {
	epoch, k  int
	size, off uint64
}

// ops lists the run's accumulates in issue order.
func (a Accumulate) ops() []accOp {
	var out []accOp
	i := 0
	for e := range a.Epochs {
		for k := range a.PerEpoch {
			out = append(out, accOp{e, k, uint64(a.Sizes[i%len(a.Sizes)]), uint64(k) * uint64(a.Stride)})
			i++
		}
	}
	return out
}

// window returns the window bytes: Window, or what every accumulate
// needs.
func (a Accumulate) window() uint64 {
	if a.Window > 0 {
		return uint64(a.Window)
	}
	w := uint64(0)
	for _, op := range a.ops() {
		w = max(w, op.off+op.size)
	}
	return w
}

// accValue is element j of accumulate i's data: a multiple of 1/2 below
// 8, so every sum is exact whatever the order.
func accValue(i, j int) float64 { return float64((i*7+j*3)%16) / 2 }

// winInit is element j of the window before the run.
func winInit(j int) float64 { return float64(j%5) / 4 }

// Run runs the accumulate epochs under s on a two-node cluster.
func (a Accumulate) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (AccumulateResult, error) {
	if len(c.Nodes) != 2 {
		return AccumulateResult{}, fmt.Errorf("accumulate needs 2 nodes, got %d", len(c.Nodes))
	}
	if err := a.Validate(); err != nil {
		return AccumulateResult{}, err
	}
	im, _, err := AccumulateDef().implFor(s)
	if err != nil {
		return AccumulateResult{}, err
	}
	ops := a.ops()
	win := a.window()
	for _, op := range ops {
		if err := checkWindow(op, win); err != nil {
			return AccumulateResult{}, err
		}
	}
	var start, end sim.Time
	var window mem.Addr
	var vw verbsWorld
	bases := newPeerBases(2)
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		switch im.Name {
		case "device-shmem": // the window lives in the symmetric heap
			return a.shmem(nd, ops, win, &window, &start, &end)
		case "device-verbs": // the staging slots live in GPI segments
			return a.verbs(nd, &vw, ops, win, &window, &start, &end)
		case "triggered", "stream-triggered":
			return a.triggered(nd, im.Name == "stream-triggered", bases, ops, win, &window, &start, &end)
		}
		if nd.Rank == 1 {
			window = nd.Mem.Alloc(nd.Pool, win, "window")
			fillF64(nd.Mem, window, win, func(j int) float64 { return winInit(j) })
		}
		var err error
		switch im.Name {
		case "remote-tasks":
			err = a.remote(nd, ops, window, &start, &end)
		default:
			err = a.twoSided(nd, ops, window, &start, &end)
		}
		return err
	})
	if err := runTasks(c, g); err != nil {
		return AccumulateResult{}, err
	}
	res := AccumulateResult{Impl: im.Name, Time: end - start, PerEpoch: (end - start) / sim.Time(a.Epochs)}
	if m := c.Nodes[1].Mem; m.Functional() {
		want := make([]float64, win/8)
		for j := range want {
			want[j] = winInit(j)
		}
		for i, op := range ops {
			for j := range int(op.size / 8) {
				want[int(op.off/8)+j] += accValue(i, j)
			}
		}
		got := f64(m.Bytes(window, int(win)))
		for j := range want {
			if got[j] != want[j] {
				return res, fmt.Errorf("%s accumulate: window element %d = %v, want %v (serial reference)", s, j, got[j], want[j])
			}
		}
		res.Verified = true
	}
	return res, nil
}

// checkWindow is the initiator's bounds check of an accumulate against the
// target window: one clear error instead of a write outside it.
func checkWindow(op accOp, win uint64) error {
	if op.off+op.size > win || op.off+op.size < op.off {
		return fmt.Errorf("accumulate %d of epoch %d: %d bytes at displacement %d lie outside the %d-byte window", op.k, op.epoch, op.size, op.off, win)
	}
	return nil
}

// source fills a buffer with accumulate i's data and returns it.
func accSource(m *mem.Memory, pool mem.Pool, i int, size uint64) mem.Addr {
	src := m.Alloc(pool, size, "acc.src")
	fillF64(m, src, size, func(j int) float64 { return accValue(i, j) })
	return src
}

// remote is the one-sided XTQ Accumulate (HSA: the same with the target
// CPU enqueueing): each accumulate is a task whose kernel adds the payload
// into the window at its displacement; the target's application thread,
// acting as the internal progress thread, waits on the kernel's
// completion signal and acks each; per epoch it re-posts the receive
// buffer before the epoch's last ack, so the next epoch finds it.
func (a Accumulate) remote(nd *strategy.Node, ops []accOp, window mem.Addr, start, end *sim.Time) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	cmdLen := xtq.Task{Args: make([]uint64, 4)}.CmdLen()
	if nd.Rank == 0 {
		srcs := make([]mem.Addr, len(ops))
		for i, op := range ops {
			srcs[i] = accSource(nd.Mem, nd.Pool, i, op.size)
		}
		rt.Barrier()
		*start = nd.Host.Now()
		for i, op := range ops {
			nd.Host.Instr(nd.SW.MPIPoll) // Win_lock/Accumulate bookkeeping of the MPI layer
			if err := rt.Put(xtq.Task{Target: 1, Kernel: kernelAcc, Queue: taskQueue, Grid: taskGrid(nd, op.size*2, a.WGSize),
				WGSize: a.WGSize, Args: []uint64{0, 0, op.off, op.size}, Payload: srcs[i], PayloadLen: op.size}); err != nil {
				return err
			}
			if op.k == a.PerEpoch-1 { // Win_unlock: wait for the epoch's acks
				rt.WaitNotify(xtq.ChanAck, uint64(i+1), fmt.Sprintf("acks of epoch %d", op.epoch))
			}
		}
		*end = nd.Host.Now()
		return nil
	}
	if err := initTaskQueue(rt); err != nil {
		return err
	}
	sig := rt.NewSignal("accumulate.signal", uint64(len(ops)))
	if _, err := rt.RegisterKernel(kernelAcc, accCode(), window, sig); err != nil {
		return err
	}
	epochBytes := func(e int) uint64 {
		n := uint64(0)
		for _, op := range ops[e*a.PerEpoch : (e+1)*a.PerEpoch] {
			n += cmdLen + op.size
		}
		return n
	}
	bufBytes := uint64(0)
	for e := range a.Epochs {
		bufBytes = max(bufBytes, epochBytes(e))
	}
	recv := nd.Mem.Alloc(mem.Host, bufBytes, "accumulate.recv")
	rt.PostBuffer(recv, bufBytes)
	rt.Barrier()
	for i, op := range ops {
		left := uint64(len(ops) - i - 1)
		rt.SignalWait(sig, fmt.Sprintf("accumulate %d applied", i), func(v uint64) bool { return v <= left })
		if op.k == a.PerEpoch-1 && op.epoch+1 < a.Epochs {
			rt.PostBuffer(recv, bufBytes)
		}
		rt.Notify(0, xtq.ChanAck)
	}
	return nil
}

// accCode adds args[3] bytes of float64 at the payload (args[1]) into the
// target buffer (args[0]) at displacement args[2]: per element 4 vector
// instructions per work-item and 24 bytes of memory traffic.
func accCode() gpu.KernelCode {
	return gpu.KernelCode{Name: "accumulate", Body: func(wg *gpu.WG, kernarg mem.Addr) {
		a := wg.LoadArgs(kernarg, 4)
		accRange(wg, mem.Addr(a[0]+a[2]), mem.Addr(a[1]), a[3])
	}}
}

// accRange is work-group wg's share of adding nb bytes of float64 at src
// into dst.
func accRange(wg *gpu.WG, dst, src mem.Addr, nb uint64) {
	elems := int(nb / 8)
	g := wg.Groups()
	lo, hi := wg.ID*elems/g, (wg.ID+1)*elems/g
	if hi <= lo {
		return
	}
	addF64(wg.Mem(), dst+mem.Addr(8*lo), src+mem.Addr(8*lo), uint64(8*(hi-lo)))
	wg.VALU(4 * ((hi - lo + wg.Size - 1) / wg.Size))
	wg.StreamOut(uint64(24*(hi-lo)), uint64(8*(hi-lo))) // two reads and a write per element
}

// accKernel is accCode as a host-launched kernel (HDN).
func accKernel(nd *strategy.Node, dst, src mem.Addr, nb uint64, wgSize int) gpu.Kernel {
	return gpu.Kernel{Name: "accumulate", WGs: taskGrid(nd, nb*2, wgSize) / wgSize, WGSize: wgSize,
		Body: func(wg *gpu.WG) { accRange(wg, dst, src, nb) }}
}

// Tags of the two-sided Accumulate.
const (
	tagAcc = 1
	tagAck = 2
)

// twoSided is Accumulate over send/recv (the dissertation (Portals 4)): each accumulate is
// a tagged send; the target's application thread receives it (receives
// pre-posted per epoch), applies the op — on its cores (CPU) or with a
// kernel it launches and waits for (HDN) — and returns a zero-byte ack;
// Win_unlock waits for the epoch's acks.
func (a Accumulate) twoSided(nd *strategy.Node, ops []accOp, window mem.Addr, start, end *sim.Time) error {
	if nd.Rank == 0 {
		srcs := make([]mem.Addr, len(ops))
		for i, op := range ops {
			srcs[i] = accSource(nd.Mem, nd.Pool, i, op.size)
		}
		ackBuf := nd.Mem.Alloc(mem.Host, 8, "acc.ack")
		if err := mpiBarrier(nd, 1); err != nil {
			return err
		}
		*start = nd.Host.Now()
		var pending []*mpi.Request
		for i, op := range ops {
			ack, err := nd.MPI.Irecv(ackBuf, 0, 1, tagAck)
			if err != nil {
				return err
			}
			r, err := nd.MPI.Isend(srcs[i], op.size, 1, tagAcc)
			if err != nil {
				return err
			}
			pending = append(pending, ack, r)
			if op.k == a.PerEpoch-1 {
				nd.MPI.Waitall(pending...)
				pending = pending[:0]
			}
		}
		*end = nd.Host.Now()
		return nil
	}
	if err := mpiBarrier(nd, 0); err != nil {
		return err
	}
	stage := make([]mem.Addr, a.PerEpoch)
	for k := range stage {
		stage[k] = nd.Mem.Alloc(nd.Pool, a.maxSize(), "acc.stage")
	}
	for e := range a.Epochs {
		epoch := ops[e*a.PerEpoch : (e+1)*a.PerEpoch]
		reqs := make([]*mpi.Request, len(epoch))
		for k, op := range epoch {
			r, err := nd.MPI.Irecv(stage[k], op.size, 0, tagAcc)
			if err != nil {
				return err
			}
			reqs[k] = r
		}
		for k, op := range epoch {
			nd.MPI.Wait(reqs[k])
			dst := window + mem.Addr(op.off)
			if nd.Stream == nil {
				addF64(nd.Mem, dst, stage[k], op.size)
				nd.Host.ComputeOn(a.CPUThreads, reduceInto(dst, stage[k], op.size)...)
			} else {
				nd.Stream.Wait(nd.Stream.Launch(accKernel(nd, dst, stage[k], op.size, a.WGSize)))
			}
			ack, err := nd.MPI.Isend(stage[k], 0, 0, tagAck)
			if err != nil {
				return err
			}
			nd.MPI.Wait(ack)
		}
	}
	return nil
}

func (a Accumulate) maxSize() uint64 {
	m := unit.Bytes(0)
	for _, s := range a.Sizes {
		m = max(m, s)
	}
	return uint64(m)
}

// mpiBarrier is a two-node barrier over MPI: zero-length messages both
// ways with tag 0 (peer is the other node).
func mpiBarrier(nd *strategy.Node, peer int) error {
	buf := nd.Mem.Alloc(mem.Host, 8, "barrier")
	r, err := nd.MPI.Irecv(buf, 0, peer, 0)
	if err != nil {
		return err
	}
	s, err := nd.MPI.Isend(buf, 0, peer, 0)
	if err != nil {
		return err
	}
	nd.MPI.Waitall(r, s)
	return nil
}

// fillF64 writes f(j) to element j of the float64 array at a.
func fillF64(m *mem.Memory, a mem.Addr, nb uint64, f func(j int) float64) {
	if b := m.Bytes(a, int(nb)); b != nil {
		vals := f64(b)
		for j := range vals {
			vals[j] = f(j)
		}
	}
}

// addF64 adds the float64 values at src into dst (functional part only).
func addF64(m *mem.Memory, dst, src mem.Addr, nb uint64) {
	d, s := m.Bytes(dst, int(nb)), m.Bytes(src, int(nb))
	if d == nil || s == nil {
		return
	}
	df, sf := f64(d), f64(s)
	for i := range df {
		df[i] += sf[i]
	}
}

// f64 views b as float64 values (node memory is 8-byte aligned).
func f64(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}
