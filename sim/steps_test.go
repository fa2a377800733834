package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// stepScript is the step form of scriptBody: the same waits, one per step.
type stepScript struct {
	sig *Signal
	log *[]string
	pc  int
}

func (s *stepScript) Step(p *Proc) bool {
	*s.log = append(*s.log, fmt.Sprintf("%d@%v", s.pc, p.Now()))
	s.pc++
	switch s.pc {
	case 1:
		p.Sleep(3)
	case 2:
		p.SleepUntil(p.Now()) // does not block: the next step runs at once
	case 3:
		p.Wait(s.sig, "the signal")
	case 4:
		p.Sleep(0)
	case 5:
		p.SleepUntil(40)
	default:
		return true
	}
	return false
}

// scriptBody is a coroutine body with the waits of stepScript.
func scriptBody(sig *Signal, log *[]string) func(p *Proc) {
	return func(p *Proc) {
		note := func(pc int) { *log = append(*log, fmt.Sprintf("%d@%v", pc, p.Now())) }
		note(0)
		p.Sleep(3)
		note(1)
		p.SleepUntil(p.Now())
		note(2)
		p.Wait(sig, "the signal")
		note(3)
		p.Sleep(0)
		note(4)
		p.SleepUntil(40)
		note(5)
	}
}

// run runs two agents and a notifier: the spawn order, the callback
// that notifies at 10 and a competing coroutine make event order visible.
func runScript(steps bool) (log []string, events uint64, end Time) {
	e := New(1)
	var sig Signal
	e.At(10, sig.Notify)
	e.Spawn("other", func(p *Proc) {
		for range 4 {
			p.Sleep(5)
			log = append(log, fmt.Sprintf("other@%v", p.Now()))
		}
	})
	var q *Proc
	if steps {
		q = e.SpawnSteps("agent", &stepScript{sig: &sig, log: &log})
	} else {
		q = e.Spawn("agent", scriptBody(&sig, &log))
	}
	e.Spawn("joiner", func(p *Proc) {
		p.Join(q)
		log = append(log, fmt.Sprintf("joined@%v", p.Now()))
	})
	if err := e.Run(); err != nil {
		panic(err)
	}
	return log, e.Events(), e.Now()
}

// A step process runs its steps at the times, in the event order and with
// the event count of the coroutine body that waits where it waits, and
// is joinable.
func TestStepsMatchCoroutine(t *testing.T) {
	wantLog, wantEv, wantEnd := runScript(false)
	gotLog, gotEv, gotEnd := runScript(true)
	if strings.Join(gotLog, " ") != strings.Join(wantLog, " ") || gotEv != wantEv || gotEnd != wantEnd {
		t.Fatalf("steps: %v, %d events, end %v\ncoroutine: %v, %d events, end %v", gotLog, gotEv, gotEnd, wantLog, wantEv, wantEnd)
	}
	if !strings.Contains(strings.Join(gotLog, " "), "joined@40") {
		t.Fatalf("joiner did not see the step process end at 40: %v", gotLog)
	}
}

type twoWaits struct{}

func (twoWaits) Step(p *Proc) bool {
	p.Sleep(1)
	p.Sleep(2)
	return true
}

// A step that waits twice would lose the first wait: the run fails with
// a panic naming the process.
func TestStepsWaitTwice(t *testing.T) {
	e := New(1)
	e.SpawnSteps("greedy", twoWaits{})
	err := e.Run()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Proc != "greedy" || !strings.Contains(fmt.Sprint(pe.Value), "waits twice") {
		t.Fatalf("err = %v, want a panic of greedy about waiting twice", err)
	}
	e.Close()
}

type waitForever struct{ sig *Signal }

func (w waitForever) Step(p *Proc) bool {
	p.Wait(w.sig, "a flag nobody sets")
	return false
}

// A step process stuck on a signal is named, with its wait, in the
// deadlock report, and Close copes with a live process without coroutine.
func TestStepsDeadlock(t *testing.T) {
	e := New(1)
	var sig Signal
	e.SpawnSteps("poller", waitForever{&sig})
	err := e.Run()
	var de *DeadlockError
	if !errors.As(err, &de) || len(de.Blocked) != 1 || de.Blocked[0].Name != "poller" || de.Blocked[0].Waits != "a flag nobody sets" {
		t.Fatalf("err = %v, want a deadlock naming poller", err)
	}
	e.Close()
}

type sleepTwice struct {
	log *[]Time
	n   int
}

func (s *sleepTwice) Step(p *Proc) bool {
	*s.log = append(*s.log, p.Now())
	s.n++
	if s.n > 2 {
		return true
	}
	p.Sleep(3)
	return false
}

// StartSteps runs the first step inside the current event: the process
// that hands over its work schedules no start event, so the events are
// those of the coroutine doing the work itself.
func TestStartStepsInPlace(t *testing.T) {
	run := func(handOver bool) ([]Time, uint64) {
		e := New(1)
		var log []Time
		e.SpawnAt(5, "cp", func(p *Proc) {
			if handOver {
				e.StartSteps("worker", &sleepTwice{log: &log})
				return
			}
			for range 2 {
				log = append(log, p.Now())
				p.Sleep(3)
			}
			log = append(log, p.Now())
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return log, e.Events()
	}
	wantLog, wantEv := run(false)
	gotLog, gotEv := run(true)
	if fmt.Sprint(gotLog) != fmt.Sprint(wantLog) || gotEv != wantEv {
		t.Fatalf("handed over: %v, %d events; in place: %v, %d events", gotLog, gotEv, wantLog, wantEv)
	}
}

// Signal.Wake resumes a waiter inside the calling callback event (one
// event fewer than Notify, which schedules the wake-up), and refuses to
// run from a process body.
func TestSignalWake(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		e := New(1)
		var sig Signal
		var woke Time
		e.Spawn("waiter", func(p *Proc) {
			p.Wait(&sig, "wake")
			woke = p.Now()
		})
		e.At(10, func() {
			if inPlace {
				sig.Wake()
			} else {
				sig.Notify()
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want := uint64(3) // start, callback, wake-up
		if inPlace {
			want = 2
		}
		if woke != 10 || e.Events() != want {
			t.Errorf("in place %v: woke at %v after %d events, want 10 and %d", inPlace, woke, e.Events(), want)
		}
	}
	e := New(1)
	var sig Signal
	e.Spawn("waiter", func(p *Proc) { p.Wait(&sig, "wake") })
	e.Spawn("waker", func(p *Proc) { sig.Wake() })
	var pe *PanicError
	if err := e.Run(); !errors.As(err, &pe) || !strings.Contains(fmt.Sprint(pe.Value), "only callback events") {
		t.Fatalf("err = %v, want Wake from a process refused", err)
	}
	e.Close()
}

type sleeper struct{ d Duration }

func (s sleeper) Step(p *Proc) bool { p.Sleep(s.d); return false }

// BenchmarkStepSwitch is BenchmarkProcessSwitch for step processes: the
// cost of one wake-up (event plus step call) with 1e3 live step
// processes, to compare with a coroutine's ns/switch.
func BenchmarkStepSwitch(b *testing.B) {
	e := New(1)
	const procs = 1000
	for i := range procs {
		e.SpawnSteps("p", sleeper{Time(1 + i%13)})
	}
	measureSwitches(b, e)
}
