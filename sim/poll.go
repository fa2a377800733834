package sim

import "slices"

// Busy-polling agents and the deadlocks they hide.
//
// A process that polls memory in a loop (a ComP-Net service thread on a
// CP core, a host helper thread polling queues across PCIe, a host
// thread polling notification words) keeps the event queue busy, so a
// model deadlock among the other agents never empties it and the run
// goes on polling forever instead of ending with a *DeadlockError. A
// poller (SetPoller) therefore reports each round that found nothing to
// do (PollIdle) and each that did (PollBusy), each round begun with
// PollStart; PollRound does the end of a round in one call. The
// simulation is frozen when no event but the pollers' own wake-ups has
// run since every poller with a wake-up pending began its latest idle
// round, and no other event is pending: the memory the pollers read can
// then change only through a poller, and an idle round changes nothing,
// so every later round is idle too. (A poller blocked on a signal
// instead, between busy stretches, can only be woken by an agent that
// changes something: none will.) PollIdle reports it, and the poller
// fails the run with PollDeadlock's error, which names what each agent
// waits on and what each poller polls.

// SetPoller marks the running process p as a busy-polling agent that
// polls what (named in deadlock reports). Its wake-ups (Sleep, a
// Signal) are counted apart from every other event. Only coroutine
// processes may be pollers.
func (p *Proc) SetPoller(what string) {
	p.polls = what
	if p.poller || p.steps != nil {
		return
	}
	p.poller = true
	p.busyAt = p.e.now
	p.e.pollers++
	p.e.pollerProcs = append(p.e.pollerProcs, p)
}

// AtPoller schedules fn at t as the pollers' own event: pending and run,
// it counts as their wake-ups do, not as another agent's event that may
// change what they poll. For bookkeeping between pollers only (a core's
// slice timer that hands the core from one busy poller to another).
func (e *Engine) AtPoller(t Time, fn func()) {
	e.pollerPending++
	e.At(t, func() {
		e.pollerPending--
		e.pollerRuns++
		fn()
	})
}

// Polling reports whether p is a busy-polling agent (SetPoller).
func (p *Proc) Polling() bool { return p.poller }

// StopPolling ends what SetPoller began, for an agent that busy-polls
// only at times (a host thread in one poll loop): its later work counts
// as any agent's.
func (p *Proc) StopPolling() {
	if !p.poller {
		return
	}
	p.PollBusy()
	p.poller = false
	p.e.pollers--
	p.e.pollerProcs = slices.DeleteFunc(p.e.pollerProcs, func(q *Proc) bool { return q == p })
}

// wake schedules the resumption of p at t, counting a poller's.
func (e *Engine) wake(t Time, p *Proc) {
	if p.poller {
		e.pollerPending++
		p.pending++
	}
	e.AtH(t, p, 0)
}

// epoch counts the events that were no poller's wake-up, and the marks
// passed (each stands for such an event: mark.go).
func (e *Engine) epoch() uint64 { return e.events - e.pollerRuns + e.marksPassed }

// PollOthersPending reports whether PollIdle would say no at once, reading
// nothing of the round and changing nothing: p is no poller, the engine
// one of several partitions (another partition's events are not seen
// here), or an event or mark that is not a poller's wake-up is pending.
func (p *Proc) PollOthersPending() bool {
	e := p.e
	return !p.poller || e.partition || e.queue.len() != e.pollerPending || e.pendingMarks()
}

// PollStart marks the start of one of poller p's rounds: an idle round
// counts only if no other event ran while it lasted (a round that yields
// between its polls may have read a word before another agent wrote it).
func (p *Proc) PollStart() { p.roundAt = p.e.epoch() }

// PollBusy reports that poller p's round found work.
func (p *Proc) PollBusy() {
	if p.idleAt != 0 && p.idleAt == p.e.idleEpoch {
		p.e.idlePollers-- // (a stale count is reset by the next PollIdle anyway)
	}
	p.idleAt = 0
	p.busyAt = p.e.now
}

// PollIdle reports that poller p (running) finished a round (begun with
// PollStart) that found nothing to do and changed nothing another agent
// reads, and returns whether the simulation is frozen (see above): no
// other event pending, or run since every live poller's last idle round
// began.
func (p *Proc) PollIdle() bool {
	if p.PollOthersPending() {
		return false
	}
	e := p.e
	if e.epoch() != p.roundAt { // another agent ran during the round: its polls may be stale
		p.PollBusy()
		return false
	}
	now := e.epoch() + 1
	if e.idleEpoch != now { // another event ran since the rounds counted
		e.idleEpoch, e.idlePollers = now, 0
	}
	if p.idleAt != now {
		p.idleAt = now
		e.idlePollers++
	}
	return e.idlePollers == e.pollers
}

// PollRound ends one of poller p's rounds (begun with PollStart): found
// reports whether it found work. It returns true when the simulation is
// frozen (PollIdle), after failing the run with PollDeadlock's error; the
// poller must then stop polling.
func (p *Proc) PollRound(found bool) (frozen bool) {
	if found {
		p.PollBusy()
		return false
	}
	if !p.PollIdle() {
		return false
	}
	p.e.Fail(p.e.PollDeadlock())
	return true
}

// PollDeadlock is the error of a frozen simulation: a *DeadlockError
// listing the processes that are not pollers, and the pollers with what
// they poll.
func (e *Engine) PollDeadlock() error {
	d := &DeadlockError{At: e.now, Blocked: e.blockedProcsBut(true), Polling: e.pollers}
	for _, q := range e.pollerProcs {
		d.Pollers = append(d.Pollers, BlockedProc{Name: q.name, Waits: q.polls, Since: q.busyAt})
	}
	return d
}
