package sched

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Sched is a set of cores shared by the threads bound to them.
type Sched struct {
	name    string
	quantum sim.Duration
	cores   []*core
	next    int
}

type core struct {
	holder *Thread
	queue  []*Thread // runnable threads waiting for the core, FIFO
	bound  int       // threads ever bound to it
	sealer *Thread   // the thread Alone told it was alone (nil: none)
}

// Thread is one software thread's claim on a core.
type Thread struct {
	s       *Sched
	c       *core
	p       *sim.Proc
	turn    sim.Signal
	used    sim.Duration // of the current quantum
	busy    sim.Duration // total time on the core
	preempt uint64
	gone    bool
	// Busy as steps (BeginBusy, TryBusy): the work left and where it stands.
	left  sim.Duration
	step  sim.Duration
	phase busyPhase
	// Nudge is notified when another thread starts waiting for the core
	// this thread holds, so a holder sleeping through an idle stretch can
	// go back to polling (and be preempted).
	Nudge sim.Signal
}

// New returns a scheduler of cores cores with the given quantum. name
// labels panics.
func New(name string, cores int, quantum sim.Duration) *Sched {
	if cores < 1 || quantum <= 0 {
		panic(fmt.Sprintf("sched %s: %d cores, quantum %v: need ≥ 1 core and a positive quantum", name, cores, quantum))
	}
	s := &Sched{name: name, quantum: quantum}
	for range cores {
		s.cores = append(s.cores, &core{})
	}
	return s
}

// AddCore adds an idle core; threads bound later use it in turn.
func (s *Sched) AddCore() { s.cores = append(s.cores, &core{}) }

// Cores returns the number of cores.
func (s *Sched) Cores() int { return len(s.cores) }

// Bind attaches process p to the next core, round-robin.
func (s *Sched) Bind(p *sim.Proc) *Thread {
	c := s.cores[s.next%len(s.cores)]
	s.next++
	if t := c.sealer; t != nil { // no longer alone: its relayed wake-ups run its body again
		t.p.StopRelays()
		c.sealer = nil
	}
	c.bound++
	return &Thread{s: s, c: c, p: p}
}

// Core returns the index of the thread's core.
func (t *Thread) Core() int {
	for i, c := range t.s.cores {
		if c == t.c {
			return i
		}
	}
	return -1
}

// Busy occupies the thread's core for d of work, waiting for its turn and
// yielding at quantum boundaries while others are runnable.
func (t *Thread) Busy(d sim.Duration) {
	if t.gone {
		panic(fmt.Sprintf("sched %s: %s works after Exit", t.s.name, t.p.Name()))
	}
	for {
		t.claim()
		if t.used >= t.s.quantum && len(t.c.queue) > 0 {
			t.yield()
		}
		step := d
		if len(t.c.queue) > 0 {
			step = min(d, t.s.quantum-t.used)
		}
		if step > 0 {
			t.p.Sleep(step)
		}
		t.used += step
		t.busy += step
		d -= step
		if d <= 0 {
			return
		}
	}
}

// busyPhase is where a Busy begun by BeginBusy stands (TryBusy).
type busyPhase uint8

const (
	busyClaim     busyPhase = iota // claiming the core for the next stretch
	busyClaimWait                  // queued for the core (claim)
	busyYieldWait                  // preempted at the quantum's end (yield)
	busySlept                      // a stretch on the core is over
	busyDone                       // nothing in progress
)

// BeginBusy starts Busy(d) as steps, for a thread whose process runs a
// stretch of its work as a state machine (sim.Proc.RunSteps): TryBusy
// advances it, waiting at most once per call where Busy waits, so the
// two schedule the same events at the same times.
func (t *Thread) BeginBusy(d sim.Duration) {
	if t.gone {
		panic(fmt.Sprintf("sched %s: %s works after Exit", t.s.name, t.p.Name()))
	}
	t.left, t.phase = d, busyClaim
}

// TryBusy advances the Busy begun by BeginBusy: true once it is over (no
// wait pending), false when it waited and must be called again after the
// wait.
func (t *Thread) TryBusy() bool {
	c := t.c
	for {
		switch t.phase {
		case busyDone:
			return true
		case busyClaim:
			if c.holder == nil {
				c.holder, t.used = t, 0
			} else if c.holder != t {
				c.queue = append(c.queue, t)
				c.holder.Nudge.Notify()
				t.phase = busyClaimWait
				continue
			}
			if t.used >= t.s.quantum && len(c.queue) > 0 {
				t.preempt++
				c.queue = append(c.queue, t)
				t.handOver()
				t.phase = busyYieldWait
				continue
			}
			t.run()
			if t.phase != busySlept {
				continue
			}
			return false
		case busyClaimWait, busyYieldWait:
			if c.holder != t {
				t.p.Wait(&t.turn, "its turn on a core")
				return false
			}
			t.used = 0 // a fresh quantum: no preemption check (Busy's order)
			t.run()
			if t.phase != busySlept {
				continue
			}
			return false
		case busySlept:
			t.used += t.step
			t.busy += t.step
			t.left -= t.step
			if t.left <= 0 {
				t.phase = busyDone
				return true
			}
			t.phase = busyClaim
		}
	}
}

// Alone reports whether t is the only thread ever bound to its core. A
// thread alone holds its core from its first Busy on and is never
// preempted, so the course of its Busy is known in advance (RelayedBusy);
// should another thread bind to the core later, t's process stops relaying
// (sim.Proc.StopRelays) before the newcomer can claim the core.
func (t *Thread) Alone() bool {
	if t.c.bound != 1 {
		return false
	}
	t.c.sealer = t
	return true
}

// Sleeping returns the length of the stretch a stepped Busy sleeps
// through now (TryBusy waited in it), or false when it is not asleep on
// the core.
func (t *Thread) Sleeping() (sim.Duration, bool) {
	return t.step, t.phase == busySlept
}

// RelayedBusy is BeginBusy(d) and the TryBusy that begins its sleep, for
// a thread that held its core alone when that sleep began (Alone; the
// caller may catch up later, when another thread may wait for the core),
// whose process's sleep of d is already scheduled (sim.Proc.ThenSleep):
// TryBusy then ends it as it would have ended the sleep it began itself.
// d must be positive.
func (t *Thread) RelayedBusy(d sim.Duration) {
	if t.c.holder != t || d <= 0 {
		panic(fmt.Sprintf("sched %s: %s relays a Busy(%v) on a core it does not hold alone", t.s.name, t.p.Name(), d))
	}
	t.left, t.step, t.phase = d, d, busySlept
}

// run starts the next stretch of a stepped Busy on the held core: it
// sleeps (phase busySlept) or, for an empty stretch, accounts it at once.
func (t *Thread) run() {
	t.step = t.left
	if len(t.c.queue) > 0 {
		t.step = min(t.left, t.s.quantum-t.used)
	}
	if t.step > 0 {
		t.p.Sleep(t.step)
		t.phase = busySlept
		return
	}
	t.left -= t.step
	if t.left <= 0 {
		t.phase = busyDone
		return
	}
	t.phase = busyClaim
}

// claim waits until t holds its core.
func (t *Thread) claim() {
	c := t.c
	if c.holder == nil {
		c.holder, t.used = t, 0
		return
	}
	if c.holder == t {
		return
	}
	c.queue = append(c.queue, t)
	c.holder.Nudge.Notify()
	t.p.WaitUntil(&t.turn, "its turn on a core", func() bool { return c.holder == t })
	t.used = 0
}

// Contended reports whether other threads wait for t's core.
func (t *Thread) Contended() bool { return len(t.c.queue) > 0 }

// yield hands the core to the first waiting thread and queues t behind.
func (t *Thread) yield() {
	c := t.c
	t.preempt++
	c.queue = append(c.queue, t)
	t.handOver()
	t.p.WaitUntil(&t.turn, "its turn on a core", func() bool { return c.holder == t })
	t.used = 0
}

// handOver gives the core to the next queued thread (or frees it).
func (t *Thread) handOver() {
	c := t.c
	c.holder = nil
	if len(c.queue) == 0 {
		return
	}
	next := c.queue[0]
	c.queue = c.queue[1:]
	c.holder = next
	next.turn.Notify()
}

// Exit releases the core for good (the thread stopped).
func (t *Thread) Exit() {
	if t.gone {
		return
	}
	t.gone = true
	if t.c.holder == t {
		t.handOver()
	}
}

// BusyTime returns the time the thread spent on its core.
func (t *Thread) BusyTime() sim.Duration { return t.busy }

// Preemptions returns how often the thread lost its core at a quantum end.
func (t *Thread) Preemptions() uint64 { return t.preempt }

// Invariants checks the cores' run queues at the end of a run: no core is
// held by, or queues, a thread that exited; a holder is not also queued;
// no thread queues on a free core (it would wait forever); no thread was
// on its core longer than the run. agent names the cores in violations.
func (s *Sched) Invariants(agent string, now sim.Time) []sim.Violation {
	var out []sim.Violation
	bad := func(format string, args ...any) {
		out = append(out, sim.Violation{Agent: agent, At: now, What: fmt.Sprintf(format, args...)})
	}
	seen := map[*Thread]bool{}
	for i, c := range s.cores {
		if c.holder != nil && c.holder.gone {
			bad("core %d is held by a thread that exited", i)
		}
		if c.holder == nil && len(c.queue) > 0 {
			bad("core %d is free but %d thread(s) queue for it", i, len(c.queue))
		}
		for _, t := range c.queue {
			switch {
			case t.gone:
				bad("core %d queues a thread that exited", i)
			case t == c.holder:
				bad("core %d queues its own holder", i)
			}
		}
		if c.holder != nil {
			seen[c.holder] = true
		}
	}
	for t := range seen {
		if t.busy > now {
			bad("a thread was on its core %v, longer than the run (%v)", t.busy, now)
		}
	}
	return out
}
