package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// MoE modes (present-day workloads): low-latency sends every (token,
// expert) choice as its own entry (a small batch, DeepEP's low-latency
// kernels), throughput sends a token once per GPU that holds any of its
// experts (a large batch, DeepEP's normal kernels).
const (
	MoELowLatency = "low-latency"
	MoEThroughput = "throughput"
)

// MoE is one expert-parallel MoE layer's dispatch and combine
// (present-day workloads): every GPU of the expert-parallel group holds
// Routing.Shape.Tokens tokens of Hidden channels and routes each to TopK
// experts spread over the GPUs. Dispatch sends each token's FP8
// activation with its scales to the GPUs of its experts; the experts run
// (functionally, at no simulated cost: the experts' GEMMs are not the
// network); combine returns the BF16 expert outputs, weighted by the gate,
// and the token's GPU sums them. The two phases are timed separately,
// each from every GPU released together to the last GPU's end.
type MoE struct {
	Mode    string
	Hidden  int
	Routing *Routing
	// CommWGs is the work-groups (SMs) of the communication kernels of
	// the GPU-initiated implementations (device shmem, triggered); the
	// kernel-boundary ones size their pack and reduce kernels to the data.
	CommWGs int
	WGSize  int
}

// MoEResult is one run.
type MoEResult struct {
	Impl              string
	Dispatch, Combine sim.Time
	// Bytes each GPU sends on average in dispatch and combine to GPUs of
	// its own node (the GPU fabric) and of other nodes (the rails).
	DispatchIntra, DispatchInter, CombineIntra, CombineInter float64
	// CommWGs is the largest number of work-groups a GPU's communication
	// kernels (packing, reduction, device-initiated puts) occupy at once;
	// 0 when the host does everything.
	CommWGs  int
	Verified bool
}

// MoEDef is the MoE layer's registry entry.
func MoEDef() Def {
	return Def{
		Name:     "moe",
		Summary:  "expert-parallel MoE dispatch and combine (DeepEP-style), low-latency and throughput modes: latency per phase, GB/s per GPU intra and inter node",
		Baseline: strategy.HDN,
		// The matrix needs a machine whose NIC runs every family (the
		// seed preset, as for the ping-pong); the experiment runs on the
		// present-day presets.
		Preset: "gputn",
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: moeNA(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			gpus := 8
			if g := max(1, hw.Node.GPUs); gpus%g != 0 {
				gpus = 2 * g
			}
			sh := MoEShape{GPUs: gpus, Experts: 4 * gpus, TopK: 4, Tokens: 16}
			rt, err := SeededRouting(sh, seed)
			if err != nil {
				return Cell{}, err
			}
			c, err := newCluster(hw, gpus, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := MoE{Mode: MoELowLatency, Hidden: 256, Routing: &rt, CommWGs: 4, WGSize: 256}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: gpus, Time: r.Dispatch + r.Combine, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

func moeNA() map[strategy.Strategy]string {
	out := spinNotApplicable("the MoE layer moves activations between GPUs' experts; the sPIN strategies run datatype handlers on the NIC and have no GPU path")
	for _, d := range strategy.Registry() {
		switch {
		case d.Caps.Has(strategy.NICTasks):
			out[d.Strategy] = "XTQ's primitive is a put that launches a kernel on the target; MoE dispatch and combine are data movement between running kernels"
		}
	}
	return out
}

// moeBarrier is a zero-cost barrier of the run's host threads outside the
// measurement; release records when the last one arrived.
type moeBarrier struct {
	n, arrived, gen int
	sig             sim.Signal
	release         sim.Time
}

func (b *moeBarrier) wait(p *sim.Proc) sim.Time {
	g := b.gen
	b.arrived++
	if b.arrived == b.n {
		b.arrived, b.release = 0, p.Now()
		b.gen++
		b.sig.Notify()
	}
	p.WaitUntil(&b.sig, "moe barrier", func() bool { return b.gen != g })
	return b.release
}

// Validate reports bad knobs, naming the field.
func (m MoE) Validate() error {
	if m.Mode != MoELowLatency && m.Mode != MoEThroughput {
		return fmt.Errorf("moe mode %q: must be %s or %s", m.Mode, MoELowLatency, MoEThroughput)
	}
	if m.Hidden < 128 || m.Hidden%128 != 0 || m.Hidden > 65536 {
		return fmt.Errorf("moe.hidden = %d: must be a multiple of 128 in [128, 65536]", m.Hidden)
	}
	if m.Routing == nil {
		return fmt.Errorf("moe: no routing")
	}
	if m.CommWGs < 1 || m.CommWGs > 1024 || m.WGSize < 1 || m.WGSize > 1024 {
		return fmt.Errorf("moe.comm_wgs = %d, wg_size = %d: must be in [1, 1024]", m.CommWGs, m.WGSize)
	}
	return m.Routing.Shape.Validate()
}

// Run runs the layer under s on every rank of c (ranks = the expert-
// parallel GPUs).
func (m MoE) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (MoEResult, error) {
	if err := m.Validate(); err != nil {
		return MoEResult{}, err
	}
	rt := m.Routing
	P := rt.Shape.GPUs
	if len(c.Nodes) != P {
		return MoEResult{}, fmt.Errorf("moe: routing for %d GPUs on a cluster of %d", P, len(c.Nodes))
	}
	im, _, err := MoEDef().implFor(s)
	if err != nil {
		return MoEResult{}, err
	}
	functional := c.Nodes[0].Mem.Functional()
	l := newMoELayout(rt, m.Hidden, m.Mode == MoELowLatency, functional)
	res := MoEResult{Impl: im.Name}
	for a := range P {
		for b := range P {
			if a == b {
				continue
			}
			n := float64(l.count(a, b))
			if c.NodeOf(a) == c.NodeOf(b) {
				res.DispatchIntra += n * float64(l.de)
				res.CombineIntra += n * float64(l.ce)
			} else {
				res.DispatchInter += n * float64(l.de)
				res.CombineInter += n * float64(l.ce)
			}
		}
	}
	res.DispatchIntra /= float64(P)
	res.DispatchInter /= float64(P)
	res.CombineIntra /= float64(P)
	res.CombineInter /= float64(P)

	bar := &moeBarrier{n: P}
	var start [2]sim.Time
	ends := [2][]sim.Time{make([]sim.Time, P), make([]sim.Time, P)}
	bufs := make([]moeBufs, P)
	commWGs := make([]int, P)
	recvs := make([]mem.Addr, P) // every rank's receive region (GDS peer copies land there)
	var dvw dvWorld
	e := c.Engine
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		r := &moeRank{m: m, l: l, rt: rt, nd: nd, me: nd.Rank, P: P, bar: bar, start: &start, ends: &ends, e: e, dvw: &dvw, recvs: recvs}
		var err error
		switch im.Name {
		case "host", "kernel-boundary":
			err = r.twoSided(im.Name == "host")
		case "stream-triggered":
			err = r.streamTriggered()
		case "triggered":
			err = r.triggered()
		case "device-shmem":
			err = r.deviceShmem()
		case "device-verbs":
			err = r.deviceVerbs()
		}
		bufs[nd.Rank] = r.b
		commWGs[nd.Rank] = r.commWGs
		return err
	})
	if err := e.Run(); err != nil {
		return res, err
	}
	if err := g.Err(); err != nil {
		return res, err
	}
	for k := range 2 {
		var t sim.Time
		for _, x := range ends[k] {
			t = max(t, x-start[k])
		}
		if k == 0 {
			res.Dispatch = t
		} else {
			res.Combine = t
		}
	}
	for _, w := range commWGs {
		res.CommWGs = max(res.CommWGs, w)
	}
	if functional {
		if err := m.verify(c, l, bufs); err != nil {
			return res, fmt.Errorf("%s moe: %w", s, err)
		}
		res.Verified = true
	}
	return res, nil
}

// moeBufs are one GPU's regions: activations, dispatch send and receive,
// combine send and receive, the output.
type moeBufs struct {
	act, dSend, dRecv, cSend, cRecv, out mem.Addr
}

// verify checks that every dispatch entry landed at the GPU of its experts
// in its slot, byte for byte, and that every GPU's output is the serial
// weighted sum.
func (m MoE) verify(c *cluster.Cluster, l *moeLayout, bufs []moeBufs) error {
	P := l.sh.GPUs
	for d := range P {
		mm := c.Nodes[d].Mem
		for s := range P {
			n := l.count(s, d)
			want := make([]byte, n*l.de)
			l.writeEntries(m.Routing, want, s, d)
			got := mm.Bytes(bufs[d].dRecv+mem.Addr(l.dRecvOff[d*P+s]), int(n*l.de))
			if !bytes.Equal(got, want) {
				return fmt.Errorf("dispatch: the %d entries GPU %d sent to GPU %d's experts differ from the routing's", n, s, d)
			}
		}
	}
	want := make([]float32, l.hidden)
	for s := range P {
		mm := c.Nodes[s].Mem
		for t := range l.sh.Tokens {
			l.reference(m.Routing, want, s, t)
			got := mm.Bytes(bufs[s].out+mem.Addr(uint64(t)*uint64(l.hidden)*4), l.hidden*4)
			for k, w := range want {
				if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*k:])); v != w {
					return fmt.Errorf("combine: GPU %d token %d channel %d = %g, want the weighted sum %g", s, t, k, v, w)
				}
			}
		}
	}
	return nil
}

// moeRank is one GPU's run.
type moeRank struct {
	m       MoE
	l       *moeLayout
	rt      *Routing
	nd      *strategy.Node
	me, P   int
	bar     *moeBarrier
	start   *[2]sim.Time
	ends    *[2][]sim.Time
	e       *sim.Engine
	b       moeBufs
	commWGs int
	dvw     *dvWorld // device verbs: the run's GPI world
	// recvs[r] is rank r's receive region (set before the first phase's
	// barrier): where GDS's copies to a GPU of this node land.
	recvs []mem.Addr
}

// alloc places the regions in the node's memory (payload-free at scale),
// and with flags the flags as control words: only where a flag is read
// (the one-sided and triggered implementations). The two-sided ones send
// the slots alone, and a message whose range touches a flag's line (a
// slot's last line holds the next flag) would carry a zeroed buffer of the
// whole message through a payload-free run: at EP 128 in throughput mode
// (1.9 MB per pair) that ran out of memory.
func (r *moeRank) alloc(flags bool) {
	nd, l, me := r.nd, r.l, r.me
	mm := nd.Mem
	r.b.act = mm.Alloc(nd.Pool, uint64(l.sh.Tokens)*l.act, "moe.act")
	r.b.dSend = mm.Alloc(nd.Pool, l.dSend[me], "moe.dispatch.send")
	// One receive region for both phases: the one-sided families expose
	// it once and put at offsets into it.
	r.b.dRecv = mm.Alloc(nd.Pool, l.dRecv[me]+l.cRecv[me], "moe.recv")
	r.b.cRecv = r.b.dRecv + mem.Addr(l.dRecv[me])
	r.b.cSend = mm.Alloc(nd.Pool, l.cSend[me], "moe.combine.send")
	r.b.out = mm.Alloc(nd.Pool, uint64(l.sh.Tokens)*uint64(l.hidden)*4, "moe.out")
	if flags {
		r.markFlags()
	}
}

func (r *moeRank) markFlags() {
	l, me, P, mm := r.l, r.me, r.P, r.nd.Mem
	for p := range P {
		mm.MarkControl(r.dSendFlag(p), 8)
		mm.MarkControl(r.dRecvFlag(p), 8)
		mm.MarkControl(r.cSendFlag(p), 8)
		mm.MarkControl(r.cRecvFlag(p), 8)
	}
	_ = l
	_ = me
}

func (r *moeRank) dSendSlot(d int) mem.Addr { return r.b.dSend + mem.Addr(r.l.dSendOff[r.me*r.P+d]) }
func (r *moeRank) dRecvSlot(s int) mem.Addr { return r.b.dRecv + mem.Addr(r.l.dRecvOff[r.me*r.P+s]) }
func (r *moeRank) cSendSlot(s int) mem.Addr { return r.b.cSend + mem.Addr(r.l.cSendOff[r.me*r.P+s]) }
func (r *moeRank) cRecvSlot(d int) mem.Addr { return r.b.cRecv + mem.Addr(r.l.cRecvOff[r.me*r.P+d]) }
func (r *moeRank) dSendFlag(d int) mem.Addr {
	return r.dSendSlot(d) + mem.Addr(r.l.count(r.me, d)*r.l.de)
}
func (r *moeRank) dRecvFlag(s int) mem.Addr {
	return r.dRecvSlot(s) + mem.Addr(r.l.count(s, r.me)*r.l.de)
}
func (r *moeRank) cSendFlag(s int) mem.Addr {
	return r.cSendSlot(s) + mem.Addr(r.l.count(s, r.me)*r.l.ce)
}
func (r *moeRank) cRecvFlag(d int) mem.Addr {
	return r.cRecvSlot(d) + mem.Addr(r.l.count(r.me, d)*r.l.ce)
}

// peer returns the i-th peer (i in [1, P)) in the order a GPU sends to
// them: starting after itself, so the GPUs do not all send to GPU 0 first.
func (r *moeRank) peer(i int) int { return (r.me + i) % r.P }

// raise sets to 1 the word flag(g) of every other GPU g in m: a phase's
// send flags, one per destination.
func (r *moeRank) raise(m *mem.Memory, flag func(int) mem.Addr) {
	for g := range r.P {
		if g != r.me {
			m.Store64(flag(g), 1)
		}
	}
}

// fillAct writes the GPU's activations (the previous layer's output, not
// timed).
func (r *moeRank) fillAct() {
	mm := r.nd.Mem
	for t := range r.l.sh.Tokens {
		if b := mm.Bytes(r.b.act+mem.Addr(uint64(t)*r.l.act), int(r.l.act)); b != nil {
			r.l.writeActivation(b, r.me, t)
		}
	}
}

// pack writes the dispatch entries for d into d's send slot (functional
// only) and, for the one-sided families, the slot's trailing flag; the
// GPU's own entries go straight to its receive slot.
func (r *moeRank) pack(d int) {
	mm, l := r.nd.Mem, r.l
	n := l.count(r.me, d)
	dst := r.dSendSlot(d)
	if d == r.me {
		dst = r.dRecvSlot(d)
	}
	if b := mm.Bytes(dst, int(n*l.de)); b != nil {
		l.writeEntries(r.rt, b, r.me, d)
	}
}

// packBytes is the memory traffic of packing the entries for d: the
// activation read and the entry written.
func (r *moeRank) packBytes(d int) uint64 { return 2 * r.l.count(r.me, d) * r.l.de }

// experts runs the GPU's experts on what it received (functional, not
// timed) into the combine send slots; the GPU's own entries go straight
// to its combine receive slot.
func (r *moeRank) experts() error {
	mm, l := r.nd.Mem, r.l
	if !mm.Functional() {
		return nil
	}
	for s := range r.P {
		n := l.count(s, r.me)
		dst := r.cSendSlot(s)
		if s == r.me {
			dst = r.cRecvSlot(s)
		}
		if err := l.expertCompute(mm.Bytes(dst, int(n*l.ce)), mm.Bytes(r.dRecvSlot(s), int(n*l.de)), r.me, n); err != nil {
			return err
		}
	}
	return nil
}

// reduce sums the tokens' combine entries into the output (functional
// only).
func (r *moeRank) reduce() {
	mm, l := r.nd.Mem, r.l
	if !mm.Functional() {
		return
	}
	out := make([]float32, l.hidden)
	for t := range l.sh.Tokens {
		l.reduceToken(r.rt, out, r.me, t, func(d int, i int32) []byte {
			return mm.Bytes(r.cRecvSlot(d)+mem.Addr(uint64(i)*l.ce), int(l.ce))
		})
		b := mm.Bytes(r.b.out+mem.Addr(uint64(t)*uint64(l.hidden)*4), l.hidden*4)
		for k, v := range out {
			binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
		}
	}
}

// reduceBytes is the memory traffic of the combine's reduction: every
// entry read, the output written.
func (r *moeRank) reduceBytes() uint64 {
	var n uint64
	for d := range r.P {
		n += r.l.count(r.me, d)
	}
	return n*r.l.ce + r.reduceOut()
}

// reduceOut is the part of reduceBytes that is written: the output.
func (r *moeRank) reduceOut() uint64 { return uint64(r.l.sh.Tokens) * uint64(r.l.hidden) * 4 }

func (r *moeRank) allPackBytes() uint64 {
	var b uint64
	for d := range r.P {
		b += r.packBytes(d)
	}
	return b
}

// gpuKernel is a data-parallel kernel over bytes of memory traffic (out
// of them written), sized to the data as the kernel-boundary families
// size theirs; body runs the functional work once.
func (r *moeRank) gpuKernel(name string, bytes, out uint64, body func()) gpu.Kernel {
	ws := r.m.WGSize
	wgs := max(1, min(int(bytes/uint64(4*ws)), r.nd.GPU.CUs))
	r.commWGs = max(r.commWGs, wgs)
	return gpu.Kernel{Name: name, WGs: wgs, WGSize: ws, Body: func(wg *gpu.WG) {
		if wg.ID == 0 && body != nil {
			body()
		}
		wg.VALU(2)
		wg.StreamOut(bytes/uint64(wgs), out/uint64(wgs))
	}}
}

// phase runs between the barriers: the release time is the phase's start.
func (r *moeRank) begin(k int) {
	t := r.bar.wait(r.nd.Host.Proc)
	r.start[k] = t
}

// twoSided is the host (CPU) and kernel-boundary (HDN, GPU-aware MPI)
// implementation: pack (on the host's cores or in a kernel), one MPI
// message per peer with entries, wait for all; combine the same way back,
// then reduce.
func (r *moeRank) twoSided(host bool) error {
	nd, l, me, P := r.nd, r.l, r.me, r.P
	r.alloc(false)
	r.fillAct()
	run := func(name string, bytes, out uint64, body func()) {
		if host {
			if body != nil {
				body()
			}
			nd.Host.Compute(bytes, max(1, nd.Threads))
			return
		}
		nd.Stream.Wait(nd.Stream.Launch(r.gpuKernel(name, bytes, out, body)))
	}
	exchange := func(tagBase int, send func(p int) (mem.Addr, uint64), recv func(p int) (mem.Addr, uint64)) error {
		var reqs []*mpi.Request
		for i := 1; i < P; i++ {
			p := nd.Rank - i
			if p < 0 {
				p += P
			}
			if a, n := recv(p); n > 0 {
				q, err := nd.MPI.Irecv(a, n, p, tagBase+p)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
		}
		for i := 1; i < P; i++ {
			p := r.peer(i)
			if a, n := send(p); n > 0 {
				q, err := nd.MPI.Isend(a, n, p, tagBase+me)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
		}
		nd.MPI.Waitall(reqs...)
		return nil
	}
	r.begin(0)
	run("moe.pack", r.allPackBytes(), r.allPackBytes()/2, func() {
		for d := range P {
			r.pack(d)
		}
	})
	err := exchange(0, func(d int) (mem.Addr, uint64) { return r.dSendSlot(d), l.count(me, d) * l.de },
		func(s int) (mem.Addr, uint64) { return r.dRecvSlot(s), l.count(s, me) * l.de })
	if err != nil {
		return err
	}
	r.ends[0][me] = nd.Host.Now()
	if err := r.experts(); err != nil {
		return err
	}
	r.begin(1)
	err = exchange(P, func(s int) (mem.Addr, uint64) { return r.cSendSlot(s), l.count(s, me) * l.ce },
		func(d int) (mem.Addr, uint64) { return r.cRecvSlot(d), l.count(me, d) * l.ce })
	if err != nil {
		return err
	}
	run("moe.reduce", r.reduceBytes(), r.reduceOut(), r.reduce)
	r.ends[1][me] = nd.Host.Now()
	return nil
}

// gdsSplit preposts the puts of a phase (put(i) for i in [0, P-1)) to
// GPUs of other nodes and returns their deferred ids; those to GPUs of
// this node become copy-engine copies into the peer's receive region
// (NVSHMEM's on-stream puts to a P2P peer go over the fabric too).
func (r *moeRank) gdsSplit(put func(i int) rdma.Put) ([]rdma.Deferred, []stream.PeerCopy) {
	nd := r.nd
	var far []rdma.Put
	var copies []stream.PeerCopy
	for i := range r.P - 1 {
		p := put(i)
		if nd.Stream.ReachesPeer(p.Target) {
			copies = append(copies, stream.PeerCopy{PE: p.Target, Dst: r.recvs[p.Target] + mem.Addr(p.RemoteOffset), Src: p.Src, N: p.Length})
			continue
		}
		far = append(far, p)
	}
	if len(far) == 0 {
		return nil, copies
	}
	first := nd.RDMA.PrepostBlock(len(far), func(i int) rdma.Put { return far[i] })
	ids := make([]rdma.Deferred, len(far))
	for i := range ids {
		ids[i] = first + rdma.Deferred(i)
	}
	return ids, copies
}

// gdsSend enqueues a phase's sends: the trigger of its pre-posted puts,
// then one batch of its peer copies (Stream.CopyPeers).
func (r *moeRank) gdsSend(ids []rdma.Deferred, copies []stream.PeerCopy) {
	if len(ids) > 0 {
		r.nd.Stream.NicTrigger(ids...)
	}
	r.nd.Stream.CopyPeers(copies)
}

// streamTriggered is GDS (stream-enqueued MPI/NVSHMEM on-stream calls):
// the host preposts one put per peer and phase; the GPU's command
// processor runs the pack kernel, rings every put, waits on each peer's
// trailing flag and, in combine, launches the reduction, with no host on
// the path.
func (r *moeRank) streamTriggered() error {
	nd, l, me, P := r.nd, r.l, r.me, r.P
	r.alloc(true)
	r.fillAct()
	nd.RDMA.Expose(r.b.dRecv, l.dRecv[me]+l.cRecv[me])
	r.recvs[me] = r.b.dRecv
	done := nd.Mem.AllocData(mem.Host, 16, "moe.done")
	probe := func(k int) {
		m := nd.Mem
		a := done + mem.Addr(8*k)
		p := r.e.Spawn("moe.probe", func(p *sim.Proc) {
			p.WaitUntil(m.Watch(a), "moe phase done", func() bool { return m.Load64(a) != 0 })
			r.ends[k][me] = p.Now()
		})
		p.SetDaemon()
	}
	if P == 1 {
		return fmt.Errorf("moe needs at least 2 GPUs")
	}
	flags := func() { r.raise(nd.Mem, r.dSendFlag) }
	// The puts' lengths follow this batch's routing: the host preposts
	// them once the gate has run, inside the phase.
	r.begin(0)
	probe(0)
	dNIC, dCopies := r.gdsSplit(func(i int) rdma.Put {
		d := r.peer(i + 1)
		return rdma.Put{Src: r.dSendSlot(d), Length: l.count(me, d)*l.de + 8, Target: d, RemoteOffset: l.dRecvOff[d*P+me]}
	})
	nd.Stream.Launch(r.gpuKernel("moe.pack", r.allPackBytes(), r.allPackBytes()/2, func() {
		for d := range P {
			r.pack(d)
		}
		flags()
	}))
	r.gdsSend(dNIC, dCopies)
	for s := range P {
		if s != me {
			nd.Stream.WaitValue(r.dRecvFlag(s), "moe dispatch arrival", func(v uint64) bool { return v >= 1 })
		}
	}
	nd.Stream.Marker(done, 1)
	nd.Stream.Synchronize()
	if err := r.experts(); err != nil {
		return err
	}
	r.raise(nd.Mem, r.cSendFlag)
	r.begin(1)
	probe(1)
	cNIC, cCopies := r.gdsSplit(func(i int) rdma.Put {
		s := r.peer(i + 1)
		return rdma.Put{Src: r.cSendSlot(s), Length: l.count(s, me)*l.ce + 8, Target: s,
			RemoteOffset: l.dRecv[s] + l.cRecvOff[s*P+me]}
	})
	r.gdsSend(cNIC, cCopies)
	for d := range P {
		if d != me {
			nd.Stream.WaitValue(r.cRecvFlag(d), "moe combine arrival", func(v uint64) bool { return v >= 1 })
		}
	}
	nd.Stream.Launch(r.gpuKernel("moe.reduce", r.reduceBytes(), r.reduceOut(), r.reduce))
	nd.Stream.Marker(done+8, 1)
	nd.Stream.Synchronize()
	return nil
}

// persistent is the kernel shape of the GPU-initiated implementations:
// W work-groups; work-group w sends to peers i ≡ w (mod W) with send(wg,
// i) and then waits for the peers it receives from with recv(wg, i);
// after every work-group's receives (a grid-wide counter), tail(wg) runs
// on every work-group (the combine's reduction, split by token) and the
// kernel's end is when the last one finishes.
func (r *moeRank) persistent(name string, k int, send func(wg *gpu.WG, i int) error, recv func(wg *gpu.WG, i int) error,
	tail func(wg *gpu.WG)) (gpu.Kernel, []error) {
	W := r.m.CommWGs
	r.commWGs = max(r.commWGs, W)
	errs := make([]error, W)
	cnt := r.nd.Mem.AllocData(mem.GPU, 8, name+".count")
	kern := gpu.Kernel{Name: name, WGs: W, WGSize: r.m.WGSize, Body: func(wg *gpu.WG) {
		w := wg.ID
		for i := 1 + w; i < r.P; i += W {
			if errs[w] = send(wg, i); errs[w] != nil {
				return
			}
		}
		for i := 1 + w; i < r.P; i += W {
			if errs[w] = recv(wg, i); errs[w] != nil {
				return
			}
		}
		if tail != nil {
			wg.Release(gpu.Device)
			wg.AtomicAdd64(cnt, 1)
			wg.PollUntil(cnt, true, name+" all received", func(v uint64) bool { return v >= uint64(W) })
			tail(wg)
		}
		r.ends[k][r.me] = max(r.ends[k][r.me], wg.Now())
	}}
	return kern, errs
}

// reduceShare is work-group w's share of the combine's reduction (tokens
// t ≡ w mod W); work-group 0 does the functional sum.
func (r *moeRank) reduceShare(wg *gpu.WG) {
	if wg.ID == 0 {
		r.reduce()
	}
	wg.VALU(2)
	wg.StreamOut(r.reduceBytes()/uint64(r.m.CommWGs), r.reduceOut()/uint64(r.m.CommWGs))
}

// triggered is GPU-TN (Cassini triggered operations fired by a GPU
// store): the host registers one triggered put per peer and phase while
// the persistent kernel runs (relaxed synchronization); the kernel's
// work-groups pack their peers' entries, work-group 0 fires the triggers
// in registration order once every work-group has packed (the NIC holds
// a limited number of trigger entries, so the order matters), and every
// work-group polls the flags of its peers.
func (r *moeRank) triggered() error {
	nd, l, me, P := r.nd, r.l, r.me, r.P
	r.alloc(true)
	r.fillAct()
	nd.RDMA.Expose(r.b.dRecv, l.dRecv[me]+l.cRecv[me])
	trig := nd.TN.TriggerAddr()
	packed := nd.Mem.AllocData(mem.GPU, 8, "moe.packed")
	W := r.m.CommWGs
	fire := func(wg *gpu.WG, tagBase uint64) {
		wg.PollUntil(packed, true, "moe all packed", func(v uint64) bool { return v >= uint64(W) })
		for i := 1; i < P; i++ {
			gputn.Trigger(wg, trig, tagBase+uint64(i))
		}
	}
	register := func(tagBase uint64, put func(p int) gputn.Put) {
		for i := 1; i < P; i++ {
			nd.TN.TrigPut(tagBase+uint64(i), put(r.peer(i)), 1)
		}
	}
	const dTags, cTags = 1 << 20, 2 << 20
	k, errs := r.persistent("moe.dispatch", 0, func(wg *gpu.WG, i int) error {
		d := r.peer(i)
		if i == 1 { // work-group 0 also copies the GPU's own entries
			r.pack(me)
			wg.StreamOut(r.packBytes(me), r.packBytes(me)/2)
		}
		r.pack(d)
		wg.VALU(2)
		wg.StreamOut(r.packBytes(d), r.packBytes(d)/2)
		wg.Store64(r.dSendFlag(d), 1)
		if i+W >= P { // this work-group's last peer
			wg.Release(gpu.System)
			wg.AtomicAdd64(packed, 1)
			if wg.ID == 0 {
				fire(wg, dTags)
			}
		}
		return nil
	}, func(wg *gpu.WG, i int) error {
		s := (me - i + P) % P
		wg.PollUntil(r.dRecvFlag(s), true, "moe dispatch arrival", func(v uint64) bool { return v >= 1 })
		return nil
	}, nil)
	if W >= P { // work-groups without peers count themselves packed
		k = withIdle(k, W, P, packed)
	}
	r.begin(0)
	run := nd.Stream.Launch(k)
	register(dTags, func(d int) gputn.Put {
		return gputn.Put{Src: r.dSendSlot(d), Length: l.count(me, d)*l.de + 8, Target: d, PT: nd.RDMA.PT(), RemoteOffset: l.dRecvOff[d*P+me]}
	})
	nd.Stream.Wait(run)
	if err := firstErr(errs); err != nil {
		return err
	}
	if err := r.experts(); err != nil {
		return err
	}
	nd.Mem.Store64(packed, 0)
	r.raise(nd.Mem, r.cSendFlag)
	k, errs = r.persistent("moe.combine", 1, func(wg *gpu.WG, i int) error {
		if i+W >= P {
			wg.Release(gpu.System)
			wg.AtomicAdd64(packed, 1)
			if wg.ID == 0 {
				fire(wg, cTags)
			}
		}
		return nil
	}, func(wg *gpu.WG, i int) error {
		d := (me - i + P) % P
		wg.PollUntil(r.cRecvFlag(d), true, "moe combine arrival", func(v uint64) bool { return v >= 1 })
		return nil
	}, r.reduceShare)
	if W >= P {
		k = withIdle(k, W, P, packed)
	}
	r.begin(1)
	run = nd.Stream.Launch(k)
	register(cTags, func(s int) gputn.Put {
		return gputn.Put{Src: r.cSendSlot(s), Length: l.count(s, me)*l.ce + 8, Target: s, PT: nd.RDMA.PT(),
			RemoteOffset: l.dRecv[s] + l.cRecvOff[s*P+me]}
	})
	nd.Stream.Wait(run)
	return firstErr(errs)
}

// withIdle makes the work-groups of k that have no peer (W ≥ P) count
// themselves packed before the kernel body runs, so work-group 0 does not
// wait for them.
func withIdle(k gpu.Kernel, W, P int, packed mem.Addr) gpu.Kernel {
	body := k.Body
	k.Body = func(wg *gpu.WG) {
		if wg.ID >= P-1 {
			wg.AtomicAdd64(packed, 1)
		}
		body(wg)
	}
	return k
}

// deviceShmem is the device-initiated family (NVSHMEM IBGDA, rocSHMEM GDA
// and reverse offload, a CPU proxy, ComP-Net): persistent dispatch and
// combine kernels whose work-groups put their peers' entries through the
// device runtime — one put per entry in low-latency mode (per-token puts
// from GPU threads), one put per peer in throughput mode, the last put
// carrying the trailing flag — and wait on their peers' flags.
func (r *moeRank) deviceShmem() error {
	nd, l, me, P := r.nd, r.l, r.me, r.P
	W := r.m.CommWGs
	dev, err := shmemDevice(nd, W)
	if err != nil {
		return err
	}
	// Symmetric regions: the largest GPU's size on every GPU.
	mk := func(n uint64) (mem.Addr, error) { return dev.MallocPayload(n) }
	if r.b.dSend, err = mk(maxOf(l.dSend)); err != nil {
		dev.Finalize()
		return err
	}
	if r.b.dRecv, err = mk(maxOf(l.dRecv)); err != nil {
		dev.Finalize()
		return err
	}
	if r.b.cSend, err = mk(maxOf(l.cSend)); err != nil {
		dev.Finalize()
		return err
	}
	if r.b.cRecv, err = mk(maxOf(l.cRecv)); err != nil {
		dev.Finalize()
		return err
	}
	r.b.act = nd.Mem.Alloc(nd.Pool, uint64(l.sh.Tokens)*l.act, "moe.act")
	r.b.out = nd.Mem.Alloc(nd.Pool, uint64(l.sh.Tokens)*uint64(l.hidden)*4, "moe.out")
	r.markFlags()
	r.fillAct()
	// Each kernel's work-groups open their context on first use and
	// close it when they finish (a context belongs to one work-group).
	var ctxs []*shmem.Ctx
	ctx := func(wg *gpu.WG) (*shmem.Ctx, error) {
		if ctxs[wg.ID] == nil {
			c, err := dev.CtxCreate(wg)
			if err != nil {
				return nil, err
			}
			ctxs[wg.ID] = c
		}
		return ctxs[wg.ID], nil
	}
	closing := func(k gpu.Kernel, errs []error) gpu.Kernel {
		body := k.Body
		k.Body = func(wg *gpu.WG) {
			body(wg)
			if c := ctxs[wg.ID]; c != nil {
				if err := c.Destroy(); err != nil && errs[wg.ID] == nil {
					errs[wg.ID] = err
				}
			}
		}
		return k
	}
	// put sends n entries of size unit from src to the remote slot dst on
	// pe, the flag word after them travelling with the last put.
	put := func(c *shmem.Ctx, dst, src mem.Addr, n, unit uint64, pe int) error {
		total := n*unit + 8
		if l.ll { // one put per entry, the last one extended by the flag
			for e := uint64(0); e < max(n, 1); e++ {
				off, m := e*unit, unit
				if e+1 >= n {
					m = total - off
				}
				if err := c.PutmemNBI(dst+mem.Addr(off), src+mem.Addr(off), m, pe); err != nil {
					return err
				}
			}
			return nil
		}
		for off := uint64(0); off < total; off += shmemChunk {
			if err := c.PutmemNBI(dst+mem.Addr(off), src+mem.Addr(off), min(shmemChunk, total-off), pe); err != nil {
				return err
			}
		}
		return nil
	}
	dk, derrs := r.persistent("moe.dispatch", 0, func(wg *gpu.WG, i int) error {
		c, err := ctx(wg)
		if err != nil {
			return err
		}
		d := r.peer(i)
		if i == 1 { // work-group 0 also copies the GPU's own entries
			r.pack(me)
			wg.StreamOut(r.packBytes(me), r.packBytes(me)/2)
		}
		r.pack(d)
		wg.VALU(2)
		wg.StreamOut(r.packBytes(d), r.packBytes(d)/2)
		wg.Store64(r.dSendFlag(d), 1)
		if err := put(c, r.b.dRecv+mem.Addr(l.dRecvOff[d*P+me]), r.dSendSlot(d), l.count(me, d), l.de, d); err != nil {
			return err
		}
		return nil
	}, func(wg *gpu.WG, i int) error {
		c, err := ctx(wg)
		if err != nil {
			return err
		}
		s := (me - i + P) % P
		if _, err := c.WaitUntil(r.dRecvFlag(s), 8, shmem.CmpGE, 1); err != nil {
			return err
		}
		if i+W >= P { // the work-group's last peer: its puts complete
			return c.Quiet()
		}
		return nil
	}, nil)
	dk = closing(dk, derrs)
	if err := dev.Cooperative(dk); err != nil {
		dev.Finalize()
		return err
	}
	r.begin(0)
	ctxs = make([]*shmem.Ctx, W)
	nd.Stream.Wait(nd.Stream.Launch(dk))
	if err := firstErr(derrs); err != nil {
		dev.Finalize()
		return err
	}
	if err := r.experts(); err != nil {
		dev.Finalize()
		return err
	}
	r.raise(nd.Mem, r.cSendFlag)
	ck, cerrs := r.persistent("moe.combine", 1, func(wg *gpu.WG, i int) error {
		c, err := ctx(wg)
		if err != nil {
			return err
		}
		s := r.peer(i)
		return put(c, r.b.cRecv+mem.Addr(l.cRecvOff[s*P+me]), r.cSendSlot(s), l.count(s, me), l.ce, s)
	}, func(wg *gpu.WG, i int) error {
		c, err := ctx(wg)
		if err != nil {
			return err
		}
		d := (me - i + P) % P
		if _, err := c.WaitUntil(r.cRecvFlag(d), 8, shmem.CmpGE, 1); err != nil {
			return err
		}
		if i+W >= P {
			return c.Quiet()
		}
		return nil
	}, r.reduceShare)
	ck = closing(ck, cerrs)
	r.begin(1)
	ctxs = make([]*shmem.Ctx, W)
	nd.Stream.Wait(nd.Stream.Launch(ck))
	dev.Finalize()
	return firstErr(cerrs)
}

// deviceVerbs is GNN_GPURDMA (GPU-posted verbs, no shmem layer, as
// NVSHMEM IBGDA or rocSHMEM GDA underneath their put calls): the
// persistent dispatch and combine kernels' work-groups pack their peers'
// entries and post RDMA writes of them themselves — one write per entry in
// low-latency mode, one per peer in throughput mode, the flag word
// travelling with the last — on QP w mod gnn.qps of each peer (work-groups
// sharing a QP take turns), and poll their peers' flags with system-scope
// acquires. Every GPU's buffers are one GPI segment: both receive regions,
// then both send regions. The QPs are drained (gaspi_wait) after every
// work-group's last write, outside the phase's time.
func (r *moeRank) deviceVerbs() error {
	nd, l, me, P := r.nd, r.l, r.me, r.P
	W := r.m.CommWGs
	all := func(x int) []int {
		out := make([]int, 0, P-1)
		for p := range P {
			if p != x {
				out = append(out, p)
			}
		}
		return out
	}
	w, err := r.dvw.get(nd, func(x int) uint64 { return l.dRecv[x] + l.cRecv[x] + l.dSend[x] + l.cSend[x] }, all)
	if err != nil {
		return err
	}
	dv, err := newDVRank(nd, w, W, all(me))
	if err != nil {
		return err
	}
	r.b.dRecv = dv.seg
	r.b.cRecv = r.b.dRecv + mem.Addr(l.dRecv[me])
	r.b.dSend = r.b.cRecv + mem.Addr(l.cRecv[me])
	r.b.cSend = r.b.dSend + mem.Addr(l.dSend[me])
	r.b.act = nd.Mem.Alloc(nd.Pool, uint64(l.sh.Tokens)*l.act, "moe.act")
	r.b.out = nd.Mem.Alloc(nd.Pool, uint64(l.sh.Tokens)*uint64(l.hidden)*4, "moe.out")
	r.markFlags()
	r.fillAct()
	// put writes n entries of size unit at src into offset dst of pe's
	// segment, the flag word after them travelling with the last write.
	put := func(wg *gpu.WG, src mem.Addr, pe int, dst, n, unit uint64) error {
		total := n*unit + 8
		if !l.ll {
			return dv.write(wg, src, pe, dst, total)
		}
		for e := uint64(0); e < max(n, 1); e++ {
			off, m := e*unit, unit
			if e+1 >= n {
				m = total - off
			}
			if err := dv.write(wg, src+mem.Addr(off), pe, dst+off, m); err != nil {
				return err
			}
		}
		return nil
	}
	// drained drains the work-groups' QPs once every work-group of k is
	// done (a grid counter: no write is posted after it).
	drained := func(name string, k gpu.Kernel, errs []error) gpu.Kernel {
		body := k.Body
		cnt := nd.Mem.AllocData(mem.GPU, 8, name+".drained")
		k.Body = func(wg *gpu.WG) {
			body(wg)
			wg.Release(gpu.Device)
			wg.AtomicAdd64(cnt, 1)
			wg.PollUntil(cnt, true, name+" all posted", func(v uint64) bool { return v >= uint64(W) })
			if err := dv.drain(wg); err != nil && errs[wg.ID] == nil {
				errs[wg.ID] = err
			}
		}
		return k
	}
	dk, derrs := r.persistent("moe.dispatch", 0, func(wg *gpu.WG, i int) error {
		d := r.peer(i)
		if i == 1 { // work-group 0 also copies the GPU's own entries
			r.pack(me)
			wg.StreamOut(r.packBytes(me), r.packBytes(me)/2)
		}
		r.pack(d)
		wg.VALU(2)
		wg.StreamOut(r.packBytes(d), r.packBytes(d)/2)
		wg.Store64(r.dSendFlag(d), 1)
		return put(wg, r.dSendSlot(d), d, l.dRecvOff[d*P+me], l.count(me, d), l.de)
	}, func(wg *gpu.WG, i int) error {
		s := (me - i + P) % P
		wg.PollUntil(r.dRecvFlag(s), true, "moe dispatch arrival", func(v uint64) bool { return v >= 1 })
		return nil
	}, nil)
	r.begin(0)
	nd.Stream.Wait(nd.Stream.Launch(drained("moe.dispatch", dk, derrs)))
	if err := firstErr(derrs); err != nil {
		return err
	}
	if err := r.experts(); err != nil {
		return err
	}
	r.raise(nd.Mem, r.cSendFlag)
	ck, cerrs := r.persistent("moe.combine", 1, func(wg *gpu.WG, i int) error {
		s := r.peer(i)
		return put(wg, r.cSendSlot(s), s, l.dRecv[s]+l.cRecvOff[s*P+me], l.count(s, me), l.ce)
	}, func(wg *gpu.WG, i int) error {
		d := (me - i + P) % P
		wg.PollUntil(r.cRecvFlag(d), true, "moe combine arrival", func(v uint64) bool { return v >= 1 })
		return nil
	}, r.reduceShare)
	r.begin(1)
	nd.Stream.Wait(nd.Stream.Launch(drained("moe.combine", ck, cerrs)))
	return firstErr(cerrs)
}
