package sched

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// busySteps runs a thread's stretches of work as steps (BeginBusy,
// TryBusy) lent by its coroutine (sim.Proc.RunSteps).
type busySteps struct {
	th    *Thread
	works []sim.Duration
	i     int
	begun bool
}

func (b *busySteps) Step(*sim.Proc) bool {
	for b.i < len(b.works) {
		if !b.begun {
			b.th.BeginBusy(b.works[b.i])
			b.begun = true
		}
		if !b.th.TryBusy() {
			return false
		}
		b.begun = false
		b.i++
	}
	return true
}

// Busy as steps is Busy: threads of uneven stretches (zero ones too)
// time-sliced on fewer cores than threads, some started late, end at the
// same times with the same busy time and preemptions, in the same number
// of events, whether they call Busy or run BeginBusy/TryBusy as steps.
func TestBusyStepsMatchBusy(t *testing.T) {
	type out struct {
		ends, busy []sim.Time
		pre        []uint64
		events     uint64
	}
	run := func(steps bool, cores int) out {
		e := sim.New(1)
		s := New("cp", cores, 3*sim.Microsecond)
		const n = 5
		o := out{ends: make([]sim.Time, n), busy: make([]sim.Time, n), pre: make([]uint64, n)}
		for i := range n {
			var works []sim.Duration
			for k := range 12 {
				works = append(works, sim.Duration((i*7+k*5)%9)*700*sim.Nanosecond)
			}
			e.Spawn("t", func(p *sim.Proc) {
				p.Sleep(sim.Duration(i) * 1100 * sim.Nanosecond)
				th := s.Bind(p)
				if steps {
					p.RunSteps(&busySteps{th: th, works: works})
				} else {
					for _, d := range works {
						th.Busy(d)
					}
				}
				th.Exit()
				o.ends[i], o.busy[i], o.pre[i] = p.Now(), th.BusyTime(), th.Preemptions()
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		o.events = e.Events()
		return o
	}
	for _, cores := range []int{1, 2, 5} {
		a, b := run(false, cores), run(true, cores)
		for i := range a.ends {
			if a.ends[i] != b.ends[i] || a.busy[i] != b.busy[i] || a.pre[i] != b.pre[i] {
				t.Errorf("%d cores, thread %d: Busy ends %v busy %v preempted %d; steps %v, %v, %d",
					cores, i, a.ends[i], a.busy[i], a.pre[i], b.ends[i], b.busy[i], b.pre[i])
			}
		}
		if a.events != b.events {
			t.Errorf("%d cores: %d events with Busy, %d with steps", cores, a.events, b.events)
		}
		if cores == 1 && a.pre[0] == 0 {
			t.Errorf("1 core: no preemption: the scenario does not exercise time-slicing")
		}
	}
}
