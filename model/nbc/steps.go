package nbc

import "github.com/gpunetsim/gpunetsim/sim"

// Waiting for a collective as steps. Wait over a StepTransport runs the
// progress loop (the polls and waits of Block, each round's dispatch and
// its Isend and Irecv) as a state machine in the host thread's process
// (sim.Proc.RunSteps) instead of as coroutine code: one coroutine switch
// away and one back per stretch instead of two per wait. A round's local
// ops (Reduce, Copy) may block in ways the transport does not run as
// steps (a parallel region, a kernel), so the machine hands those back to
// the coroutine: Wait runs them there and resumes the machine. The machine
// calls the transport's step forms in the order the coroutine loop calls
// the blocking ones, so both schedule the same events at the same times.

// StepTransport is a Transport whose calls also run as steps of the
// calling thread's process (model/mpi's Begin* and Try).
type StepTransport interface {
	Transport
	// Proc is the process the calls run in (the rank's thread).
	Proc() *sim.Proc
	// BeginIsend, BeginIrecv, BeginBlock and BeginStep start Isend,
	// Irecv, Block and the round's dispatch (Stepper.Step); Try advances
	// the call started last, reporting true once it is over.
	BeginIsend(op Op) (Request, error)
	BeginIrecv(op Op) (Request, error)
	BeginBlock()
	BeginStep()
	Try() bool
}

// waitState is where the step-form Wait stands.
type waitState uint8

const (
	wAdvance  waitState = iota // check the round's requests (advance)
	wBlock                     // Block in progress
	wPost                      // post the next round (post)
	wDispatch                  // the round's dispatch in progress
	wOp                        // start the round's next op
	wOpCall                    // its Isend or Irecv in progress
)

// waiter is the state machine of a Wait over a StepTransport.
type waiter struct {
	h     *Handle
	tr    StepTransport
	state waitState
	op    int // the round's op being started
}

// waitSteps is Wait over a StepTransport.
func (h *Handle) waitSteps(tr StepTransport) error {
	w := &waiter{h: h, tr: tr}
	p := tr.Proc()
	for {
		p.RunSteps(w)
		if h.err != nil || h.round >= h.rounds {
			return h.err
		}
		h.finishRound() // the round's local ops, in the coroutine
		w.state = wPost
	}
}

// hasLocal reports whether the round has local ops (finishRound runs them).
func hasLocal(r Round) bool {
	for _, op := range r {
		if op.Kind == Reduce || op.Kind == Copy {
			return true
		}
	}
	return false
}

// Step implements sim.Stepper: Wait's loop over advance, post and Block.
// It reports done when the collective finished or a round's local ops are
// due.
func (w *waiter) Step(*sim.Proc) bool {
	h, tr := w.h, w.tr
	for {
		switch w.state {
		case wAdvance:
			if h.round >= h.rounds || h.err != nil {
				return true
			}
			if !h.reqsDone() {
				tr.BeginBlock()
				w.state = wBlock
				continue
			}
			if hasLocal(h.cur) {
				return true
			}
			h.round++ // finishRound of a round without local ops
			w.state = wPost
		case wBlock:
			if !tr.Try() {
				return false
			}
			w.state = wAdvance
		case wPost:
			h.reqs = h.reqs[:0]
			if h.round >= h.rounds || h.err != nil {
				w.state = wAdvance
				continue
			}
			tr.BeginStep()
			w.state = wDispatch
		case wDispatch:
			if !tr.Try() {
				return false
			}
			h.cur = h.gen(h.round)
			w.op, w.state = 0, wOp
		case wOp:
			if w.op == len(h.cur) {
				if len(h.reqs) > 0 {
					w.state = wAdvance
					continue
				}
				if hasLocal(h.cur) { // a round of local ops only
					return true
				}
				h.round++
				w.state = wPost
				continue
			}
			if w.startOp(h.cur[w.op]) {
				w.state = wOpCall
			} else {
				w.op++
			}
		case wOpCall:
			if !tr.Try() {
				return false
			}
			w.op++
			w.state = wOp
		}
	}
}

// startOp starts the round's op as post does and reports whether a call
// is in progress; an error ends the collective (the machine goes back to
// advance, which reports done).
func (w *waiter) startOp(op Op) bool {
	h := w.h
	var r Request
	var err error
	switch op.Kind {
	case Send:
		r, err = w.tr.BeginIsend(op)
	case Recv:
		r, err = w.tr.BeginIrecv(op)
	case XtqPut, TaskPost, TaskWait:
		r, err = h.task(op)
	default:
		return false
	}
	if err != nil {
		h.err = opError(h.round, op, err)
		w.state = wAdvance
		return false
	}
	h.reqs = append(h.reqs, r)
	return op.Kind == Send || op.Kind == Recv
}
