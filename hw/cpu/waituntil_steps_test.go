package cpu

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// waitSteps runs a thread's rounds of work and polling waits with the
// step forms (BeginSleep, BeginWaitUntil, Try), lent by its coroutine.
type waitSteps struct {
	th     *Thread
	sig    *sim.Signal
	cond   func() bool
	rounds int
	work   sim.Duration
	i      int
	pc     uint8
}

func (w *waitSteps) Step(p *sim.Proc) bool {
	for !p.Waited() {
		if w.i == w.rounds {
			return true
		}
		if w.pc == 0 || w.pc == 2 {
			if w.pc == 0 {
				w.th.BeginSleep(w.work)
			} else {
				w.th.BeginWaitUntil(w.sig, "a flag", w.cond)
			}
			w.pc++
		}
		if !w.th.Try() {
			continue
		}
		if w.pc++; w.pc == 4 {
			w.pc, w.i = 0, w.i+1
		}
	}
	return false
}

// WaitUntil as steps (BeginWaitUntil, Try) is WaitUntil: helper threads
// time-sliced on fewer cores than threads, each working and then spinning
// until a counter another agent raises at uneven times reaches its next
// value (some already reached, so the wait returns at once), end at the
// same times with the same time on their cores, the same scheduler
// statistics, in the same number of events.
func TestWaitUntilStepsMatchWaitUntil(t *testing.T) {
	run := func(steps bool, cores int) string {
		e := sim.New(1)
		sp := spec()
		sp.Cores, sp.TimeSlice = cores, 3*sim.Microsecond
		c := newTestCPU(e, sp)
		var sig sim.Signal
		count := 0
		e.Spawn("raiser", func(p *sim.Proc) {
			for k := range 40 {
				p.Sleep(sim.Duration(k%7+1) * 900 * sim.Nanosecond)
				count++
				sig.Notify()
			}
		})
		const threads, rounds = 5, 7
		ends, onCore := make([]sim.Time, threads), make([]sim.Duration, threads)
		for i := range threads {
			want := 0
			cond := func() bool { return count >= want }
			work := sim.Duration(i*400+300) * sim.Nanosecond
			if _, err := c.SpawnOn(i%cores, fmt.Sprint("h", i), func(th *Thread) {
				if steps {
					w := &waitSteps{th: th, sig: &sig, rounds: rounds, work: work}
					w.cond = func() bool { want = w.i*5 + i; return cond() }
					th.RunSteps(w)
				} else {
					for r := range rounds {
						th.Sleep(work)
						th.WaitUntil(&sig, "a flag", func() bool { want = r*5 + i; return cond() })
					}
				}
				ends[i], onCore[i] = th.Now(), th.OnCore()
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ends, onCore, c.Stats(), c.CoreStats(), e.Events())
	}
	for _, cores := range []int{1, 2, 5} {
		a, b := run(false, cores), run(true, cores)
		if a != b {
			t.Errorf("%d cores: WaitUntil %s\nsteps %s", cores, a, b)
		}
	}
}
