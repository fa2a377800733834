package workload

import (
	"bytes"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// PutLatency is the GIO microbenchmark (the GIO slides): WGs
// work-groups on node 0 each send Size bytes to node 1, which detects
// their arrival. Device-shmem strategies (GNN_GIO, GHN, ComP-Net): each
// work-group puts its slice and then a flag word (fence between), the
// target kernel's work-groups wait_until their flag. Kernel-boundary
// (HDN, "Inter-K-Empty"): an empty kernel of WGs work-groups, then the host
// sends all slices with MPI at the kernel boundary, and the target's host
// launches an empty consuming kernel once the receive completed and
// synchronizes it: one boundary before the send and one after the
// receive. Host (CPU): MPI only.
//
// Timing says what the time is. EndToEnd (the zero value) runs from the
// initiator's start (kernel launch, or the MPI call) to the target seeing
// the last byte (Inter-K: its consuming kernel finished). PerWG measures
// the device-shmem implementation as ROC_SHMEM's primitive put tester
// (the ROCm/ROC_SHMEM repository's clients, primitive_tester.cpp and
// tester.cpp) does: each work-group, after its context set-up, runs Skip
// untimed blocking puts, reads its own clock, runs Iters blocking puts
// (putmem: a put then a wait for its completion), calls quiet and reads
// the clock again; the time is the mean over the work-groups of that
// span, per put. It leaves out the kernel launch, the dispatcher's start
// of the work-groups and the context set-up, which the tester does not
// time. (The tester's printed figure divides that mean once more by the
// work-group count, an aggregate time per message that falls as 1/WGs
// while the network is idle; PerWG keeps the per-work-group latency.)
// The kernel-boundary and host implementations have no work-group clock
// and always time end to end.
type PutLatency struct {
	Size   unit.Bytes
	WGs    int
	Timing Timing
	Iters  int // PerWG: timed puts per work-group (at least 1)
	Skip   int // PerWG: untimed warm-up puts per work-group before the clock starts
}

// Timing is the measurement definition of PutLatency.
type Timing int

const (
	// EndToEnd times from the initiator's start to the target seeing the
	// last byte.
	EndToEnd Timing = iota
	// PerWG times each work-group's loop of blocking puts after its own
	// set-up, as ROC_SHMEM's put tester does, per put.
	PerWG
)

// PutLatencyResult is one run.
type PutLatencyResult struct {
	Time     sim.Time
	Verified bool
	GIO      shmem.GIOStats // the initiator's GIO counters (GNN_GIO only)
}

// PutLatencyDef is the microbenchmark's registry entry.
func PutLatencyDef() Def {
	return Def{
		Name:     "putlatency",
		Summary:  "GIO put latency vs size and vs issuing work-groups (the GIO slides)",
		Baseline: strategy.CPU,
		Preset:   "gio", // the GIO slides' put-latency microbenchmark
		Impls: []Impl{
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: putLatencyNA(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			c, err := newCluster(hw, 2, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := PutLatency{Size: 256, WGs: 2}.Run(c, s.Strategy, cfg)
			im, _ := PutLatencyDef().Impl(s)
			return Cell{Impl: im.Name, Nodes: 2, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// putLatencyNA says why the microbenchmark does not run on the
// strategies without an implementation.
func putLatencyNA() map[strategy.Strategy]string {
	const spin = "it times messages GPU work-groups send; the sPIN strategies have no GPU path (they run datatype-unpack handlers on the NIC)"
	return map[strategy.Strategy]string{
		strategy.SpinSpecialized: spin, strategy.SpinHPULocal: spin, strategy.SpinROCP: spin, strategy.SpinRWCP: spin,
		strategy.GDS: "not implemented: GDS sends only at a kernel boundary, where the CP rings pre-posted puts; its per-message path is the latency decomposition's GDS cell, " +
			"and the GIO slides compare GIO only with CPU, Inter-K-Empty and IKN",
		strategy.GPUTN: "not implemented: GPU-TN work-groups would fire one pre-registered triggered put each; its per-message path is the latency decomposition's GPU-TN cell, " +
			"and the GIO slides compare GIO only with CPU, Inter-K-Empty and IKN",
		strategy.XTQ: "it times a put's data reaching the target's memory; XTQ's primitive is a put that launches a kernel on the target (the taskspawn workload times it)",
		strategy.GNNGPURDMA: "not implemented: GPUrdma's GPU threads post RDMA writes and poll CQs; the gpurdma experiment times that path per message size and per QP, " +
			"and the GIO slides compare GIO only with CPU, Inter-K-Empty and IKN",
	}
}

// Run runs the microbenchmark under s on a two-node cluster.
func (p PutLatency) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (PutLatencyResult, error) {
	if len(c.Nodes) != 2 || p.Size < 8 || p.Size%8 != 0 || p.WGs < 1 {
		return PutLatencyResult{}, fmt.Errorf("putlatency: %v per work-group (a multiple of 8 B), %d work-groups on %d nodes: need positive sizes on 2 nodes",
			p.Size, p.WGs, len(c.Nodes))
	}
	if p.Timing == PerWG && (p.Iters < 1 || p.Skip < 0) {
		return PutLatencyResult{}, fmt.Errorf("putlatency: per-work-group timing with %d timed and %d warm-up puts: need at least 1 timed and no negative warm-up", p.Iters, p.Skip)
	}
	im, _, err := PutLatencyDef().implFor(s)
	if err != nil {
		return PutLatencyResult{}, err
	}
	size := uint64(p.Size)
	slot := size + 8 // the slice, then its flag
	var res PutLatencyResult
	var start, end sim.Time
	var srcs, dsts [2]mem.Addr
	perWG := make([]sim.Time, p.WGs) // PerWG: each work-group's timed span
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		if im.Name != "device-shmem" {
			return p.mpi(nd, im.Name, size, &srcs, &dsts, &start, &end)
		}
		rt, ok := strategy.Get[*shmem.Runtime](nd)
		if !ok {
			return fmt.Errorf("%s provides no device shmem runtime", nd.Strategy)
		}
		dev, err := rt.Init(p.WGs)
		if err != nil {
			return err
		}
		buf, err := dev.Malloc(uint64(p.WGs) * slot)
		if err != nil {
			return err
		}
		src, err := dev.Malloc(uint64(p.WGs) * size)
		if err != nil {
			return err
		}
		srcs[nd.Rank], dsts[nd.Rank] = src, buf
		fillPattern(nd.Mem, src, uint64(p.WGs)*size, 3)
		errs := make([]error, p.WGs)
		k := gpu.Kernel{Name: "putlatency", WGs: p.WGs, WGSize: 64, Body: func(wg *gpu.WG) {
			ctx, err := dev.CtxCreate(wg)
			if err != nil {
				errs[wg.ID] = err
				return
			}
			at := buf + mem.Addr(uint64(wg.ID)*slot)
			if nd.Rank == 0 && p.Timing == PerWG {
				perWG[wg.ID], errs[wg.ID] = p.timedLoop(ctx, at, src+mem.Addr(uint64(wg.ID)*size), size)
			} else if nd.Rank == 0 {
				errs[wg.ID] = sendSlice(ctx, at, src+mem.Addr(uint64(wg.ID)*size), size)
			} else {
				_, errs[wg.ID] = ctx.WaitUntil(at+mem.Addr(size), 8, shmem.CmpEQ, 1)
				end = max(end, wg.Now())
			}
			if err := ctx.Destroy(); err != nil && errs[wg.ID] == nil {
				errs[wg.ID] = err
			}
		}}
		if err := dev.Cooperative(k); err != nil {
			return err
		}
		run := nd.Stream.Launch(k)
		nd.Stream.Wait(run)
		if nd.Rank == 0 {
			start = run.Queued
			res.GIO = dev.Finalize().GIO
		} else {
			dev.Finalize()
		}
		return firstErr(errs)
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.Time = end - start
	if p.Timing == PerWG && im.Name == "device-shmem" {
		var sum sim.Time
		for _, t := range perWG {
			sum += t
		}
		res.Time = sum / sim.Time(p.WGs*p.Iters)
	}
	if m0, m1 := c.Nodes[0].Mem, c.Nodes[1].Mem; m0.Functional() {
		for w := range p.WGs {
			stride := slot
			if im.Name != "device-shmem" {
				stride = size // MPI sends the slices back to back
			}
			got := m1.Bytes(dsts[1]+mem.Addr(uint64(w)*stride), int(size))
			if !bytes.Equal(got, m0.Bytes(srcs[0]+mem.Addr(uint64(w)*size), int(size))) {
				return res, fmt.Errorf("putlatency: work-group %d's slice differs at the target", w)
			}
		}
		res.Verified = true
	}
	return res, nil
}

// sendSlice puts one work-group's slice, then (after a fence) its flag.
func sendSlice(ctx *shmem.Ctx, at, src mem.Addr, size uint64) error {
	if err := ctx.PutmemNBI(at, src, size, 1); err != nil {
		return err
	}
	if err := ctx.Fence(); err != nil {
		return err
	}
	if err := ctx.P(at+mem.Addr(size), 1, 8, 1); err != nil {
		return err
	}
	return ctx.Quiet()
}

// timedLoop is one work-group of ROC_SHMEM's put tester: Skip warm-up
// blocking puts, then the clock around Iters blocking puts and a quiet.
// After the timed span it puts the slice's flag (untimed), so the
// target's work-group, which waits for it, ends only after the data.
func (p PutLatency) timedLoop(ctx *shmem.Ctx, at, src mem.Addr, size uint64) (sim.Time, error) {
	wg := ctx.WG()
	var t0 sim.Time
	for i := range p.Skip + p.Iters {
		if i == p.Skip {
			t0 = wg.Now()
		}
		if err := ctx.Putmem(at, src, size, 1); err != nil {
			return 0, err
		}
	}
	if err := ctx.Quiet(); err != nil {
		return 0, err
	}
	span := wg.Now() - t0
	if err := ctx.P(at+mem.Addr(size), 1, 8, 1); err != nil {
		return span, err
	}
	return span, ctx.Quiet()
}

// mpi is the host-driven side: with a stream (HDN) an empty kernel of
// WGs work-groups runs first and the host sends at its boundary.
func (p PutLatency) mpi(nd *strategy.Node, impl string, size uint64, srcs, dsts *[2]mem.Addr, start, end *sim.Time) error {
	n := uint64(p.WGs) * size
	buf := nd.Mem.Alloc(nd.Pool, n, "putlatency")
	srcs[nd.Rank], dsts[nd.Rank] = buf, buf
	fillPattern(nd.Mem, buf, n, 3)
	if nd.Rank == 1 {
		r, err := nd.MPI.Irecv(buf, n, 0, 0)
		if err != nil {
			return err
		}
		nd.MPI.Wait(r)
		if impl == "kernel-boundary" {
			// Inter-K: the data is used by the next kernel, so the
			// message pays a second boundary after the receive (the
			// consuming kernel's launch, run and synchronize).
			nd.Stream.Wait(nd.Stream.Launch(gpu.Kernel{Name: "empty-consumer", WGs: p.WGs, WGSize: 64, Body: func(*gpu.WG) {}}))
		}
		*end = nd.Host.Now()
		return nil
	}
	*start = nd.Host.Now()
	if impl == "kernel-boundary" {
		run := nd.Stream.Launch(gpu.Kernel{Name: "empty", WGs: p.WGs, WGSize: 64, Body: func(*gpu.WG) {}})
		*start = run.Queued
		nd.Stream.Wait(run)
	}
	r, err := nd.MPI.Isend(buf, n, 1, 0)
	if err != nil {
		return err
	}
	nd.MPI.Wait(r)
	return nil
}
