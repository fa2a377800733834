package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// keyedPoller reads a word at 10 ps and, at 15 ps (its "end" event),
// continues if the word changed meanwhile or else waits for a write to
// it, then logs its wake-up: as scheduled events (skip false), or with
// the end skipped by WaitNotBefore (skip true).
type keyedPoller struct {
	skip bool
	x    *uint64
	sig  *Signal
	log  *[]string
	pc   int
	seen uint64
}

func (k *keyedPoller) Step(p *Proc) bool {
	logf := func(f string, a ...any) { *k.log = append(*k.log, fmt.Sprintf("%v ", p.Now())+fmt.Sprintf(f, a...)) }
	switch k.pc {
	case 0:
		k.pc = 1
		p.Sleep(10)
	case 1: // the read
		k.seen = *k.x
		logf("read %d", k.seen)
		k.pc = 2
		if k.skip {
			p.WaitNotBefore(k.sig, "word", p.Now()+5, p.Engine().ReserveSeq())
			return false
		}
		p.Sleep(5)
	case 2: // the end, or the wake-up after it
		if k.skip && !p.WokeAtKey() {
			k.pc = 3
			return false // woken as after the end's wait
		}
		if *k.x != k.seen {
			logf("end: changed to %d", *k.x)
			return true
		}
		logf("end: waits") // the skipped event's own line
		k.pc = 3
		p.Wait(k.sig, "word")
	default:
		logf("woken, word %d", *k.x)
		return true
	}
	return false
}

// runKeyed runs a keyedPoller against writers (callbacks writing the word
// and notifying, each at its time, scheduled at the time given) and
// bystanders that log their turn; rival, if ≥ 0, is when a second process
// starts waiting on the signal. It returns the log, without the end's
// "waits" line, and the events run.
func runKeyed(skip bool, writes [][2]Time, rival Time, nudge Time) ([]string, uint64) {
	e := New(1)
	var x uint64
	var sig Signal
	var log []string
	k := &keyedPoller{skip: skip, x: &x, sig: &sig, log: &log}
	p := e.SpawnSteps("poller", k)
	for i, w := range writes {
		at, when := w[0], w[1]
		e.At(when, func() {
			e.At(at, func() {
				x = uint64(i + 1)
				log = append(log, fmt.Sprintf("%v write %d", e.Now(), x))
				sig.Notify()
			})
			e.At(at, func() { log = append(log, fmt.Sprintf("%v bystander %d", e.Now(), i)) })
		})
	}
	if rival >= 0 {
		e.At(rival, func() {
			e.SpawnSteps("rival", &keyedRival{sig: &sig, log: &log})
		})
	}
	if nudge >= 0 {
		e.At(nudge, func() {
			x = 99
			log = append(log, fmt.Sprintf("%v nudge", e.Now()))
			p.Nudge()
		})
	}
	if err := e.Run(); err != nil {
		log = append(log, err.Error())
	}
	return slices.DeleteFunc(log, func(s string) bool { return strings.HasSuffix(s, "end: waits") }), e.Events()
}

// keyedRival waits on the signal once and logs its wake-up.
type keyedRival struct {
	sig  *Signal
	log  *[]string
	done bool
}

func (r *keyedRival) Step(p *Proc) bool {
	if r.done {
		*r.log = append(*r.log, fmt.Sprintf("%v rival woken", p.Now()))
		return true
	}
	r.done = true
	p.Wait(r.sig, "rival")
	return false
}

// A wait that skips its event resumes exactly as the run that schedules
// the event: writes before, at (scheduled before and after the skip) and
// after the skipped event's time, a second waiter arriving before and
// after it, a nudge; every event but the skipped one is the same, at the
// same time, in the same order.
func TestWaitNotBeforeMatchesScheduledEvent(t *testing.T) {
	for _, tc := range []struct {
		name          string
		writes        [][2]Time // write time, scheduled at
		rival, nudge  Time
		skippedEvents uint64 // events the skip saves
	}{
		{name: "write before the key", writes: [][2]Time{{12, 0}}, rival: -1, nudge: -1},
		{name: "write at the key, scheduled first", writes: [][2]Time{{15, 0}}, rival: -1, nudge: -1},
		{name: "write at the key, scheduled after the skip", writes: [][2]Time{{15, 11}}, rival: -1, nudge: -1, skippedEvents: 1},
		{name: "write at the key, scheduled at the skip", writes: [][2]Time{{15, 10}}, rival: -1, nudge: -1},
		{name: "write after the key", writes: [][2]Time{{30, 0}}, rival: -1, nudge: -1, skippedEvents: 1},
		{name: "write at the read", writes: [][2]Time{{10, 0}}, rival: -1, nudge: -1},
		{name: "two writes around the key", writes: [][2]Time{{13, 0}, {30, 0}}, rival: -1, nudge: -1},
		{name: "rival waits before the key", writes: [][2]Time{{30, 0}}, rival: 12, nudge: -1},
		{name: "rival waits after the key", writes: [][2]Time{{30, 0}}, rival: 20, nudge: -1, skippedEvents: 1},
		{name: "nudge before the key", writes: [][2]Time{{30, 0}}, rival: -1, nudge: 14},
		{name: "nudge after the key", writes: [][2]Time{{30, 0}}, rival: -1, nudge: 16, skippedEvents: 1},
		{name: "no write ever", rival: -1, nudge: -1, skippedEvents: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantEvents := runKeyed(false, tc.writes, tc.rival, tc.nudge)
			got, gotEvents := runKeyed(true, tc.writes, tc.rival, tc.nudge)
			if !slices.Equal(got, want) {
				t.Errorf("skipped:\n%s\nscheduled:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if wantEvents-gotEvents != tc.skippedEvents {
				t.Errorf("events %d skipped, %d scheduled: want %d fewer", gotEvents, wantEvents, tc.skippedEvents)
			}
		})
	}
}

// countedReason is a Reason that counts how often it is formatted.
type countedReason struct{ n *int }

func (r countedReason) What() string { *r.n++; return "word 0x40 7" }

// reasonWaiter waits by WaitNotBeforeFor, then (when woken) by a plain
// Wait, on signals nobody notifies after its first wake-up.
type reasonWaiter struct {
	keyed, plain *Signal
	why          Reason
	pc           int
}

func (w *reasonWaiter) Step(p *Proc) bool {
	switch w.pc {
	case 0:
		w.pc = 1
		p.WaitNotBeforeFor(w.keyed, w.why, p.Now()+5, p.Engine().ReserveSeq())
	case 1:
		p.WokeAtKey()
		w.pc = 2
		p.Wait(w.plain, "plain")
	}
	return false
}

// TestWaitNotBeforeForFormatsOnRead: a WaitNotBeforeFor wait's reason is
// formatted only when the deadlock report reads it, and the report names
// it; a later plain wait's report names the plain reason, not the stale
// one.
func TestWaitNotBeforeForFormatsOnRead(t *testing.T) {
	for _, wake := range []bool{false, true} {
		e := New(1)
		var n int
		var keyed, plain Signal
		e.SpawnSteps("w", &reasonWaiter{keyed: &keyed, plain: &plain, why: countedReason{&n}})
		if wake {
			e.At(3, keyed.Notify) // before the key: resumed there, then waits on plain
		}
		err := e.Run()
		var de *DeadlockError
		if !errors.As(err, &de) || len(de.Blocked) != 1 {
			t.Fatalf("wake %v: want a deadlock of one process, got %v", wake, err)
		}
		want, calls := "word 0x40 7", 1
		if wake {
			want, calls = "plain", 0
		}
		if got := de.Blocked[0].Waits; got != want || n != calls {
			t.Errorf("wake %v: report says %q after %d formattings, want %q after %d", wake, got, n, want, calls)
		}
	}
}

// waitForSteps waits on s by WaitFor and never finishes.
type waitForSteps struct {
	s   *Signal
	why Reason
}

func (w waitForSteps) Step(p *Proc) bool { p.WaitFor(w.s, w.why); return false }

// TestWaitForFormatsOnRead: WaitFor's reason, in a coroutine and in a step
// process, is formatted only by the deadlock report, which names it.
func TestWaitForFormatsOnRead(t *testing.T) {
	for _, steps := range []bool{false, true} {
		e := New(1)
		var n int
		var s Signal
		why := countedReason{&n}
		if steps {
			e.SpawnSteps("w", waitForSteps{&s, why})
		} else {
			e.Spawn("w", func(p *Proc) { p.WaitFor(&s, why) })
		}
		err := e.Run()
		var de *DeadlockError
		if !errors.As(err, &de) || len(de.Blocked) != 1 {
			t.Fatalf("steps %v: want a deadlock of one process, got %v", steps, err)
		}
		if got := de.Blocked[0].Waits; got != "word 0x40 7" || n != 1 {
			t.Errorf("steps %v: report says %q after %d formattings, want %q after 1", steps, got, n, "word 0x40 7")
		}
	}
}

// sleepThenKeyed sleeps, then waits by WaitNotBeforeFor in the same step.
type sleepThenKeyed struct {
	s   *Signal
	why Reason
}

func (w sleepThenKeyed) Step(p *Proc) bool {
	p.Sleep(1)
	p.WaitNotBeforeFor(w.s, w.why, p.Now()+5, p.Engine().ReserveSeq())
	return false
}

// TestWaitNotBeforeForSecondWaitNamed: a step that waits twice, the second
// time by WaitNotBeforeFor, panics naming both waits' reasons.
func TestWaitNotBeforeForSecondWaitNamed(t *testing.T) {
	e := New(1)
	var n int
	var s Signal
	e.SpawnSteps("greedy", sleepThenKeyed{&s, countedReason{&n}})
	err := e.Run()
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(fmt.Sprint(pe.Value), "waits twice in one step (sleep, then word 0x40 7)") {
		t.Fatalf("err = %v, want a panic naming both waits", err)
	}
	e.Close()
}
