package cpu

import (
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/sim"
)

// core is one host core: the thread on it, the threads waiting for it, and
// its time accounting. Scheduling is round robin with a time slice
// (cpu.time_slice); putting a different thread on the core costs
// cpu.context_switch of core time.
type core struct {
	cur      *Thread   // on the core (running, polling or blocked in a device access)
	queue    []*Thread // runnable threads waiting for the core, in order
	readyAt  sim.Time  // end of the context switch in progress
	sliceEnd sim.Time  // end of cur's slice
	id       int
	cpu      *CPU
	last     any      // identity of the thread whose context the core holds
	since    sim.Time // when cur was put on the core
	threads  int      // live threads placed on the core
	timerGen uint64   // identifies the latest slice timer
	stats    CoreStats
	waitName string // what a thread waiting for the core waits for (deadlock reports)
}

// CoreStats is what one core did.
type CoreStats struct {
	Busy     sim.Duration // time a thread held the core (running, polling or switching in)
	Polling  sim.Duration // part of Busy spent spinning on a word or event queue
	Switches uint64       // context switches (a different thread put on the core)
}

// Utilization returns the fraction of elapsed during which the core was busy.
func (s CoreStats) Utilization(elapsed sim.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(s.Busy) / float64(elapsed)
}

// CoreStats returns per-core accounting up to now, including the interval
// of the threads on the cores at this moment.
func (c *CPU) CoreStats() []CoreStats { return c.CoreStatsAt(c.e.Now()) }

// CoreStatsAt is CoreStats with the threads on the cores counted up to
// now, not less than this CPU's engine's time: at the end of a partitioned
// run the latest partition's time (sim.Group.Now), which one engine's
// time would be, whereas this CPU's engine stopped at its own last event.
func (c *CPU) CoreStatsAt(now sim.Time) []CoreStats {
	out := make([]CoreStats, len(c.cores))
	now = max(now, c.e.Now())
	for i, k := range c.cores {
		out[i] = k.stats
		if k.cur != nil {
			out[i].Busy += now - k.since
			if k.cur.polling {
				out[i].Polling += now - k.cur.pollSince
			}
		}
	}
	return out
}

// OnCore returns the time t has held its core up to now (running,
// polling or switching in): the core activity energy charges to the
// thread (the dissertation), which is less than its lifetime when it
// shares the core with other threads.
func (t *Thread) OnCore() sim.Duration {
	d := t.onCore
	if k := t.core; k != nil && k.cur == t {
		d += t.cpu.e.Now() - k.since
	}
	return d
}

// place returns the core for a thread the scheduler places: the one with
// the fewest live threads, the lowest index among equals. Threads do not
// migrate afterwards.
func (c *CPU) place() *core { return c.placeAvoiding(nil) }

// placeAvoiding is place, but among equally loaded cores it takes avoid
// last: an OpenMP team thread does not join its master's core while
// another core is as free.
func (c *CPU) placeAvoiding(avoid *core) *core {
	var best *core
	for _, k := range c.cores {
		if best == nil || k.threads < best.threads || (best == avoid && k.threads == best.threads) {
			best = k
		}
	}
	return best
}

// Contended reports whether a thread that is no busy poller waits for
// t's core: a busy poller's idle round is then no proof that nothing
// changes (the core passes to the waiter at the slice end, and it may
// find work; sim/poll.go). Pollers waiting for the core count as idle
// pollers do: their own rounds, once they run, say whether they are.
func (t *Thread) Contended() bool {
	if t.core == nil {
		return false
	}
	for _, q := range t.core.queue {
		if !q.Proc.Polling() {
			return true
		}
	}
	return false
}

// acquire returns once t holds its core and the switch to it is done.
func (t *Thread) acquire() {
	for !t.tryAcquire() {
	}
}

// acqState is where a thread's acquire of its core stands (tryAcquire).
type acqState uint8

const (
	acqIdle  acqState = iota // not acquiring
	acqTurn                  // queued, waiting on turn until the core is t's
	acqReady                 // on the core, sleeping out the context switch
)

// tryAcquire is acquire as a step: it reports true once t holds its core
// and the switch to it is done, false when it waited (or must wait) and
// has to be called again after the wait, which a step process's next Step
// does and acquire's loop does at once (a coroutine's wait has returned).
// Each call waits at most once, at its end, where acquire waits, so both
// forms schedule the same events.
func (t *Thread) tryAcquire() bool {
	k := t.core
	switch t.acq {
	case acqTurn:
		if k.cur != t {
			t.Proc.Wait(&t.turn, k.waitName)
			return false
		}
		t.awake = false
	case acqReady:
		t.acq = acqIdle
		return true
	default:
		if k.cur == nil && len(k.queue) == 0 {
			k.dispatch(t)
		} else if k.cur != t {
			if !t.queued {
				k.queue = append(k.queue, t)
				t.queued = true
			}
			t.awake = true
			k.armTimer()
			if k.waitName == "" { // named once, on first contention
				k.waitName = fmt.Sprintf("%s core %d", t.cpu.name, k.id)
			}
			t.acq = acqTurn
			return t.tryAcquire()
		}
	}
	if r := k.readyAt; r > t.Now() || r < 0 { // SleepUntil waits (or reports the overflow)
		t.acq = acqReady
		t.Proc.SleepUntil(r)
		return false
	}
	t.acq = acqIdle
	return true
}

// dispatch puts t on the core.
func (k *core) dispatch(t *Thread) {
	now := k.cpu.e.Now()
	k.cur, k.since, k.readyAt = t, now, now
	if k.last != nil && k.last != t.ident {
		k.readyAt += k.cpu.spec.ContextSwitch
		k.stats.Switches++
	}
	k.last = t.ident
	k.sliceEnd = k.readyAt + k.cpu.spec.TimeSlice
	if t.polling {
		t.pollSince = k.readyAt
	}
	t.turn.Notify()
	k.armTimer()
}

// release takes the thread on the core off it (it blocks, yields or ends)
// and puts the next waiting thread on.
func (k *core) release() {
	t := k.cur
	now := k.cpu.e.Now()
	k.stats.Busy += now - k.since
	t.onCore += now - k.since
	if t.polling {
		k.stats.Polling += max(0, now-t.pollSince)
	}
	k.cur = nil
	if len(k.queue) > 0 {
		next := k.queue[0]
		k.queue = slices.Delete(k.queue, 0, 1)
		next.queued = false
		k.dispatch(next)
	}
}

// preempt moves the thread on the core to the back of the queue and puts
// the next one on.
func (k *core) preempt() {
	t := k.cur
	k.queue = append(k.queue, t)
	t.queued = true
	k.release()
}

// armTimer schedules the end of the current slice when a thread that is
// not running instructions holds the core while an awake thread waits. A
// thread running instructions yields by itself at its slice end (runFor);
// when only parked pollers wait, their slices change nothing observable
// until one of them wakes, which arms the timer then.
func (k *core) armTimer() {
	if k.cur == nil || k.cur.running || !k.hasAwake() {
		return
	}
	k.timerGen++
	gen, at := k.timerGen, k.nextSliceEnd()
	schedule := k.cpu.e.At
	if k.pollersOnly() {
		schedule = k.cpu.e.AtPoller // one busy poller hands the core to another: no agent's progress (sim/poll.go)
	}
	schedule(at, func() {
		if gen == k.timerGen && k.cur != nil && !k.cur.running && len(k.queue) > 0 {
			k.preempt()
		}
	})
}

// nextSliceEnd returns the first slice boundary of the current holder not
// before now (an uncontended holder's slices renew back to back).
func (k *core) nextSliceEnd() sim.Time {
	now, s := k.cpu.e.Now(), k.cpu.spec.TimeSlice
	if k.sliceEnd >= now || s <= 0 {
		return max(k.sliceEnd, now)
	}
	n := (now - k.sliceEnd + s - 1) / s
	return k.sliceEnd + n*s
}

// pollersOnly reports whether the thread on the core and every thread
// waiting for it are busy pollers.
func (k *core) pollersOnly() bool {
	if k.cur == nil || !k.cur.Proc.Polling() {
		return false
	}
	for _, t := range k.queue {
		if !t.Proc.Polling() {
			return false
		}
	}
	return true
}

func (k *core) hasAwake() bool {
	for _, t := range k.queue {
		if t.awake {
			return true
		}
	}
	return false
}

// runFor keeps t's core busy for d of core time, yielding at the end of
// each slice while another thread waits for the core.
func (t *Thread) runFor(d sim.Duration) {
	t.beginRun(d)
	for !t.tryRun() {
	}
}

// runState is where a thread's run of core time stands (tryRun).
type runState uint8

const (
	runIdle     runState = iota // no run in progress
	runCore                     // acquiring the core for the next chunk
	runChunk                    // sleeping a chunk of the run on the core
	runYield                    // a zero run: acquiring, then Sleep(0)
	runOverflow                 // a run past the clock: SleepUntil(MaxTime)
	runDone                     // the last wait is over
)

// beginRun starts a run of d of core time, advanced by tryRun.
func (t *Thread) beginRun(d sim.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("cpu: %s runs for negative %v", t.track, d))
	}
	t.runLeft = d
	switch {
	case t.Now().Add(d) == sim.MaxTime: // would end past the clock: report the overflow now, not after MaxTime/slice slices
		t.run = runOverflow
	case d == 0: // yields to the other events of this instant, like sim.Proc.Sleep(0)
		t.run = runYield
	default:
		t.run = runCore
	}
}

// tryRun is runFor as a step: it advances the run begun by beginRun and
// reports true once it is over, false when it waited (or changed state)
// and has to be called again. Each call waits at most once, at its end,
// where runFor waits.
func (t *Thread) tryRun() bool {
	switch t.run {
	case runOverflow:
		t.run = runDone
		t.Proc.SleepUntil(sim.MaxTime)
		return false
	case runYield:
		if !t.tryAcquire() {
			return false
		}
		t.run = runDone
		t.Proc.Sleep(0)
		return false
	case runDone:
		t.run = runIdle
		return true
	case runChunk:
		t.running = false
		t.runLeft -= t.chunk
		t.run = runCore
	}
	if !t.tryAcquire() {
		return false
	}
	if t.runLeft <= 0 {
		t.run = runIdle
		return true
	}
	k := t.core
	now := t.Now()
	if now >= k.sliceEnd {
		if len(k.queue) > 0 {
			k.preempt()
			return false // acquire again, behind the queue
		}
		k.sliceEnd = now + t.cpu.spec.TimeSlice
	}
	t.chunk = min(t.runLeft, k.sliceEnd-now)
	t.running = true
	t.run = runChunk
	t.Proc.Sleep(t.chunk)
	return false
}

// spin runs wait (which blocks t's process until what it polls for
// happens) with t polling on its core: the core stays busy, and the slice
// timer may take it away while another thread waits.
func (t *Thread) spin(wait func()) {
	t.acquire()
	t.polling, t.pollSince = true, t.Now()
	t.core.armTimer()
	wait()
	if t.core.cur == t {
		t.core.stats.Polling += t.Now() - t.pollSince
	}
	t.polling = false
	t.acquire()
}

// block runs wait with t off its core (a blocking wait: the thread sleeps
// in the kernel and the core runs others), then pays the wake-up latency
// and waits for the core again.
func (t *Thread) block(wait func()) {
	t.acquire()
	t.core.release()
	wait()
	t.Proc.Sleep(t.cpu.spec.WakeLatency)
	t.acquire()
}

// SliceLeft returns how long t, holding its core with the switch to it
// done, runs before its slice ends: within that time no other thread can
// take the core from a thread that runs (runFor checks its queue only at
// a slice end), so a run of work that ends by then takes the same time
// however it is split. It returns 0 when t does not hold its core or the
// slice is over (the next run renews it, or yields to a waiting thread).
func (t *Thread) SliceLeft() sim.Duration {
	k := t.core
	now := t.Now()
	if k.cur != t || t.acq != acqIdle || k.readyAt > now || now >= k.sliceEnd {
		return 0
	}
	return k.sliceEnd - now
}

// RunInstr charges n runtime instructions and keeps the core busy for d:
// a stretch of work whose instructions and waits the caller computed in
// one go (GIO's templater over QPs nobody has posted to), as one run
// instead of one per instruction block and wait. d must be positive and
// within SliceLeft for the same times as the runs it stands for.
func (t *Thread) RunInstr(n uint64, d sim.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("cpu: %s runs a batch of %v", t.track, d))
	}
	t.cpu.instr += n
	t.runFor(d)
}
