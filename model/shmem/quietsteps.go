package shmem

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A host helper's quiet as steps. quietPending (step 5) checks each
// context with pending entries: the library's quiet instructions, the
// context's mutex (its instructions, a test-and-set), a read of the CT
// copy through the helper's cache and the unlock, five waits per context,
// then completes the entries of the contexts done. For a helper whose
// polls may stand in marks (ghost.go) the check runs as steps of
// pollSteps, so that a stretch of marks may run through quiets that find
// nothing done and wake at any of their events; the completion, rare,
// stays the coroutine's (completeQuieted). The same waits in the same
// order as quietPending and lib.quiet.

// quietStage is where a stepped quiet stands in its current context.
type quietStage uint8

const (
	qsInstr  quietStage = iota // the library's quiet instructions
	qsMutex                    // the mutex's instructions
	qsRMW                      // its test-and-set
	qsSpin                     // a failed test-and-set's spin
	qsCT                       // the CT copy read through the cache
	qsUnlock                   // the mutex released
)

// quietSteps is a stepped quiet: the contexts with pending entries in the
// order of their first entry, the entries of each, what the check found.
type quietSteps struct {
	order  []int
	n      []int
	done   []bool
	failed []bool
	i      int // the context being checked
	st     quietStage
	any    bool
	start  sim.Time
	succ   uint64 // the CT copy's success count, read when its read began
}

// perQueue lists the queues of the pending entries in the order they
// first appear and how many entries each has, reusing order's and n's
// storage.
func perQueue(order, n []int, pending []pend) ([]int, []int) {
	order, n = order[:0], n[:0]
	for _, p := range pending {
		k := 0
		for k < len(order) && order[k] != p.q.idx {
			k++
		}
		if k == len(order) {
			order, n = append(order, p.q.idx), append(n, 0)
		}
		n[k]++
	}
	return order, n
}

// quietBegin starts the stepped quiet of s.pending's contexts.
func (ps *pollSteps) quietBegin() {
	s, qt := ps.s, &ps.qt
	qt.order, qt.n = perQueue(qt.order, qt.n, s.pending)
	qt.done, qt.failed = append(qt.done[:0], make([]bool, len(qt.order))...), append(qt.failed[:0], make([]bool, len(qt.order))...)
	qt.i, qt.any, qt.start = 0, false, s.now()
	ps.quietCtx()
}

// quietCtx begins the check of context qt.order[qt.i].
func (ps *pollSteps) quietCtx() {
	qt := &ps.qt
	qt.st = qsInstr
	ps.g.h.beginInstr(ps.s.b.sw.ShmemQuiet * qt.n[qt.i])
}

// quietStep advances the stepped quiet: true once every context is
// checked (qt.any says whether one was done), false after a wait (or to be
// called again at once).
func (ps *pollSteps) quietStep() bool {
	s, qt, h := ps.s, &ps.qt, ps.g.h
	l := s.b.lib
	if qt.st == qsInstr {
		if !h.tryInstr() {
			return false
		}
	}
	ctx := l.ctx(qt.order[qt.i]) // after the quiet instructions, as lib.quiet asks for it (a quiet entry's context is made here)
	switch qt.st {
	case qsInstr:
		if !l.multiple {
			ps.quietCT(ctx)
			return false
		}
		h.beginInstr(l.b.sw.Mutex)
		qt.st = qsMutex
	case qsMutex:
		if !h.tryInstr() {
			return false
		}
		l.locks++
		h.beginRMW(ctx.state, 1)
		qt.st = qsRMW
	case qsRMW:
		if !h.tryOp() {
			return false
		}
		if h.rmwOld() != 0 {
			l.spins++
			h.beginInstr(l.b.sw.ConsumerPoll)
			qt.st = qsSpin
			return false
		}
		ps.quietCT(ctx)
	case qsSpin:
		if !h.tryInstr() {
			return false
		}
		h.beginRMW(ctx.state, 1)
		qt.st = qsRMW
	case qsCT:
		if !h.t.Try() {
			return false
		}
		fail := h.m.Load64(ctx.mirror + 8) // same line
		if qt.succ+fail >= ctx.issued {
			ctx.bounce = append(ctx.bounce, ctx.inUse...)
			ctx.inUse = ctx.inUse[:0]
			qt.done[qt.i], qt.failed[qt.i] = true, fail > 0
			qt.any = true
		}
		if l.multiple {
			h.beginLocal(ctx.state, 0)
			qt.st = qsUnlock
			return false
		}
		return ps.quietNext()
	case qsUnlock:
		if !h.tryOp() {
			return false
		}
		return ps.quietNext()
	}
	return false
}

// quietCT begins the CT copy's read (hostPort.cached as a step).
func (ps *pollSteps) quietCT(ctx *lctx) {
	qt, h := &ps.qt, ps.g.h
	qt.succ = h.beginCached(ctx.mirror)
	qt.st = qsCT
}

// quietNext moves to the next context: true when there is none.
func (ps *pollSteps) quietNext() bool {
	qt := &ps.qt
	qt.i++
	if qt.i == len(qt.order) {
		return true
	}
	ps.quietCtx()
	return false
}

// quietDone hands the stepped quiet's findings to completeQuieted.
func (ps *pollSteps) quietDone() (done, failed map[int]bool) {
	qt := &ps.qt
	done, failed = map[int]bool{}, map[int]bool{}
	for k, c := range qt.order {
		done[c], failed[c] = qt.done[k], qt.failed[k]
	}
	return done, failed
}

// beginCached is cached as a step: the word read now, the thread's run of
// a hit or a miss begun.
func (h *hostPort) beginCached(a mem.Addr) uint64 { return h.cachedRead(a, true) }
