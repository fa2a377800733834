package nbc

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Waiting for a collective as steps. Wait over a StepTransport runs the
// progress loop (the polls and waits of Block, each round's dispatch and
// its Isend and Irecv) as a state machine in the host thread's process
// (sim.Proc.RunSteps) instead of as coroutine code: one coroutine switch
// away and one back per stretch instead of two per wait. A round's local
// ops (Reduce, Copy) run as steps too when a LocalStepper takes them (a
// reduction on the host's cores); others (a kernel launch and its wait)
// go back to the coroutine: Wait runs them there and resumes the machine. The machine
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

// StepTaskTransport is a StepTransport whose remote-task ops (XtqPut,
// TaskPost, TaskWait) also run as steps: BeginTask starts Task(op), and
// Try advances it. Over a StepTransport that is not one, a schedule with
// remote-task ops cannot be waited for as steps.
type StepTaskTransport interface {
	StepTransport
	BeginTask(op Op) (Request, error)
}

// LocalStepper runs a schedule's local ops as steps of the thread's
// process too (a reduction on the host's cores: cpu.Thread.BeginCompute),
// so that Wait need not go back to the coroutine for them.
type LocalStepper interface {
	// BeginLocal starts op (a Reduce or Copy) and reports whether it runs
	// as steps; if not, Wait runs it with the blocking local function,
	// in the coroutine.
	BeginLocal(op Op) bool
	// TryLocal advances the op begun last, reporting true once it is over.
	TryLocal() bool
}

// WithLocalSteps makes Wait run the local ops that ls accepts as steps
// (their effects as the local function's); it returns h.
func (h *Handle) WithLocalSteps(ls LocalStepper) *Handle {
	h.localSteps = ls
	return h
}

// waitState is where the step-form Wait stands.
type waitState uint8

const (
	wAdvance   waitState = iota // check the round's requests (advance)
	wBlock                      // Block in progress
	wPost                       // post the next round (post)
	wDispatch                   // the round's dispatch in progress
	wOp                         // start the round's next op
	wOpCall                     // its Isend or Irecv in progress
	wLocal                      // run the round's next local op
	wLocalCall                  // a local op in progress as steps
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
		h.local(h.cur[w.op]) // a local op that does not run as steps
		w.op++
		w.state = wLocal
	}
}

// Step implements sim.Stepper: Wait's loop over advance, finishRound,
// post and Block. It reports done when the collective finished or a
// local op must run in the coroutine.
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
			w.op, w.state = 0, wLocal // finishRound
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
				w.op, w.state = 0, wLocal // a round of local ops only
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
		case wLocal:
			if w.op == len(h.cur) {
				h.round++
				w.state = wPost
				continue
			}
			op := h.cur[w.op]
			switch {
			case op.Kind != Reduce && op.Kind != Copy:
				w.op++
			case h.localSteps != nil && h.localSteps.BeginLocal(op):
				w.state = wLocalCall
			default:
				return true // Wait runs it in the coroutine
			}
		case wLocalCall:
			if !h.localSteps.TryLocal() {
				return false
			}
			w.op++
			w.state = wLocal
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
		st, ok := w.tr.(StepTaskTransport)
		if !ok {
			err = fmt.Errorf("transport %T cannot run %s ops as steps", w.tr, op.Kind)
			break
		}
		r, err = st.BeginTask(op)
	default:
		return false
	}
	if err != nil {
		h.err = opError(h.round, op, err)
		w.state = wAdvance
		return false
	}
	h.reqs = append(h.reqs, r)
	return true
}
