package sim

import "fmt"

// Relayed sleeps. A step process whose next wake-ups would each only do
// bookkeeping of its own (nothing another agent reads) and sleep again
// for a duration it already knows — a service thread's empty poll: the
// load's latency ends, the poll's instructions run, the next poll's
// acquire marker invalidates the thread's private L1 — need not run its
// body in those events. ThenSleep queues such sleeps: the wake-up that
// ends the pending sleep schedules the next one itself, exactly as the
// body's Sleep in that event would have (the same time, the next
// sequence number, the same poller accounting), and the body runs only
// at the last. The events, their keys and their count are those of the
// body doing the sleeps; only the body's calls in between are saved, and
// the body catches up on its bookkeeping when it runs again (or when
// someone reads it early: RelaysRun, CancelThen).

// ThenSleep appends a sleep of d to run after p's pending sleep without
// running p's body in between (see above). p must be a step process (or
// lend its process to RunSteps) that has just waited in Sleep in its
// current step; d must be positive. At most two may be queued.
func (p *Proc) ThenSleep(d Duration) {
	if p.steps == nil || !p.waited || d <= 0 || int(p.thenN) == len(p.then) {
		panic(fmt.Sprintf("sim: ThenSleep(%v) of %q: a step process that has just slept, a positive duration, at most %d queued", d, p.name, len(p.then)))
	}
	p.then[p.thenN] = d
	p.thenN++
}

// RelayCheck decides in a wake-up that would relay a sleep queued by
// ThenSleepIf whether it may: it does there, at that event's time and
// place, whatever of the body's work reads or changes others' state
// (true), or nothing (false: the body runs in that wake-up instead, the
// sleep still counted in ThenLeft).
type RelayCheck interface {
	RelayOK(p *Proc) bool
}

// ThenSleepIf is ThenSleep(d) for a sleep whose wake-up relays it only if
// c.RelayOK says so.
func (p *Proc) ThenSleepIf(d Duration, c RelayCheck) {
	p.ThenSleep(d)
	p.thenC[p.thenN-1] = c
}

// ThenLeft returns how many sleeps queued by ThenSleep have not begun:
// the wake-ups that have run since are the relayed ones before them.
func (p *Proc) ThenLeft() int { return int(p.thenN) }

// CancelThen drops the sleeps queued by ThenSleep that have not begun:
// the pending wake-up runs the body again (whose owner caught up on the
// relayed events' bookkeeping and continues from there).
func (p *Proc) CancelThen() { p.thenN, p.thenC = 0, [2]RelayCheck{} }

// StopRelays makes every later wake-up of p run its body, the ones whose
// sleeps ThenSleep queued included (they stay counted in ThenLeft): for an
// agent that changes what the relayed wake-ups were known not to read (a
// thread bound to a core p's owner held alone).
func (p *Proc) StopRelays() { p.noRelay = true }

// relay is a wake-up that ends a sleep followed by a queued one: it
// begins the next sleep as the body's Sleep would (Sleep and block), or
// reports false when the sleep's check refuses (the body runs).
func (p *Proc) relay() bool {
	if p.noRelay {
		return false
	}
	if c := p.thenC[0]; c != nil && !c.RelayOK(p) {
		return false
	}
	d := p.then[0]
	p.then[0], p.thenC[0], p.thenC[1] = p.then[1], p.thenC[1], nil
	p.thenN--
	p.e.wake(p.e.now+d, p)
	p.reason, p.why, p.since = "sleep", nil, p.e.now
	p.e.relays++
	return true
}

// Relays returns how many wake-ups so far relayed a sleep queued by
// ThenSleep instead of running a body (they are counted in Events too).
func (e *Engine) Relays() uint64 { return e.relays }
