package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// scripted is a step process that runs a drawn list of waits, one per
// step, and then hands itself to whoever respawns finished processes.
type scripted struct {
	id   int
	ops  []int // > 0: sleep that long; 0: Sleep(0); < 0: wait on signal −op−1
	pc   int
	sigs []Signal
	log  *[]string
	done func(s *scripted)
	proc *Proc
}

func (s *scripted) Step(p *Proc) bool {
	*s.log = append(*s.log, fmt.Sprintf("%d.%d@%v", s.id, s.pc, p.Now()))
	if s.pc == len(s.ops) {
		s.done(s)
		return true
	}
	op := s.ops[s.pc]
	s.pc++
	if op >= 0 {
		p.Sleep(Duration(op))
	} else {
		p.Wait(&s.sigs[-op-1], "signal")
	}
	return false
}

// TestStepsReuseMatchesFresh runs random workloads of step processes
// (sleeps, signal waits, notifiers at random times) where each process
// that finishes is replaced by the next of a list: once with a new Proc
// for each (SpawnSteps), once reusing the finished ones' Procs
// (SpawnStepsIn). A wake-up left over from a process's earlier life would
// resume its successor early and show in the log or the event count.
func TestStepsReuseMatchesFresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const nsig = 3
		scripts := rapid.SliceOfN(rapid.SliceOfN(rapid.IntRange(-nsig, 4), 0, 6), 1, 24).Draw(t, "scripts")
		notes := rapid.SliceOfN(rapid.IntRange(0, 40), 0, 30).Draw(t, "notify times")
		live := rapid.IntRange(1, 4).Draw(t, "live at once")
		requireSameRuns(t, "reused procs", func(reuse bool) ([]string, uint64) {
			e := New(1)
			var log []string
			sigs := make([]Signal, nsig)
			for i, at := range notes {
				e.At(Time(at), func() { sigs[i%nsig].Notify() })
			}
			next := 0
			// Keep every signal waiter wakeable: notify them all every
			// 50 ps while any process is live or still to start.
			var tick func()
			tick = func() {
				for i := range sigs {
					sigs[i].Notify()
				}
				if e.Live() > 0 || next < len(scripts) {
					e.After(50, tick)
				}
			}
			e.At(50, tick)
			var start func(p *Proc, i int)
			done := func(s *scripted) {
				if next == len(scripts) {
					return
				}
				i := next
				next++
				// The successor starts from a callback at the same time,
				// when the finished process is done.
				e.At(e.Now(), func() {
					if reuse {
						start(s.proc, i)
					} else {
						start(new(Proc), i)
					}
				})
			}
			start = func(p *Proc, i int) {
				s := &scripted{id: i, ops: scripts[i], sigs: sigs, log: &log, done: done, proc: p}
				e.SpawnStepsIn(p, "s", s)
			}
			for range min(live, len(scripts)) {
				start(new(Proc), next)
				next++
			}
			return runLogged(t, e, &log)
		})
	})
}

type sleepAndFinish struct{}

func (sleepAndFinish) Step(p *Proc) bool { p.Sleep(5); return true }

// A step that waits and reports the process finished would leave a
// wake-up behind for whatever reuses the Proc: the run fails naming it.
func TestStepsFinishAfterWaitRefused(t *testing.T) {
	e := New(1)
	e.SpawnSteps("hasty", sleepAndFinish{})
	var pe *PanicError
	if err := e.Run(); !errors.As(err, &pe) || pe.Proc != "hasty" || !strings.Contains(fmt.Sprint(pe.Value), "finishes in a step that waited") {
		t.Fatalf("err = %v, want a panic of hasty about finishing after a wait", err)
	}
	e.Close()
}

// SpawnStepsIn refuses a Proc that is live, a coroutine, or another
// engine's.
func TestSpawnStepsInRefusesLive(t *testing.T) {
	e := New(1)
	live := e.SpawnSteps("live", waitForever{new(Signal)})
	co := e.Spawn("co", func(p *Proc) {})
	e.At(50, func() {})
	if err := e.RunUntil(10); err != nil || !co.Done() || live.Done() {
		t.Fatalf("err = %v, co done %v, live done %v: want co finished and live waiting", err, co.Done(), live.Done())
	}
	other := New(1)
	finished := other.SpawnSteps("other", &sleepTwice{log: new([]Time)})
	if err := other.Run(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Proc{live, co, finished} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not a finished step process of this engine") {
					t.Errorf("SpawnStepsIn into %s: recovered %v, want a refusal", p.Name(), r)
				}
			}()
			e.SpawnStepsIn(p, "new", sleeper{1})
		}()
	}
	e.Close()
}
