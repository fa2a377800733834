package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime/debug"
)

// Engine owns simulated time, the event queue and the processes of one run.
// The zero value is not usable; call New.
type Engine struct {
	now     Time
	seq     uint64
	queue   eventQueue
	events  uint64
	seed    uint64
	stopped bool

	procs   []*Proc    // live processes, in no particular order
	idle    []*carrier // coroutines of finished processes, for reuse
	spawned uint64     // processes ever spawned
	running *Proc      // process currently executing, nil in callbacks
	failure error      // first process panic or time overflow
	tracer  Tracer
	windows *Windows // optional lookahead-window statistics
	// endChecks verify invariants when a run ends idle (invariant.go).
	endChecks []EndCheck
	// Busy-polling agents (poll.go): how many are live, their pending and
	// executed wake-ups, and how many had an idle round in idleEpoch.
	pollers, idlePollers  int
	pollerProcs           []*Proc // the live pollers, in the order they became pollers
	pollerPending         int
	pollerRuns, idleEpoch uint64
	partition             bool   // one of several partitions (parallel.go): PollIdle never says frozen
	keyMax                Time   // the latest key of a skipped event (WaitNotBefore)
	relays                uint64 // wake-ups that relayed a sleep (ThenSleep)
	// The pending marks (mark.go): FIFOs by offset, a heap, their count.
	mq          []markQueue
	mheap       []markKey
	nmarks      int
	markMin     markKey // the earliest and where it is, when markMinOK (firstMarkAt)
	markMinAt   int
	markMinOK   bool
	marksPassed uint64
	chains      []chainKey // the pending chains of marks, a binary heap (markchain.go)
}

// New returns an engine at time zero whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{seed: seed}
}

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Seed returns the seed the engine was created with.
func (e *Engine) Seed() uint64 { return e.seed }

// Events returns the number of events executed so far.
func (e *Engine) Events() uint64 { return e.events }

// Live returns the number of processes that have not finished.
func (e *Engine) Live() int { return len(e.procs) }

// Pending returns the number of events waiting in the queue, counting
// each pending mark (mark.go) as the event it stands for, and each pending
// chain of marks (markchain.go) as one, however many marks it has left
// (the Marks it replaces count one each).
func (e *Engine) Pending() int { return e.queue.len() + e.nmarks + len(e.chains) }

// At schedules fn to run at absolute time t. Scheduling into the past is a
// simulator bug and panics; a negative t, which only an int64 overflow of
// now plus a duration produces, or MaxTime, where saturated sums end,
// stops the run with a *TimeOverflowError.
func (e *Engine) At(t Time, fn func()) {
	if !e.checkFuture(t) {
		return
	}
	e.seq++
	if t == e.now {
		e.queue.pushNow(t, e.seq, event{h: funcHandler(fn)})
		return
	}
	e.queue.push(t, e.seq, event{h: funcHandler(fn)})
}

// After schedules fn to run d after now.
func (e *Engine) After(d Duration, fn func()) { e.At(e.now+d, fn) }

// AtH schedules h.Handle(arg) at time t without allocating.
func (e *Engine) AtH(t Time, h Handler, arg uint64) {
	if !e.checkFuture(t) {
		return
	}
	e.seq++
	if t == e.now {
		e.queue.pushNow(t, e.seq, event{h: h, arg: arg})
		return
	}
	e.queue.push(t, e.seq, event{h: h, arg: arg})
}

// Ticket names an event scheduled with AtHC, for Cancel; the zero Ticket
// names none.
type Ticket int32

// AtHC is AtH for an event that may be cancelled before it runs: it
// returns the event's ticket, or the zero Ticket when the event is not in
// the heap (due now, or refused), which Cancel ignores: such an event
// still runs, so its handler must tolerate that.
func (e *Engine) AtHC(t Time, h Handler, arg uint64) Ticket {
	if !e.checkFuture(t) {
		return 0
	}
	e.seq++
	if t == e.now {
		e.queue.pushNow(t, e.seq, event{h: h, arg: arg})
		return 0
	}
	return Ticket(e.queue.push(t, e.seq, event{h: h, arg: arg}) + 1)
}

// Cancel removes the event of ticket tk, which must be pending: scheduled
// by AtHC, not yet run and not cancelled before. A cancelled event never
// runs and is not counted in Events or Pending; only the time of its
// entry, should it reach the top of the queue before it is compacted
// away, moves Now as an event would (the queue is monotone). Why: a
// handler rescheduled at every change of its time (a flow's completion
// at every change of its rate) would otherwise leave one stale event per
// change in the queue until its time came (the flow model's memory grew
// with rate changes, not with flows).
func (e *Engine) Cancel(tk Ticket) {
	if tk != 0 {
		e.queue.cancel(int32(tk) - 1)
	}
}

// checkFuture reports whether t can be scheduled: a time before now is a
// bug (panic), a negative one an overflow (the run fails).
func (e *Engine) checkFuture(t Time) bool {
	return t >= e.now && t < MaxTime || e.badTime(t)
}

// badTime handles a time checkFuture refused (kept out of line so that the
// check inlines into every scheduling call): it returns false after
// failing the run on an overflow and panics on a time in the past.
func (e *Engine) badTime(t Time) bool {
	if t < 0 || t == MaxTime {
		e.overflow()
		return false
	}
	panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, e.now))
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// Run executes events until the queue is empty or Stop is called. It returns
// a *PanicError if a process panicked, a *DeadlockError if the queue
// emptied while non-daemon processes were still blocked, and an
// *InvariantError if a check added by AddEndCheck found a violation.
func (e *Engine) Run() error { return e.RunUntil(MaxTime) }

// RunUntil executes events with time ≤ limit; see Run. Time advances to the
// last executed event, never to limit itself. A panic in a callback event
// is returned as a *PanicError, like one in a process.
func (e *Engine) RunUntil(limit Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Proc: "a callback event", At: e.now, Value: r, Stack: string(debug.Stack())}
			e.shutdown()
		}
	}()
	later := e.runEvents(limit)
	if e.failure != nil {
		err := e.failure
		e.shutdown()
		return err
	}
	if later || e.stopped {
		return nil
	}
	if blocked := e.blockedProcs(); len(blocked) > 0 {
		err := &DeadlockError{At: e.now, Blocked: blocked}
		e.shutdown()
		return err
	}
	return e.endCheck()
}

// runEvents runs the events with time ≤ limit until the queue is empty,
// Stop is called or an event fails (e.failure). It reports whether events
// after limit remain, so that an empty-queue check does not apply.
func (e *Engine) runEvents(limit Time) (later bool) {
	e.stopped = false
	for !e.stopped {
		if e.nmarks > 0 || len(e.chains) > 0 {
			if e.runBeforeMarks(limit) {
				if e.failure != nil {
					return false
				}
				continue
			}
			e.passMarks(limit)
		}
		t, ev, ok, later := e.queue.next(limit)
		if !ok {
			later = later || e.pendingMarks() // (passMarks left only marks after limit)
			if e.keyMax > e.now && e.keyMax <= limit {
				e.now = e.keyMax // a skipped event ran last (notbefore.go)
			}
			return later
		}
		e.now = t
		if ev.isCancelled() {
			continue // (Cancel)
		}
		e.events++
		if e.windows != nil {
			e.windows.note(t)
		}
		ev.h.Handle(ev.arg)
		if e.failure != nil {
			return false
		}
	}
	return false
}

// runBeforeMarks runs the queue's first event, as runEvents does, when it
// is due by limit and orders before every pending mark and chain, so that
// passing the marks would pass none (as before nearly every event of a
// run with marks), and reports whether it did. Else the run passes the
// marks and takes the next event as before. (passMarks looked at the
// queue's first key and the queue's next again: two looks per event.)
func (e *Engine) runBeforeMarks(limit Time) bool {
	bt, bs := e.marksKey()
	t, ev, ok := e.queue.nextBefore(limit, bt, bs)
	if !ok {
		return false
	}
	e.now = t
	if ev.isCancelled() {
		return true // (Cancel)
	}
	e.events++
	if e.windows != nil {
		e.windows.note(t)
	}
	ev.h.Handle(ev.arg)
	return true
}

// Close releases the coroutines of processes that never finished (after a
// Stop, for example). The engine must not be used afterwards.
func (e *Engine) Close() { e.shutdown() }

func (e *Engine) shutdown() {
	procs := e.procs
	e.procs = nil
	for _, p := range procs {
		p.done = true
		if p.c != nil { // step processes (steps.go) have no coroutine
			p.c.stop()
		}
	}
	idle := e.idle
	e.idle = nil
	for _, c := range idle {
		c.stop()
	}
}

// Stream returns a deterministic PCG random stream for the named entity. The
// same seed and name always give the same sequence, independent of other
// streams and of call order.
func (e *Engine) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(e.seed, h.Sum64()))
}

// SetTracer installs t to receive process spans; nil disables tracing.
func (e *Engine) SetTracer(t Tracer) { e.tracer = t }

// Tracer returns the installed tracer, or nil.
func (e *Engine) Tracer() Tracer { return e.tracer }
