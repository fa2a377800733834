package nbc

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// Kind is what an op does.
type Kind uint8

// Op kinds.
const (
	Send   Kind = iota // send Len bytes at Addr to Peer
	Recv               // receive up to Len bytes into Addr from Peer
	Reduce             // combine Src into Addr (Len bytes), a local op
	Copy               // copy Src to Addr (Len bytes), a local op
)

var kindNames = [...]string{"send", "recv", "reduce", "copy", "xtqput", "taskpost", "taskwait"}

// String returns the printed name of a Kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Op is one schedule operation. Chunk names the algorithm's data unit; Step
// is the round index, used as the message tag.
type Op struct {
	Kind  Kind
	Peer  int
	Chunk int
	Step  int
	Addr  mem.Addr // send source, receive or reduce destination
	Src   mem.Addr // reduce/copy source
	Len   uint64
	// Offset is where a one-sided op lands in the peer's buffer: the
	// element offset an XtqPut's kernel updates, or a put's destination.
	Offset uint64
}

// Round is a set of ops that may proceed concurrently.
type Round []Op

// Schedule is a collective's rounds in order.
type Schedule []Round

// Sends returns the number of send ops in the schedule.
func (s Schedule) Sends() int {
	n := 0
	for _, r := range s {
		for _, op := range r {
			if op.Kind == Send {
				n++
			}
		}
	}
	return n
}

// Request is an outstanding transport operation.
type Request interface{ Done() bool }

// Transport is the two-sided layer a schedule runs over.
type Transport interface {
	// Isend and Irecv start the op's message; the tag is op.Step.
	Isend(op Op) (Request, error)
	Irecv(op Op) (Request, error)
	// Poll handles at most one pending completion without blocking.
	Poll()
	// Block waits until at least one completion was handled.
	Block()
}

// Handle is a running nonblocking collective.
type Handle struct {
	rounds int
	gen    func(i int) Round
	cur    Round // the round in progress, gen(round)
	tr     Transport
	local  func(op Op)
	round  int
	reqs   []Request
	err    error
	// localSteps runs local ops as steps in Wait (WithLocalSteps).
	localSteps LocalStepper
}

// Start begins executing sched over tr; local runs the round's Reduce and
// Copy ops (it may block the calling host thread, e.g. on a kernel) after
// the round's messages completed.
func Start(tr Transport, local func(op Op), sched Schedule) *Handle {
	return StartRounds(tr, local, len(sched), func(i int) Round { return sched[i] })
}

// StartRounds is Start for a schedule of n rounds made one round at a
// time: round(i) is called once, when round i starts, so a collective on
// thousands of nodes need not hold every node's whole schedule at once.
// The handle is done with a round when it asks for the next, so round(i)
// may return the storage of round i-1.
func StartRounds(tr Transport, local func(op Op), n int, round func(i int) Round) *Handle {
	h := &Handle{rounds: n, gen: round, tr: tr, local: local}
	h.post()
	return h
}

// Stepper is a Transport that charges the schedule's dispatch of a round
// (libNBC's schedule step, sw.nbc_step) on the host thread running it.
type Stepper interface {
	Step()
}

func (h *Handle) post() {
	h.reqs = h.reqs[:0]
	for h.round < h.rounds && h.err == nil {
		if st, ok := h.tr.(Stepper); ok {
			st.Step()
		}
		h.cur = h.gen(h.round)
		for _, op := range h.cur {
			var r Request
			var err error
			switch op.Kind {
			case Send:
				r, err = h.tr.Isend(op)
			case Recv:
				r, err = h.tr.Irecv(op)
			case XtqPut, TaskPost, TaskWait:
				r, err = h.task(op)
			default:
				continue
			}
			if err != nil {
				h.err = opError(h.round, op, err)
				return
			}
			h.reqs = append(h.reqs, r)
		}
		if len(h.reqs) > 0 {
			return
		}
		h.finishRound() // a round of local ops only
	}
}

// opError is the collective's error when round's op could not start.
func opError(round int, op Op, err error) error {
	return fmt.Errorf("nbc round %d %s: %w", round, op.Kind, err)
}

func (h *Handle) finishRound() {
	for _, op := range h.cur {
		if op.Kind == Reduce || op.Kind == Copy {
			h.local(op)
		}
	}
	h.round++
}

// Round returns the index of the round in progress (len(schedule) when
// done).
func (h *Handle) Round() int { return h.round }

// Test progresses the collective once and reports whether it finished.
func (h *Handle) Test() (bool, error) {
	if h.err != nil || h.round >= h.rounds {
		return true, h.err
	}
	h.tr.Poll()
	h.advance()
	return h.round >= h.rounds || h.err != nil, h.err
}

func (h *Handle) advance() {
	for h.round < h.rounds && h.err == nil {
		if !h.reqsDone() {
			return
		}
		h.finishRound()
		h.post()
	}
}

// reqsDone reports whether the round's requests have all completed.
func (h *Handle) reqsDone() bool {
	for _, r := range h.reqs {
		if !r.Done() {
			return false
		}
	}
	return true
}

// Wait blocks until the collective finished. Over a StepTransport its
// progress loop runs as steps (steps.go), with the same effects.
func (h *Handle) Wait() error {
	if tr, ok := h.tr.(StepTransport); ok {
		return h.waitSteps(tr)
	}
	for {
		h.advance()
		if h.err != nil || h.round >= h.rounds {
			return h.err
		}
		h.tr.Block()
	}
}
