package sim

import (
	"cmp"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"
	"strings"
)

// Proc is a simulated agent that can block: a host thread, a GPU
// work-group, a CP service thread. Its body runs as an iter.Pull coroutine
// and gives control back to the engine only inside engine operations (Sleep,
// Wait, WaitUntil, Join).
type Proc struct {
	// The fields every wake-up reads (Handle, runSteps, a step's wait)
	// come first, the first line's worth up to since: a process's struct
	// is usually cold when its event runs (its node's other agents ran
	// since), and spread over the struct they were four cache misses per
	// wake-up.
	pending int // poll.go: a poller's wake-ups in the event queue
	done    bool
	waited  bool // a step process waited in its current step
	ended   bool // the body returned (the carrier is about to be reused)
	thenN   uint8
	steps   Stepper // the body of a step process (steps.go); nil for a coroutine
	e       *Engine
	reason  string // what the process waits on; "" when runnable
	since   Time   // when the current wait began
	why     Reason // what it waits on, formatted when read (WaitNotBeforeFor); nil otherwise
	// until is the condition of a coroutine blocked in WaitUntil on
	// untilSig, checked before resuming it (stillWaiting); nil otherwise.
	until    func() bool
	c        *carrier // the coroutine running the body; nil once finished
	untilSig *Signal
	name     string
	id       uint64 // spawn order
	slot     int    // index in Engine.procs while live
	daemon   bool
	exit     Signal // notified when the body returns
	poller   bool   // a busy-polling agent (poll.go)
	idleAt   uint64 // poll.go: the epoch of its last idle round, +1 (0: none)
	roundAt  uint64 // poll.go: the epoch its current round began in
	polls    string // poll.go: what a poller polls
	busyAt   Time   // poll.go: when a poller's last round found work
	// A wait begun by WaitNotBefore: the key of the event the process
	// skipped (keySeq 0: none, or passed), the signal it waits on, and
	// whether its wake-up ran at that key (WokeAtKey).
	keyT    Time
	keySeq  uint64
	keyMark *Mark // when set, the key's number is the one this mark takes (WaitNotBeforeMark)
	keySig  *Signal
	keyWoke bool
	// A deferred wake-up (DeferWake): the mark it takes, how long after
	// the notification p resumes, and whether the last wake-up was one.
	wakeMark  *Mark
	wakeAfter Duration
	wakeOn    func(*Mark) bool
	late      bool
	// Sleeps that follow the pending one without running the body
	// (ThenSleep, relay.go): then[:thenN] in order (thenN is above, with
	// the fields every wake-up reads).
	then  [2]Duration
	thenC [2]RelayCheck
	// noRelay: StopRelays was called; every wake-up runs the body.
	noRelay bool
	// The struct fills the allocator's 384-byte class, a multiple of the
	// cache line, so the first 64 bytes above are one line (in the
	// 352-byte class half the processes straddled two).
	_ [40]byte
}

// killed unwinds a process body when the engine shuts down.
type killed struct{}

// Spawn creates a process that starts running body at the current time,
// after the events already scheduled for now.
func (e *Engine) Spawn(name string, body func(p *Proc)) *Proc {
	return e.SpawnAt(e.now, name, body)
}

// SpawnAt creates a process that starts running body at time t.
func (e *Engine) SpawnAt(t Time, name string, body func(p *Proc)) *Proc {
	e.spawned++
	p := &Proc{e: e, name: name, id: e.spawned, slot: len(e.procs), reason: "start", since: e.now}
	var c *carrier
	if k := len(e.idle); k > 0 {
		c, e.idle[k-1] = e.idle[k-1], nil
		e.idle = e.idle[:k-1]
	} else {
		c = newCarrier()
	}
	c.p, c.body, p.c = p, body, c
	e.procs = append(e.procs, p)
	e.AtH(t, p, 0)
	return p
}

// carrier is a coroutine that runs process bodies one after another: when
// a body returns, the coroutine waits in Engine.idle for the next Spawn
// instead of ending, so short-lived processes (work-groups, OpenMP team
// threads) cost no goroutine each. Which coroutine runs a process changes
// nothing the simulation sees.
type carrier struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	p     *Proc
	body  func(p *Proc)
}

// maxIdle bounds the coroutines kept for reuse (each holds a stack).
const maxIdle = 4096

func newCarrier() *carrier {
	c := &carrier{}
	c.next, c.stop = iter.Pull(func(yield func(struct{}) bool) {
		c.yield = yield
		for c.run() {
			c.p.ended = true
			c.p, c.body = nil, nil
			if !yield(struct{}{}) { // idle until the next Spawn, or shutdown
				return
			}
		}
		// A panic (recorded by recoverPanic) or a shutdown ended the body:
		// the coroutine ends with it.
	})
	return c
}

// run runs the current body and reports whether it returned normally.
func (c *carrier) run() (returned bool) {
	defer c.p.recoverPanic()
	c.body(c.p)
	return true
}

func (p *Proc) recoverPanic() {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(killed); ok {
		return
	}
	if p.e.failure == nil {
		p.e.failure = &PanicError{Proc: p.name, At: p.e.now, Value: r, Stack: string(debug.Stack())}
	}
}

// Name returns the process name given at Spawn.
func (p *Proc) Name() string { return p.name }

// Engine returns the engine running p.
func (p *Proc) Engine() *Engine { return p.e }

// Now returns the current simulated time.
func (p *Proc) Now() Time { return p.e.now }

// Done reports whether the process body has returned.
func (p *Proc) Done() bool { return p.done }

// SetDaemon marks p as a background agent (a polling service thread, say)
// whose blocking at the end of a run is not a deadlock.
func (p *Proc) SetDaemon() { p.daemon = true }

// Handle resumes the process; it makes *Proc a Handler so wake-ups are
// allocation-free events.
func (p *Proc) Handle(uint64) {
	if p.pending > 0 { // a poller's own wake-up (not a Signal.Wake in place)
		p.e.pollerPending--
		p.e.pollerRuns++
		p.pending--
	}
	if p.done {
		return
	}
	if p.thenN > 0 && p.relay() {
		return
	}
	if p.steps != nil {
		p.runSteps()
		return
	}
	if p.until != nil && p.stillWaiting() {
		return
	}
	p.resume()
}

// resume switches to the coroutine of p until it waits or ends.
func (p *Proc) resume() {
	prev := p.e.running
	p.e.running = p
	p.reason, p.why = "", nil
	c := p.c
	_, ok := c.next()
	p.e.running = prev
	switch {
	case !ok:
		p.c = nil
		p.finish()
	case p.ended:
		p.c = nil
		p.finish()
		if len(p.e.idle) < maxIdle {
			p.e.idle = append(p.e.idle, c)
		} else {
			c.stop()
		}
	}
}

// finish removes p from the live set and wakes its joiners.
func (p *Proc) finish() {
	p.done = true
	p.StopPolling()
	procs := p.e.procs
	last := len(procs) - 1
	procs[p.slot] = procs[last]
	procs[p.slot].slot = p.slot
	procs[last] = nil
	p.e.procs = procs[:last]
	p.exit.Notify()
}

// block suspends the body until an event resumes it.
func (p *Proc) block(reason string) { p.blockWhy(reason, nil) }

// blockWhy is block with the reason why, when not nil, formatted only
// when read (Reason) instead of reason.
func (p *Proc) blockWhy(reason string, why Reason) {
	if p.e.running != p {
		panic(fmt.Sprintf("sim: process %q blocked from outside its own body", p.name))
	}
	if p.steps != nil {
		p.stepWait(reason, why)
		return
	}
	p.reason, p.why, p.since = reason, why, p.e.now
	if !p.c.yield(struct{}{}) {
		panic(killed{})
	}
}

// Sleep blocks for d of simulated time. Sleep(0) yields to the other events
// scheduled for now.
func (p *Proc) Sleep(d Duration) {
	if d < 0 {
		if d < -MaxTime/2 { // only a wrapped computation is this negative
			p.e.overflow()
			p.block("sleep past the end of the clock")
			return
		}
		panic(fmt.Sprintf("sim: process %q sleeps for negative %v", p.name, d))
	}
	p.e.wake(p.e.now+d, p)
	p.block("sleep")
}

// SleepUntil blocks until absolute time t (returns at once if t ≤ now). A
// negative t, which only an int64 overflow produces, stops the run with a
// *TimeOverflowError.
func (p *Proc) SleepUntil(t Time) {
	if t < 0 {
		p.e.overflow()
		p.block("sleep past the end of the clock")
		return
	}
	if t > p.e.now {
		p.Sleep(t - p.e.now)
	}
}

// Wait blocks until s is notified. what names the wait for deadlock reports.
func (p *Proc) Wait(s *Signal, what string) {
	s.admit()
	s.waiters = append(s.waiters, p)
	p.block(what)
}

// WaitFor is Wait with the reason r formatted only when read (Reason).
func (p *Proc) WaitFor(s *Signal, r Reason) {
	s.admit()
	s.waiters = append(s.waiters, p)
	p.blockWhy("", r)
}

// WaitUntil blocks until cond holds, re-checking it each time s is notified.
// Whoever changes the state cond reads must notify s.
//
// A coroutine process is re-checked in the event that wakes it, before
// its coroutine is resumed: when cond is still false it goes back on s's
// waiters there and then, as the resumed body would have (same instant,
// same place among the waiters, the same events), but without the two
// coroutine switches. Many processes waiting on one signal for different
// conditions (work-groups stalled on a templater's next slot, each for
// its own QP) then cost an event each per notification, not a resumed
// coroutine each.
func (p *Proc) WaitUntil(s *Signal, what string, cond func() bool) {
	if cond() {
		return
	}
	if p.steps != nil {
		for {
			p.Wait(s, what)
			if cond() {
				return
			}
		}
	}
	p.until, p.untilSig = cond, s
	p.Wait(s, what) // Handle resumes the body only once cond holds
	p.until, p.untilSig = nil, nil
}

// stillWaiting re-checks the condition of a process blocked in WaitUntil
// as its resumed body would (running as p, not waiting on anything) and,
// when it is false, puts p back on the signal's waiters as the body's
// next Wait would; it reports whether p stays blocked.
func (p *Proc) stillWaiting() bool {
	e := p.e
	prev, reason := e.running, p.reason
	e.running, p.reason = p, ""
	ok := p.until()
	e.running = prev
	if ok {
		return false
	}
	p.untilSig.admit()
	p.untilSig.waiters = append(p.untilSig.waiters, p)
	p.reason, p.since = reason, e.now
	return true
}

// Join blocks until q has finished.
func (p *Proc) Join(q *Proc) {
	for !q.done {
		p.Wait(&q.exit, "join "+q.name)
	}
}

// Signal wakes the processes waiting on it. The zero value is ready to use.
type Signal struct {
	waiters []*Proc
}

// Notify wakes every waiting process at the current time, in the order they
// started waiting.
func (s *Signal) Notify() {
	if len(s.waiters) == 0 {
		return
	}
	for i, w := range s.waiters {
		if w.keySeq == 0 || !w.e.wakeAtKey(w) {
			if w.wakeMark != nil {
				w.e.wakeLate(w)
			} else {
				w.e.wake(w.e.now, w)
			}
		}
		s.waiters[i] = nil
	}
	s.waiters = s.waiters[:0]
}

// Waiting returns the number of processes waiting on s.
func (s *Signal) Waiting() int { return len(s.waiters) }

// Counter is a monotonically increasing value that processes can wait on,
// such as a completion counter.
type Counter struct {
	v   uint64
	sig Signal
}

// Add increases the counter by n and wakes its waiters.
func (c *Counter) Add(n uint64) { c.v += n; c.sig.Notify() }

// Value returns the current count.
func (c *Counter) Value() uint64 { return c.v }

// WaitAtLeast blocks p until the counter reaches n.
func (c *Counter) WaitAtLeast(p *Proc, n uint64, what string) {
	for c.v < n {
		p.Wait(&c.sig, what)
	}
}

// BlockedProc describes one process stuck at the end of a run.
type BlockedProc struct {
	Name  string
	Waits string
	Since Time
}

// DeadlockError reports that no event can fire while processes still wait
// (or that only busy-polling agents keep running, finding nothing: poll.go).
type DeadlockError struct {
	At      Time
	Blocked []BlockedProc
	// Polling is how many busy-polling agents keep polling; Pollers
	// lists them (Waits: what each polls, Since: when its last round
	// found work).
	Polling int
	Pollers []BlockedProc
}

// Error returns the message of a DeadlockError: a first line that says
// who waits on what and who polls what (grouped, most common first, a
// few named: the line a user reads), then one line per blocked process
// and per poller.
func (d *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock at %v: %d process(es) blocked with no pending event", d.At, len(d.Blocked))
	if d.Polling > 0 {
		fmt.Fprintf(&b, " but %d polling agent(s) that find nothing to do", d.Polling)
	}
	sep := ": "
	named := writeGroups(&b, &sep, d.Blocked, "waits on", "wait on", 3)
	writeGroups(&b, &sep, d.Pollers, "polls", "poll", max(1, 4-named))
	for _, bp := range d.Blocked {
		fmt.Fprintf(&b, "\n  %s: waits on %s (since %v)", bp.Name, bp.Waits, bp.Since)
	}
	for _, bp := range d.Pollers {
		fmt.Fprintf(&b, "\n  %s: polls %s (last found work at %v)", bp.Name, bp.Waits, bp.Since)
	}
	return b.String()
}

// writeGroups writes the processes of ps grouped by what they wait on
// (most common first, at most limit groups named, each by its first
// process) after *sep, and returns how many groups it named.
func writeGroups(b *strings.Builder, sep *string, ps []BlockedProc, one, many string, limit int) int {
	type group struct {
		waits, first string
		n            int
	}
	var groups []*group
	byWait := map[string]*group{}
	for _, bp := range ps {
		g := byWait[bp.Waits]
		if g == nil {
			g = &group{waits: bp.Waits, first: bp.Name}
			byWait[bp.Waits] = g
			groups = append(groups, g)
		}
		g.n++
	}
	slices.SortStableFunc(groups, func(x, y *group) int { return cmp.Compare(y.n, x.n) })
	for i, g := range groups {
		if i == limit {
			fmt.Fprintf(b, "%sand %d other %s(s)", *sep, len(groups)-i, strings.Fields(many)[0])
			return i
		}
		if g.n == 1 {
			fmt.Fprintf(b, "%s%s %s %s", *sep, g.first, one, g.waits)
		} else {
			fmt.Fprintf(b, "%s%d %s %s (%s, ...)", *sep, g.n, many, g.waits, g.first)
		}
		*sep = "; "
	}
	return len(groups)
}

// PanicError reports a panic inside a process body.
type PanicError struct {
	Proc  string
	At    Time
	Value any
	Stack string
}

// Error returns the message of a PanicError.
func (e *PanicError) Error() string {
	return fmt.Sprintf("process %s panicked at %v: %v\n%s", e.Proc, e.At, e.Value, e.Stack)
}

func (e *Engine) blockedProcs() []BlockedProc { return e.blockedProcsBut(false) }

// blockedProcsBut lists the live non-daemon processes, without the
// pollers if pollers is set.
func (e *Engine) blockedProcsBut(pollers bool) []BlockedProc {
	live := slices.Clone(e.procs)
	slices.SortFunc(live, func(a, b *Proc) int { return cmp.Compare(a.id, b.id) })
	var out []BlockedProc
	for _, p := range live {
		if !p.daemon && !(pollers && p.poller) {
			out = append(out, BlockedProc{Name: p.name, Waits: p.waits(), Since: p.since})
		}
	}
	return out
}

// Tracer receives spans of simulated activity, one track per agent.
type Tracer interface {
	// Span records that track did name from start to end.
	Span(track, name string, start, end Time)
}

// Span records a span on the engine's tracer, if any.
func (e *Engine) Span(track, name string, start, end Time) {
	if e.tracer != nil {
		e.tracer.Span(track, name, start, end)
	}
}
