package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// shmemChunk is the largest single put of the multi-ring allreduce
// ([DEFAULT] allreduce.chunk = 64 KiB, the dissertation's ComP-Net chapter): a step's slice
// goes as several non-blocking puts, the last carrying the sequence word.
const shmemChunk = 64 << 10

// Rings returns the number of rings (work-groups) of the ComP-Net
// multi-ring allreduce on n nodes (the dissertation's ComP-Net chapter): WGs when set, else
// [DEFAULT] min(2 × CUs, ceil(size / (n × 16 KiB))), at least 1.
func (a Allreduce) Rings(n, cus int) int {
	if a.WGs > 0 {
		return a.WGs
	}
	per := int64(n) * 16 * 1024
	w := int((int64(a.Size) + per - 1) / per)
	return max(1, min(w, 2*cus))
}

// shmemInit brings the node's device runtime up with one queue per ring
// and allocates the vector in the symmetric heap.
func (a Allreduce) shmemInit(nd *strategy.Node, l *ringLayout) (*shmem.Device, mem.Addr, error) {
	rt, ok := strategy.Get[*shmem.Runtime](nd)
	if !ok {
		return nil, 0, fmt.Errorf("%s provides no device shmem runtime", nd.Strategy)
	}
	dev, err := rt.Init(l.w)
	if err != nil {
		return nil, 0, err
	}
	base, err := dev.MallocPayload(l.totalSize)
	if err != nil {
		dev.Finalize()
	}
	return dev, base, err
}

// multiRing is the ComP-Net multi-ring intra-kernel allreduce (the dissertation
// §4.4): one kernel of W work-groups; work-group w runs the ring of §4.1
// over slice w of every chunk with work-group w of the neighbours. Per
// step it puts its slice (with the trailing sequence word) to the right
// through the device API, waits with wait_until for the left neighbour's
// slice, and reduces it (reduce-scatter) or keeps it (allgather).
func (a Allreduce) multiRing(nd *strategy.Node, dev *shmem.Device, l *ringLayout, base mem.Addr) (shmem.Report, error) {
	steps := 2 * (l.n - 1)
	i := nd.Rank
	errs := make([]error, l.w)
	k := gpu.Kernel{Name: "allreduce", WGs: l.w, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = a.ringWG(wg, dev, l, base, i, steps)
	}}
	if err := dev.Cooperative(k); err != nil {
		dev.Finalize()
		return shmem.Report{}, err
	}
	nd.Stream.Wait(nd.Stream.Launch(k))
	rep := dev.Finalize()
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (a Allreduce) ringWG(wg *gpu.WG, dev *shmem.Device, l *ringLayout, base mem.Addr, i, steps int) error {
	s := wg.ID
	ctx, err := dev.CtxCreate(wg)
	if err != nil {
		return err
	}
	if ctx.StepCalls() && wg.Proc.CanRunSteps() && !a.loopWGs {
		// The whole ring as one state machine lent the work-group's
		// process (sim.Proc.RunSteps): the same waits as the loop below,
		// without two coroutine switches per call.
		r := shmemRingSteps{ringCursor: ringCursor{wg: wg, l: l, base: base, i: i, s: s, steps: steps, wgSize: a.WGSize}, ctx: ctx}
		wg.Proc.RunSteps(&r)
		if r.err != nil {
			return r.err
		}
		return ctx.Destroy()
	}
	send := func(st int) error {
		p := l.put(base, i, st, s)
		dst := base + mem.Addr(p.RemoteOffset)
		for off := uint64(0); off < p.Length; off += shmemChunk {
			n := min(shmemChunk, p.Length-off)
			if err := ctx.PutmemNBI(dst+mem.Addr(off), p.Src+mem.Addr(off), n, p.Target); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(0); err != nil {
		return err
	}
	for st := range steps {
		if _, err := ctx.WaitUntil(l.flagAddr(base, i, st, s), 8, shmem.CmpEQ, l.expect(st)); err != nil {
			return err
		}
		l.stepWork(wg, base, i, st, s, a.WGSize)
		if st+1 < steps {
			if err := send(st + 1); err != nil {
				return err
			}
		}
	}
	return ctx.Destroy()
}

// shmemRingSteps is ringWG's loop (its puts, waits and step work) as a
// sim.Stepper over the context's step calls (shmem.Ctx.BeginPutmemNBI,
// BeginWaitUntil, TryCall).
type shmemRingSteps struct {
	// (before the cursor, whose step work is large: a step reads these
	// and the cursor's first fields, two cache lines)
	ctx   *shmem.Ctx
	off   uint64   // its next chunk
	begun bool     // a call is begun
	put   rdma.Put // the slice being sent
	err   error
	ringCursor
}

// ringCursor is what the ring work-group's state machines share: where
// in the ring the work-group stands and the step work under way.
type ringCursor struct {
	pc     ringPC
	wg     *gpu.WG
	l      *ringLayout
	base   mem.Addr
	i, s   int
	steps  int
	wgSize int
	st     int // the step whose slice is sent or awaited
	work   stepWorkSteps
}

// startWork begins step st's reduction and stamp, or moves on when the
// step has none; true when that was the last step.
func (c *ringCursor) startWork() bool {
	c.pc = ringWork
	if c.l.stepWorkSet(&c.work, c.wg, c.base, c.i, c.st, c.s, c.wgSize) {
		return false
	}
	return c.nextStep()
}

// nextStep moves on to the next step's send; true when there is none.
func (c *ringCursor) nextStep() bool {
	c.work = stepWorkSteps{}
	c.pc = ringSend
	c.st++
	return c.st == c.steps
}

// ringPC is where shmemRingSteps stands.
type ringPC uint8

const (
	ringSend ringPC = iota // send step st's slice
	ringPut                // its puts, a chunk at a time
	ringWait               // wait for step st's flag
	ringWork               // step st's reduction and stamp
)

// Step implements sim.Stepper.
func (r *shmemRingSteps) Step(p *sim.Proc) bool {
	for !p.Waited() {
		switch r.pc {
		case ringSend:
			r.put = r.l.put(r.base, r.i, r.st, r.s)
			r.off = 0
			r.pc = ringPut
		case ringPut:
			if r.off >= r.put.Length {
				r.pc = ringWait
				continue
			}
			if !r.begun {
				n := min(shmemChunk, r.put.Length-r.off)
				dst := r.base + mem.Addr(r.put.RemoteOffset) + mem.Addr(r.off)
				if r.err = r.ctx.BeginPutmemNBI(dst, r.put.Src+mem.Addr(r.off), n, r.put.Target); r.err != nil {
					return true
				}
				r.begun = true
			}
			if !r.ctx.TryCall(p) {
				continue
			}
			if r.err = r.ctx.CallErr(); r.err != nil {
				return true
			}
			r.begun = false
			r.off += shmemChunk
		case ringWait:
			if !r.begun {
				if r.err = r.ctx.BeginWaitUntil(r.l.flagAddr(r.base, r.i, r.st, r.s), 8, shmem.CmpEQ, r.l.expect(r.st)); r.err != nil {
					return true
				}
				r.begun = true
			}
			if !r.ctx.TryCall(p) {
				continue
			}
			r.begun = false
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
