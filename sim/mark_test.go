package sim

import (
	"fmt"
	"slices"
	"testing"
)

// markLoad issues a "load" at 2 ps whose sample point is at 5 ps and whose
// end is at 10 ps: as two events (mark false: the sample point's event
// schedules the end) or with the sample point as a mark (SleepAtMark).
type markLoad struct {
	mark bool
	m    Mark
	log  *[]string
	pc   int
}

func (k *markLoad) Step(p *Proc) bool {
	switch k.pc {
	case 0:
		k.pc = 1
		p.Sleep(2)
	case 1:
		k.pc = 2
		if k.mark {
			p.Engine().SetMark(&k.m, p.Now()+3)
			k.pc = 3
			p.SleepAtMark(&k.m, p.Now()+8)
			return false
		}
		p.Sleep(3)
	case 2: // the sample point's event
		k.pc = 3
		p.Sleep(5)
	default:
		*k.log = append(*k.log, fmt.Sprintf("%v end", p.Now()))
		return true
	}
	return false
}

// runMarked runs the load that load makes (logging its end to log) among
// bystander callbacks: for every pair of a scheduling time in starts and a
// firing time in fires not before it, one callback scheduled then (by a
// callback at that time, itself scheduled at 0) that logs itself when it
// fires, and, when it fires at a time for which chain holds, one more that
// it schedules for the end's time (10 ps).
func runMarked(t *testing.T, load func(log *[]string) Stepper, starts, fires []Time, chain func(Time) bool) ([]string, uint64) {
	t.Helper()
	e := New(1)
	var log []string
	e.SpawnSteps("load", load(&log))
	for _, s := range starts {
		for _, t := range fires {
			if t < s {
				continue
			}
			name := fmt.Sprintf("%v b(%v→%v)", t, s, t)
			e.At(s, func() {
				e.At(t, func() {
					log = append(log, name)
					if chain(t) {
						e.At(10, func() { log = append(log, fmt.Sprintf("10 c(%v→%v)", s, t)) })
					}
				})
			})
		}
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return log, e.Events()
}

// A mark orders the event deferred to it exactly as the event at its key
// would have scheduled it, among events scheduled before, at and after
// the key, and firing before, at and after it and the deferred event's
// own time; it is not itself an event.
func TestMarkMatchesScheduledEvent(t *testing.T) {
	run := func(mark bool) ([]string, uint64) {
		return runMarked(t, func(log *[]string) Stepper { return &markLoad{mark: mark, log: log} },
			[]Time{0, 1, 2, 3, 5, 7, 10}, []Time{2, 5, 8, 10, 12}, func(t Time) bool { return t == 5 })
	}
	want, we := run(false)
	got, ge := run(true)
	if !slices.Equal(got, want) {
		t.Fatalf("with a mark:\n%v\nwith the event:\n%v", got, want)
	}
	if ge != we-1 {
		t.Fatalf("events: %d with a mark, %d with the event (want one fewer)", ge, we)
	}
}

// chainLoad is markLoad with an event before the sample point: at 2 ps it
// sleeps to 4 ps, whose event sleeps to the sample point at 5 ps, whose
// event sleeps to the end at 10 ps; with marks, one chained after the
// other (SetMarkAfter) and the end deferred to the second.
type chainLoad struct {
	mark   bool
	m1, m2 Mark
	log    *[]string
	pc     int
}

func (k *chainLoad) Step(p *Proc) bool {
	switch k.pc {
	case 0:
		k.pc = 1
		p.Sleep(2)
	case 1:
		k.pc = 2
		if k.mark {
			e := p.Engine()
			e.SetMark(&k.m1, p.Now()+2)
			e.SetMarkAfter(&k.m2, &k.m1, p.Now()+3)
			k.pc = 4
			p.SleepAtMark(&k.m2, p.Now()+8)
			return false
		}
		p.Sleep(2)
	case 2:
		k.pc = 3
		p.Sleep(1)
	case 3:
		k.pc = 4
		p.Sleep(5)
	default:
		*k.log = append(*k.log, fmt.Sprintf("%v end", p.Now()))
		return true
	}
	return false
}

// A mark chained after another takes the number the first one's event
// would have taken first, so the event deferred to it runs where the
// chain of events would have put it; two events fewer.
func TestMarkAfterMatchesChainedEvents(t *testing.T) {
	run := func(mark bool) ([]string, uint64) {
		return runMarked(t, func(log *[]string) Stepper { return &chainLoad{mark: mark, log: log} },
			[]Time{0, 1, 2, 3, 4, 5, 7, 10}, []Time{2, 4, 5, 8, 10, 12}, func(t Time) bool { return t == 4 || t == 5 })
	}
	want, we := run(false)
	got, ge := run(true)
	if !slices.Equal(got, want) {
		t.Fatalf("with marks:\n%v\nwith the events:\n%v", got, want)
	}
	if ge != we-2 {
		t.Fatalf("events: %d with marks, %d with the events (want two fewer)", ge, we)
	}
}

// With a mark pending, RunUntil still stops at its limit: an event after
// the limit but before the mark (the run's quick way past the marks)
// waits for the next RunUntil, and so does the mark.
func TestRunUntilStopsBeforeEventAheadOfMark(t *testing.T) {
	e := New(1)
	var m Mark
	e.SetMark(&m, 20)
	ran := Time(-1)
	e.At(10, func() { ran = e.Now() })
	if err := e.RunUntil(5); err != nil {
		t.Fatal(err)
	}
	if ran >= 0 || !m.Pending() {
		t.Fatalf("RunUntil(5): event ran at %v, mark pending %v; want neither run nor passed", ran, m.Pending())
	}
	if err := e.RunUntil(15); err != nil {
		t.Fatal(err)
	}
	if ran != 10 || !m.Pending() {
		t.Fatalf("RunUntil(15): event ran at %v, mark pending %v; want 10 and pending", ran, m.Pending())
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Pending() {
		t.Fatal("Run: the mark at 20 is still pending")
	}
}
