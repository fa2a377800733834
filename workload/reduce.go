package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Reduce is MPI Reduce to node 0 as the libNBC-style schedule of
// the dissertation's XTQ chapter (float64 SUM): the root posts its receive resources and
// sends each other node a zero-length resource-ready message; each sends
// its vector — a two-sided send (CPU, HDN) or a task whose kernel adds it
// into the root's result (XTQ; HSA enqueues the same kernel from the
// root's CPU); the root combines as vectors arrive. The documents run it
// on 2 nodes; more nodes send to the root in turn (a flat tree).
type Reduce struct {
	Size       unit.Bytes // vector bytes (float64)
	WGSize     int
	CPUThreads int
}

// ReduceResult is what one run measured.
type ReduceResult struct {
	Impl     string
	Time     sim.Time // from the root posting its resources to the root holding the sum
	Verified bool
}

// ReduceDef is the Reduce's registry entry.
func ReduceDef() Def {
	return Def{
		Name:          "reduce",
		Summary:       "MPI Reduce (float64 SUM) to one root with a zero-length resource-ready sync (the dissertation's XTQ chapter)",
		Baseline:      strategy.CPU,
		Preset:        "xtq", // the XTQ chapter's Reduce (Table 4.1)
		Impls:         AccumulateDef().Impls,
		NotApplicable: reduceNotApplicable(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			const nodes = 3
			c, err := newCluster(hw, nodes, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := Reduce{Size: 8 * unit.KiB, WGSize: 256, CPUThreads: hw.CPU.Cores}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: nodes, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// reduceInput is element j of node r's vector (multiples of 1/2: exact
// sums in any order).
func reduceInput(r, j int) float64 { return float64((r*5+j*3)%16) / 2 }

// Tags of the two-sided Reduce.
const (
	tagReady  = 3
	tagVector = 4
)

// Run runs the Reduce under s on cluster c (at least 2 nodes).
func (rd Reduce) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (ReduceResult, error) {
	n := len(c.Nodes)
	switch {
	case n < 2:
		return ReduceResult{}, fmt.Errorf("reduce on %d nodes: need at least 2", n)
	case rd.Size < 8 || rd.Size%8 != 0 || rd.Size > 64*unit.MiB:
		return ReduceResult{}, fmt.Errorf("reduce size %v: must be a multiple of 8 bytes (float64) in [8B, 64MiB]", rd.Size)
	case rd.WGSize < 1 || rd.CPUThreads < 1:
		return ReduceResult{}, fmt.Errorf("reduce: wg size %d, cpu threads %d: must be ≥ 1", rd.WGSize, rd.CPUThreads)
	}
	im, _, err := ReduceDef().implFor(s)
	if err != nil {
		return ReduceResult{}, err
	}
	size := uint64(rd.Size)
	var start, end sim.Time
	var result mem.Addr
	var vw verbsWorld
	bases := newPeerBases(n)
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		switch im.Name {
		case "device-shmem": // the vectors live in the symmetric heap
			return rd.shmem(nd, &result, &start, &end)
		case "device-verbs": // the vectors live in GPI segments
			return rd.verbs(nd, &vw, &result, &start, &end)
		case "triggered", "stream-triggered": // the vectors live in the exposed slots
			return rd.triggered(nd, im.Name == "stream-triggered", bases, &result, &start, &end)
		}
		vec := nd.Mem.Alloc(nd.Pool, size, "reduce.vector")
		fillF64(nd.Mem, vec, size, func(j int) float64 { return reduceInput(nd.Rank, j) })
		if nd.Rank == 0 {
			result = vec
		}
		if im.Name == "remote-tasks" {
			return rd.remote(nd, vec, &start, &end)
		}
		return rd.twoSided(nd, vec, &start, &end)
	})
	if err := runTasks(c, g); err != nil {
		return ReduceResult{}, err
	}
	res := ReduceResult{Impl: im.Name, Time: end - start}
	if m := c.Nodes[0].Mem; m.Functional() {
		got := f64(m.Bytes(result, int(size)))
		for j := range got {
			want := 0.0
			for r := range n {
				want += reduceInput(r, j)
			}
			if got[j] != want {
				return res, fmt.Errorf("%s reduce on %d nodes: element %d = %v, want %v (serial sum)", s, n, j, got[j], want)
			}
		}
		res.Verified = true
	}
	return res, nil
}

// remote: the root registers the accumulate kernel on its vector, then
// (timed) posts one receive buffer for every vector and notifies each
// sender; a sender waits for the notification and sends its vector as a
// task; the root waits for the last kernel's signal.
func (rd Reduce) remote(nd *strategy.Node, vec mem.Addr, start, end *sim.Time) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	size := uint64(rd.Size)
	task := xtq.Task{Target: 0, Kernel: kernelAcc, Queue: taskQueue, Grid: taskGrid(nd, size*2, rd.WGSize), WGSize: rd.WGSize,
		Args: []uint64{0, 0, 0, size}, Payload: vec, PayloadLen: size}
	if nd.Rank != 0 {
		rt.Barrier()
		rt.WaitNotify(xtq.ChanSync, 1, "resource-ready sync")
		return rt.Put(task)
	}
	if err := initTaskQueue(rt); err != nil {
		return err
	}
	senders := uint64(nd.Size - 1)
	sig := rt.NewSignal("reduce.signal", senders)
	if _, err := rt.RegisterKernel(kernelAcc, accCode(), vec, sig); err != nil {
		return err
	}
	bytes := senders * (task.CmdLen() + size)
	recv := nd.Mem.Alloc(mem.Host, bytes, "reduce.recv")
	rt.Barrier()
	*start = nd.Host.Now()
	rt.PostBuffer(recv, bytes)
	for p := 1; p < nd.Size; p++ {
		rt.Notify(p, xtq.ChanSync)
	}
	rt.SignalWait(sig, "the reduction kernels", func(v uint64) bool { return v == 0 })
	*end = nd.Host.Now()
	return nil
}

// twoSided: the root pre-posts a receive per sender into a staging buffer,
// sends the zero-length ready messages, and combines each vector in
// sender order, on its cores (CPU) or with a kernel it launches (HDN).
func (rd Reduce) twoSided(nd *strategy.Node, vec mem.Addr, start, end *sim.Time) error {
	size := uint64(rd.Size)
	flag := nd.Mem.Alloc(mem.Host, 8, "reduce.ready")
	if err := mpiBarrierAll(nd); err != nil {
		return err
	}
	if nd.Rank != 0 {
		ready, err := nd.MPI.Irecv(flag, 0, 0, tagReady)
		if err != nil {
			return err
		}
		nd.MPI.Wait(ready)
		r, err := nd.MPI.Isend(vec, size, 0, tagVector)
		if err != nil {
			return err
		}
		nd.MPI.Wait(r)
		return nil
	}
	*start = nd.Host.Now()
	stage := make([]mem.Addr, nd.Size)
	recvs := make([]*mpi.Request, nd.Size)
	var sends []*mpi.Request
	for p := 1; p < nd.Size; p++ {
		stage[p] = nd.Mem.Alloc(nd.Pool, size, "reduce.stage")
		r, err := nd.MPI.Irecv(stage[p], size, p, tagVector)
		if err != nil {
			return err
		}
		recvs[p] = r
	}
	for p := 1; p < nd.Size; p++ {
		r, err := nd.MPI.Isend(flag, 0, p, tagReady)
		if err != nil {
			return err
		}
		sends = append(sends, r)
	}
	for p := 1; p < nd.Size; p++ {
		nd.MPI.Wait(recvs[p])
		nd.Host.Instr(nd.SW.NBCStep)
		if nd.Stream == nil {
			addF64(nd.Mem, vec, stage[p], size)
			nd.Host.ComputeOn(rd.CPUThreads, reduceInto(vec, stage[p], size)...)
		} else {
			nd.Stream.Wait(nd.Stream.Launch(accKernel(nd, vec, stage[p], size, rd.WGSize)))
		}
	}
	nd.MPI.Waitall(sends...)
	*end = nd.Host.Now()
	return nil
}

// mpiBarrierAll is a barrier over MPI: every node sends a zero-length
// message to node 0, which answers each once all arrived (tag 0).
func mpiBarrierAll(nd *strategy.Node) error {
	if nd.Rank != 0 {
		return mpiBarrier(nd, 0)
	}
	buf := nd.Mem.Alloc(mem.Host, 8, "barrier")
	var reqs []*mpi.Request
	for p := 1; p < nd.Size; p++ {
		r, err := nd.MPI.Irecv(buf, 0, p, 0)
		if err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	nd.MPI.Waitall(reqs...)
	reqs = reqs[:0]
	for p := 1; p < nd.Size; p++ {
		s, err := nd.MPI.Isend(buf, 0, p, 0)
		if err != nil {
			return err
		}
		reqs = append(reqs, s)
	}
	nd.MPI.Waitall(reqs...)
	return nil
}
