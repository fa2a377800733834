package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// verbsRing is the run-wide state of the device-verbs ring allreduce: a
// GPI world whose segment 0 is every node's allreduce region (GPU memory,
// registered) and queue s connects each node to its right neighbour for
// ring s. Run builds it before the run (prebuild), as the first node's
// setup would: the nodes of a partitioned run only read it.
type verbsRing struct{ sharedWorld }

func (v *verbsRing) get(nd *strategy.Node, l *ringLayout) (*gpi.World, error) {
	return v.world(nd, gpuSides(l.n), 1, v.wire(l))
}

// prebuild builds the world over d before the run.
func (v *verbsRing) prebuild(d *verbs.Domain, l *ringLayout) {
	v.sharedWorld.prebuild(d, gpuSides(l.n), 1, v.wire(l))
}

func (v *verbsRing) wire(l *ringLayout) func(*gpi.World) error {
	return func(w *gpi.World) error {
		for r := range l.n {
			w.SegmentCreate(0, r, l.totalSize)
		}
		for s := range l.w {
			for r := range l.n {
				if err := w.ConnectPair(s, r, mod(r+1, l.n)); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// verbsRingRun is the GPUrdma ring allreduce (device verbs, no CPU on the
// path): one kernel of W work-groups, QP per threadblock (gnn.qp_per =
// block): work-group w runs the ring of the dissertation over slice w of
// every chunk. Per step its leader posts one RDMA write of the slice and
// its trailing sequence word to the right neighbour through the device
// GPI subset (WQE build, system fence, doorbell: model/verbs costs); the
// RC transport writes the bytes in order, so the word lands last. It then
// polls its own sequence word in GPU memory with system-scope acquires
// (NIC writes may leave a stale L2 copy unless the L2 is memory-side,
// gpu.l2_memory_side) and reduces (reduce-scatter) or
// keeps (allgather) the slice. gaspi_wait drains the queue at the end.
func (a Allreduce) verbsRingRun(nd *strategy.Node, w *gpi.World, l *ringLayout, base mem.Addr) error {
	steps := 2 * (l.n - 1)
	errs := make([]error, l.w)
	dev := w.Device(nd.Rank)
	k := gpu.Kernel{Name: "allreduce", WGs: l.w, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = a.verbsRingWG(wg, dev, l, base, nd.Rank, steps)
	}}
	nd.Stream.Wait(nd.Stream.Launch(k))
	return firstErr(errs)
}

func (a Allreduce) verbsRingWG(wg *gpu.WG, dev *gpi.Device, l *ringLayout, base mem.Addr, i, steps int) error {
	s := wg.ID
	if wg.Proc.CanRunSteps() && !a.loopWGs {
		// The ring as one state machine lent the work-group's process
		// (sim.Proc.RunSteps): the same waits as the loop below, without
		// two coroutine switches per call. A write that must wait for room
		// in its QP hands back to the coroutine (gpi.Device.Write).
		r := verbsRingSteps{ringCursor: ringCursor{wg: wg, l: l, base: base, i: i, s: s, steps: steps, wgSize: a.WGSize}, dev: dev}
		for {
			wg.Proc.RunSteps(&r)
			if r.err != nil {
				return r.err
			}
			if !r.blocked {
				break
			}
			r.blocked = false
			p := l.put(base, i, r.st, s)
			if err := dev.Write(wg, 0, uint64(p.Src-base), p.Target, 0, p.RemoteOffset, p.Length, s); err != nil {
				return err
			}
			r.pc = ringWait
		}
		if err := dev.Wait(wg, s); err != nil {
			return fmt.Errorf("allreduce: node %d ring %d: %w", i, s, err)
		}
		return nil
	}
	send := func(st int) error {
		p := l.put(base, i, st, s)
		return dev.Write(wg, 0, uint64(p.Src-base), p.Target, 0, p.RemoteOffset, p.Length, s)
	}
	if err := send(0); err != nil {
		return err
	}
	for st := range steps {
		want := l.expect(st)
		wg.PollUntil(l.flagAddr(base, i, st, s), true, "allreduce sequence word", func(v uint64) bool { return v == want })
		l.stepWork(wg, base, i, st, s, a.WGSize)
		if st+1 < steps {
			if err := send(st + 1); err != nil {
				return err
			}
		}
	}
	if err := dev.Wait(wg, s); err != nil {
		return fmt.Errorf("allreduce: node %d ring %d: %w", i, s, err)
	}
	return nil
}

// verbsRingSteps is verbsRingWG's loop (its writes, polls of the sequence
// words and step work) as a sim.Stepper. It stops with blocked set when
// step st's write must wait for room in its QP: the coroutine writes, then
// runs it again from the wait.
type verbsRingSteps struct {
	ringCursor
	dev     *gpi.Device
	post    sim.Stepper // the write being posted
	want    uint64
	cond    func(uint64) bool // the poll's condition (v == want), made once
	blocked bool
	err     error
}

// Step implements sim.Stepper.
func (r *verbsRingSteps) Step(p *sim.Proc) bool {
	if r.cond == nil {
		r.cond = func(v uint64) bool { return v == r.want }
	}
	for !p.Waited() {
		switch r.pc {
		case ringSend:
			pt := r.l.put(r.base, r.i, r.st, r.s)
			r.post, r.err = r.dev.WriteSteps(r.wg, 0, uint64(pt.Src-r.base), pt.Target, 0, pt.RemoteOffset, pt.Length, r.s)
			if r.err != nil {
				return true
			}
			if r.post == nil {
				r.blocked = true
				return true
			}
			r.pc = ringPut
		case ringPut:
			if !r.post.Step(p) {
				continue
			}
			r.post = nil
			r.pc = ringWait
		case ringWait:
			r.want = r.l.expect(r.st)
			if _, ok := r.wg.TryPollUntil(r.l.flagAddr(r.base, r.i, r.st, r.s), true, "allreduce sequence word", r.cond); !ok {
				continue
			}
			if r.startWork() {
				return true
			}
		case ringWork:
			if !r.work.Step(p) {
				continue
			}
			if r.nextStep() {
				return true
			}
		}
	}
	return false
}
