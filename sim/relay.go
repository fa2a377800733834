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

// ThenLeft returns how many sleeps queued by ThenSleep have not begun:
// the wake-ups that have run since are the relayed ones before them.
func (p *Proc) ThenLeft() int { return int(p.thenN) }

// CancelThen drops the sleeps queued by ThenSleep that have not begun:
// the pending wake-up runs the body again (whose owner caught up on the
// relayed events' bookkeeping and continues from there).
func (p *Proc) CancelThen() { p.thenN = 0 }

// relay is a wake-up that ends a sleep followed by a queued one: it
// begins the next sleep as the body's Sleep would (Sleep and block).
func (p *Proc) relay() {
	d := p.then[0]
	p.then[0] = p.then[1]
	p.thenN--
	p.e.wake(p.e.now+d, p)
	p.reason, p.since = "sleep", p.e.now
	p.e.relays++
}

// Relays returns how many wake-ups so far relayed a sleep queued by
// ThenSleep instead of running a body (they are counted in Events too).
func (e *Engine) Relays() uint64 { return e.relays }
