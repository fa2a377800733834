package sched

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Three threads of 30 µs work on one core with a 10 µs quantum finish
// round-robin: at 70, 80 and 90 µs; on three cores all at 30 µs.
func TestTimeSlicing(t *testing.T) {
	for _, tc := range []struct {
		cores int
		want  []sim.Time
	}{
		{1, []sim.Time{70 * sim.Microsecond, 80 * sim.Microsecond, 90 * sim.Microsecond}},
		{3, []sim.Time{30 * sim.Microsecond, 30 * sim.Microsecond, 30 * sim.Microsecond}},
	} {
		e := sim.New(1)
		s := New("cp", tc.cores, 10*sim.Microsecond)
		ends := make([]sim.Time, 3)
		for i := range 3 {
			e.Spawn("t", func(p *sim.Proc) {
				th := s.Bind(p)
				for range 30 {
					th.Busy(sim.Microsecond)
				}
				th.Exit()
				ends[i] = p.Now()
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		for i := range ends {
			if ends[i] != tc.want[i] {
				t.Errorf("%d cores: thread %d ended at %v, want %v", tc.cores, i, ends[i], tc.want[i])
			}
		}
	}
}

// A thread alone on its core is never preempted, however long it works.
func TestAloneIsNotPreempted(t *testing.T) {
	e := sim.New(1)
	s := New("host", 1, sim.Microsecond)
	var th *Thread
	e.Spawn("t", func(p *sim.Proc) {
		th = s.Bind(p)
		th.Busy(50 * sim.Microsecond)
		th.Exit()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if th.Preemptions() != 0 || th.BusyTime() != 50*sim.Microsecond {
		t.Fatalf("preemptions %d busy %v", th.Preemptions(), th.BusyTime())
	}
}

// The run-queue check reports a core held by or queueing an exited
// thread, a free core with a queue, and a holder longer on its core than
// the run.
func TestSchedInvariants(t *testing.T) {
	s := New("cp", 2, sim.Microsecond)
	if v := s.Invariants("cp", sim.Microsecond); len(v) != 0 {
		t.Fatalf("idle cores: %v", v)
	}
	gone, waiting := &Thread{gone: true}, &Thread{}
	long := &Thread{busy: 3 * sim.Microsecond}
	s.cores[0].holder, s.cores[0].queue = gone, []*Thread{gone}
	s.cores[1].holder = long
	s.cores = append(s.cores, &core{queue: []*Thread{waiting}})
	var all []string
	for _, v := range s.Invariants("cp", sim.Microsecond) {
		all = append(all, v.What)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"core 0 is held by a thread that exited", "core 0 queues a thread that exited",
		"core 2 is free but 1 thread(s) queue for it", "a thread was on its core 3us, longer than the run (1us)"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// aloneSteps binds to a core, asks Alone, sleeps 3 and queues 2 more
// (sim.Proc.ThenSleep), logging when its body runs again and how many
// queued sleeps it finds unrelayed.
type aloneSteps struct {
	s     *Sched
	alone bool
	woke  []sim.Time
	left  int
	pc    int
}

func (a *aloneSteps) Step(p *sim.Proc) bool {
	a.pc++
	if a.pc == 1 {
		a.alone = a.s.Bind(p).Alone()
		p.Sleep(3)
		p.ThenSleep(2)
		return false
	}
	a.woke, a.left = append(a.woke, p.Now()), p.ThenLeft()
	return true
}

// A thread bound to a core that another thread was told it held alone
// stops that thread's relayed wake-ups: its body runs at the next one.
func TestBindStopsRelaysOfTheThreadAlone(t *testing.T) {
	for _, late := range []bool{false, true} {
		e := sim.New(1)
		s := New("cp", 1, 10*sim.Microsecond)
		a := &aloneSteps{s: s}
		e.SpawnSteps("a", a)
		if late {
			e.At(1, func() { e.Spawn("b", func(p *sim.Proc) { s.Bind(p) }) })
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want, left := sim.Time(5), 0
		if late {
			want, left = 3, 1
		}
		if !a.alone || len(a.woke) != 1 || a.woke[0] != want || a.left != left {
			t.Errorf("late bind %v: alone %v, body at %v with %d left; want alone, at %v with %d", late, a.alone, a.woke, a.left, want, left)
		}
	}
}
