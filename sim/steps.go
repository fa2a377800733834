package sim

import (
	"fmt"
	"runtime/debug"
)

// Stepper is the body of a process that runs as callback events instead of
// a coroutine (SpawnSteps): a state machine that the engine calls at the
// process's start and again after each of its waits. Thousands of such
// processes (GPU work-groups) cost a small struct each instead of a
// coroutine stack, and a wake-up costs a call instead of two coroutine
// switches.
type Stepper interface {
	// Step runs the body from where it stopped and reports whether it has
	// finished. It may wait at most once (Sleep, SleepUntil that does
	// block, Wait) and must return right after that wait; the engine
	// calls it again when the wait is over. A step that returns false
	// without having waited is called again at once, so a state machine
	// may advance one state per call whether or not the state's
	// operation waited. Loops that wait (WaitUntil, Join,
	// Counter.WaitAtLeast) do not fit a step: check the condition and
	// Wait once instead. A step that reports the process done must not
	// have waited (the run fails): its wake-up would resume nothing, or
	// whatever reuses the process (SpawnStepsIn).
	Step(p *Proc) (done bool)
}

// SpawnSteps creates a process whose body is s, starting at the current
// time after the events already scheduled for now. It is Spawn for a
// Stepper: the same events at the same times, with the same sequence
// numbers, as a coroutine body that waits where s waits; it is live,
// named in deadlock reports and joinable like any process.
func (e *Engine) SpawnSteps(name string, s Stepper) *Proc {
	p := new(Proc)
	e.SpawnStepsIn(p, name, s)
	return p
}

// SpawnStepsIn is SpawnSteps into p, which is either a zero Proc or a step
// process of e that has finished: agents made and retired by the
// thousand (GPU work-groups) keep their process with the rest of their
// state and reuse it, instead of allocating one each. Nothing of p's
// earlier life can resume the new process: a step process finishes only
// in a step that did not wait (runSteps refuses one that did), so when it
// finishes no wake-up of it is pending, in the event queue or on a signal.
// Whoever keeps p after it finished must not expect it to stay finished.
func (e *Engine) SpawnStepsIn(p *Proc, name string, s Stepper) {
	e.SpawnStepsInAt(p, e.now, name, s)
}

// SpawnStepsInAt is SpawnStepsIn with the process starting at time t (not
// before now), as SpawnAt is Spawn's.
func (e *Engine) SpawnStepsInAt(p *Proc, t Time, name string, s Stepper) {
	e.liveSteps(p, name, s, "start")
	e.AtH(t, p, 0)
}

// liveSteps makes p (a zero Proc or a finished step process of e) a live
// step process with body s, waiting for reason ("" when it runs now).
func (e *Engine) liveSteps(p *Proc, name string, s Stepper, reason string) {
	e.reuse(p, name)
	e.spawned++
	*p = Proc{e: e, name: name, id: e.spawned, slot: len(e.procs), reason: reason, since: e.now, steps: s}
	e.procs = append(e.procs, p)
}

// StartSteps creates a step process and runs its first step at once, in
// the current event (no start event): for an agent that continues what the
// running one was doing (a command processor handing its dispatch loop to
// a step process) and must schedule exactly the events it would have.
func (e *Engine) StartSteps(name string, s Stepper) *Proc {
	p := new(Proc)
	e.StartStepsIn(p, name, s)
	return p
}

// StartStepsIn is StartSteps into p, a zero Proc or a finished step
// process of e (see SpawnStepsIn).
func (e *Engine) StartStepsIn(p *Proc, name string, s Stepper) {
	e.liveSteps(p, name, s, "")
	p.runSteps()
}

// reuse panics unless p is a zero Proc or a finished step process of e.
func (e *Engine) reuse(p *Proc, name string) {
	if p.e != nil && (p.e != e || p.steps == nil || !p.done) {
		panic(fmt.Sprintf("sim: %q reuses process %q, which is not a finished step process of this engine", name, p.name))
	}
}

// runSteps resumes a step process: it calls the body until it waits or
// finishes.
func (p *Proc) runSteps() {
	prev := p.e.running
	p.e.running = p
	p.reason, p.why = "", nil
	defer p.stepPanic(prev)
	for {
		p.waited = false
		if p.steps.Step(p) {
			if p.waited { // its wake-up would resume whatever reuses p
				panic(fmt.Sprintf("sim: step process %q finishes in a step that waited (%s)", p.name, p.waits()))
			}
			p.e.running = prev
			if p.c != nil { // a coroutine lent its process (RunSteps): back to it
				p.steps = nil
				p.resume()
				return
			}
			p.finish()
			return
		}
		if p.waited {
			break
		}
	}
	p.e.running = prev
}

// stepPanic turns a panic in a step body into the run's *PanicError
// naming the process, as for a coroutine body.
func (p *Proc) stepPanic(prev *Proc) {
	r := recover()
	if r == nil {
		return
	}
	p.e.running = prev
	if p.e.failure == nil {
		p.e.failure = &PanicError{Proc: p.name, At: p.e.now, Value: r, Stack: string(debug.Stack())}
	}
}

// stepWait records a step process's wait; the event or signal that ends it
// is already registered. A second wait in the same step would be lost, so
// it is a bug in the body.
func (p *Proc) stepWait(reason string, why Reason) {
	if p.waited {
		second := reason
		if why != nil {
			second = why.What()
		}
		panic(fmt.Sprintf("sim: step process %q waits twice in one step (%s, then %s)", p.name, p.waits(), second))
	}
	p.waited = true
	p.reason, p.why, p.since = reason, why, p.e.now
}

// Waited reports whether the current step of a step process has waited:
// whether it must return to the engine now. (Always false for a
// coroutine process, whose waits return only when they are over.)
func (p *Proc) Waited() bool { return p.waited }

// Wake resumes the processes waiting on s at once, inside the current
// event, in the order they started waiting: Notify without a wake-up event
// per waiter, for a callback event that stands in for the waiter's own
// wake-up (the event the waiter would have run in). Only callback events
// may call it, not process bodies.
func (s *Signal) Wake() {
	ws := s.waiters
	if len(ws) == 0 {
		return
	}
	if ws[0].e.running != nil {
		panic(fmt.Sprintf("sim: Signal.Wake from process %q; only callback events may wake in place", ws[0].e.running.name))
	}
	s.waiters = nil // a resumed waiter may wait on s again
	for _, w := range ws {
		if w.keySeq != 0 && w.e.wakeAtKey(w) {
			continue
		}
		w.wakeMark, w.wakeOn = nil, nil // in place: the wake-up is this event
		w.Handle(0)
	}
}

// RunSteps runs s as the body of p, a coroutine process calling it from
// its own body, until s reports done, then returns: the coroutine lends
// its process to a state machine for a stretch of many short waits (a
// host thread's MPI progress loop), switching away once and back once
// instead of twice per wait. The first step runs at once; each later one
// runs in the event that wakes p, and the coroutine resumes in the event
// of the last step, so the events, their times and their order are those
// of the coroutine doing the same waits itself. s follows the Stepper
// contract (a step that reports done must not have waited).
func (p *Proc) RunSteps(s Stepper) {
	if p.e.running != p || p.c == nil || p.steps != nil {
		panic(fmt.Sprintf("sim: RunSteps on %q from outside its own coroutine body", p.name))
	}
	p.steps = s // its waits register as a step process's (block)
	for {
		p.waited = false
		if s.Step(p) {
			p.steps = nil
			if p.waited {
				panic(fmt.Sprintf("sim: process %q finishes RunSteps in a step that waited (%s)", p.name, p.waits()))
			}
			return
		}
		if p.waited {
			break
		}
	}
	p.waited = false
	// Later wake-ups run the steps (Handle); the last resumes the coroutine.
	if !p.c.yield(struct{}{}) {
		panic(killed{})
	}
}

// TryJoin is Join as a step: it reports true if q has finished, and
// otherwise waits once for q's end (the caller checks again after the
// wait, as Join's loop does).
func (p *Proc) TryJoin(q *Proc) bool {
	if q.done {
		return true
	}
	p.Wait(&q.exit, "join "+q.name)
	return false
}

// CanRunSteps reports whether p's body may call RunSteps now: p is a
// coroutine process running its own body, not already lending itself to a
// state machine. Libraries whose calls run either way (a device call from
// a coroutine body or from a stretch already in steps) use it to choose.
func (p *Proc) CanRunSteps() bool { return p.e.running == p && p.c != nil && p.steps == nil }
