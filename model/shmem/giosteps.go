package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// GIO's non-blocking put as steps. The device post path (gioChan.post) is
// about fifteen waits per put: the PPB flush's MMIO write, a CQ poll for
// the oldest slot once the QP is full (an L1 invalidate and a load that
// samples, then returns), the slot claim, a template stall now and then,
// four WQE fields (a store cost and the store each), the system release,
// the doorbell record and the doorbell; as coroutine code each wait is two
// switches. gioPutSteps does what Submit and the call's barrier do, one
// wait per step: the same events at the same times in the same order.
// QP sets shared by several contexts (shmem.gio.qps_per_peer) keep the
// coroutine code (their ticket locks).

// gioPC is where a stepped GIO put stands.
type gioPC uint8

const (
	gioLocal     gioPC = iota // a put to this PE: the access's latency
	gioLocalDone              // then the copy
	gioFlush                  // the PPB flush
	gioFull                   // is the QP full?
	gioWait                   // poll the CQ for its oldest slot
	gioClaim                  // claim the slot
	gioStall                  // is its template there?
	gioStallWait              // wait for the templater
	gioPost                   // the WQE's fields, the release and the doorbell
	gioPosting                // (under way)
	gioBarrier                // the call's work-group barrier
	gioDone
)

// gioPutSteps is gioChan.Submit of a non-blocking put followed by the
// call's work-group barrier (Ctx.submit), as steps.
type gioPutSteps struct {
	ch   *gioChan
	r    *Request
	g    gioWQE
	pc   gioPC
	k    uint64   // the claimed slot
	t0   sim.Time // a template stall's start
	wait verbs.CQWait
	post verbs.FieldsRing
	err  error
	// flushEnd is the key of the flush's wake-up when it is a mark
	// (claimAtFlushEnd).
	flushEnd sim.Mark
}

// claimAtFlushEnd makes the wake-up at the PPB flush's end sf a mark,
// when all that wake-up would do is begin the slot claim's wait: the QP
// is not full (its posted and completed counts change only in this
// work-group's own steps, which sleep until then) and the slot's
// connection was posted to before (its bit only ever goes from clear to
// set; a first post may materialize templates as of sf, so it keeps the
// event). The claim's wait is then queued as the wake-up's event would
// have queued it, with the number the run takes at the mark's key
// (sim.Mark). False, with nothing done, otherwise (and when sf is not
// ahead: FlushPPB does not wait then); the caller sleeps until sf.
// Tests: TestFlushMarkMatchesEvent.
func (st *gioPutSteps) claimAtFlushEnd(sp *sim.Proc, sf sim.Time) bool {
	ch := st.ch
	c, wg := ch.c, ch.wg
	b := c.b
	qp, pe := st.g.qp, st.r.PE
	if b.flushEvents || sf <= wg.Now() || qp.Outstanding() >= uint64(qp.Depth()) {
		return false
	}
	if i := c.q*b.dev.npes + pe; b.posted[i/64]&(1<<(i%64)) == 0 {
		return false
	}
	wg.Engine().SetMark(&st.flushEnd, sf)
	sp.SleepAtMark(&st.flushEnd, sf+b.claimTime(wg)) // gioClaim's wait
	return true
}

// gioDynamic are the WQE words the device writes (opcode, size with lkey,
// source, destination); the templater wrote the others.
var gioDynamic = []int{0, 1, 2, 3}

// stepPut reports whether r can run as steps on the channel: a
// non-blocking put on a QP set of its own.
func (ch *gioChan) stepPut(r *Request) bool {
	return !ch.c.b.shared && r.Op == OpPut && !r.Blocking
}

// begin starts r (stepPut holds) on ch; an error of the call's checks is
// reported once the steps are over, after the barrier, as Submit's is.
func (st *gioPutSteps) begin(ch *gioChan, r *Request) {
	wait := st.wait // keeps its read closure
	*st = gioPutSteps{ch: ch, r: r, wait: wait}
	g, err := ch.wqe(r)
	st.g = g
	switch {
	case err != nil:
		st.err, st.pc = err, gioBarrier
	case g.qp == nil:
		st.pc = gioLocal
	default:
		st.pc = gioFlush
		if cn := ch.c.conns.get(r.PE); !cn.cq.Steppable() {
			panic(fmt.Sprintf("gio: PE %d's CQ to PE %d is not in GPU memory", ch.c.b.dev.pe, r.PE))
		}
	}
}

// Step implements sim.Stepper.
func (st *gioPutSteps) Step(sp *sim.Proc) bool {
	ch := st.ch
	c, wg := ch.c, ch.wg
	b := c.b
	qp, pe := st.g.qp, st.r.PE
	for !sp.Waited() {
		switch st.pc {
		case gioLocal:
			st.pc = gioLocalDone
			wg.Sleep(wg.GPU().MissLatency())
		case gioLocalDone:
			ch.local(st.r, st.g.remote)
			st.pc = gioBarrier
		case gioFlush:
			st.pc = gioFull
			if st.g.gpuSource && b.spec.PPBLines > 0 && !b.spec.SkipPPBFlush {
				sf := qp.BeginFlushPPB(wg)
				b.stats.PPBFlushes++
				if st.claimAtFlushEnd(sp, sf) {
					st.pc = gioStall
					continue
				}
				wg.SleepUntil(sf)
			}
		case gioFull:
			st.pc = gioClaim
			if qp.Outstanding() >= uint64(qp.Depth()) {
				st.wait.Start(c.conns.get(pe).cq, qp, wg, uint64(qp.Depth()-1))
				st.wait.InvEvents = b.flushEvents
				st.pc = gioWait
			}
		case gioWait:
			if !st.wait.Step(sp) {
				continue
			}
			b.work.Notify() // slots freed: more templating
			st.pc = gioClaim
			if e, ok := st.wait.Result(); !ok {
				st.err = fmt.Errorf("%w: GIO work request on QP %d completed with %v", ErrFailed, e.QPN, e.Status)
				st.pc = gioBarrier
			}
		case gioClaim:
			if i := c.q*b.dev.npes + pe; b.posted[i/64]&(1<<(i%64)) == 0 {
				if b.closed || b.spec.TemplateAtInit {
					b.materialize(c, pe, i)
				}
				b.posted[i/64] |= 1 << (i % 64)
			}
			st.pc = gioStall
			wg.Sleep(b.claimTime(wg)) // claim the slot: device-scope atomic on the producer index
		case gioStall:
			st.k = qp.Posted()
			st.pc = gioPost
			if uint64(c.templated.at(pe)) <= st.k {
				b.stats.TemplateStalls++
				st.t0 = wg.Now()
				b.work.Notify()
				st.pc = gioStallWait
			}
		case gioStallWait:
			if uint64(c.templated.at(pe)) <= st.k {
				wg.Wait(&b.work, "gio: template of the next slot")
				continue
			}
			b.stats.StallTime += wg.Now() - st.t0
			st.pc = gioPost
		case gioPost:
			if st.err = st.post.Start(qp, wg, st.g.w, gioDynamic); st.err != nil {
				st.pc = gioBarrier // (PostFields's error; the poll above left a slot)
				continue
			}
			st.pc = gioPosting
			fallthrough
		case gioPosting:
			if !st.post.Step(sp) {
				continue
			}
			b.stats.Posts++
			st.pc = gioBarrier
		case gioBarrier:
			wg.Barrier()
			st.pc = gioDone
		default:
			return true
		}
	}
	return false
}

// gioSteps returns the work-group's GIO channel when its non-blocking
// puts can run as steps (a QP set of its own), or nil.
func (c *Ctx) gioSteps() *gioChan {
	t, ok := c.ch.(*timedChannel)
	if !ok {
		return nil
	}
	ch, ok := t.ch.(*gioChan)
	if !ok || ch.c.b.shared {
		return nil
	}
	return ch
}
