package sim

import (
	"fmt"
	"slices"
	"testing"
)

// relayScript sleeps 3, 2 and 5, logging where its body runs; with relay
// the 2 and the 5 are queued by ThenSleep after the 3.
type relayScript struct {
	log   *[]string
	relay bool
	pc    int
}

func (s *relayScript) Step(p *Proc) bool {
	*s.log = append(*s.log, fmt.Sprintf("body%d@%d", s.pc, int64(p.Now())))
	s.pc++
	switch {
	case s.pc == 1:
		p.Sleep(3)
		if s.relay {
			p.ThenSleep(2)
			p.ThenSleep(5)
			s.pc = 3
		}
	case s.pc == 2:
		p.Sleep(2)
	case s.pc == 3:
		p.Sleep(5)
	default:
		return true
	}
	return false
}

// runRelay runs relayScript against callbacks scheduled between its
// wake-ups for the time of its last one: one before its relayed wake-up
// at 5 schedules the last (it runs first at 10), one after (it runs after).
func runRelay(relay bool) (log []string, events, relays uint64) {
	e := New(1)
	at := func(t Time, what string) {
		e.At(t, func() { e.At(10, func() { log = append(log, fmt.Sprintf("%s@%d", what, int64(e.Now()))) }) })
	}
	at(4, "before")
	at(6, "after")
	e.SpawnSteps("relayer", &relayScript{log: &log, relay: relay})
	if err := e.Run(); err != nil {
		panic(err)
	}
	return log, e.Events(), e.Relays()
}

func TestThenSleepIsTheBodysSleeps(t *testing.T) {
	slept, ev0, r0 := runRelay(false)
	relayed, ev1, r1 := runRelay(true)
	// The relayed run's body does not run at 3 and 5.
	want := slices.DeleteFunc(slices.Clone(slept), func(s string) bool { return s == "body1@3" || s == "body2@5" })
	if !slices.Equal(relayed, want) || ev0 != ev1 {
		t.Errorf("relayed %v (%d events), want %v (%d events, the body's sleeps)", relayed, ev1, want, ev0)
	}
	if r0 != 0 || r1 != 2 {
		t.Errorf("relays %d and %d, want 0 and 2", r0, r1)
	}
	if want := []string{"body0@0", "body1@3", "body2@5", "before@10", "body3@10", "after@10"}; !slices.Equal(slept, want) {
		t.Errorf("body's sleeps: %v, want %v", slept, want)
	}
}

func TestThenSleepCancelled(t *testing.T) {
	e := New(1)
	var log []string
	s := &relayScript{log: &log, relay: true}
	p := e.SpawnSteps("relayer", s)
	e.At(4, func() {
		if p.ThenLeft() != 1 {
			t.Errorf("at 4 ThenLeft %d, want 1 (the relayed wake-up at 3 ran)", p.ThenLeft())
		}
		p.CancelThen()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"body0@0", "body3@5"}; !slices.Equal(log, want) || e.Relays() != 1 {
		t.Errorf("cancelled at 4: %v, %d relays, want %v and 1", log, e.Relays(), want)
	}
}

// refuse is a RelayCheck that says no at time at and yes otherwise.
type refuse struct{ at Time }

func (r refuse) RelayOK(p *Proc) bool { return p.Now() != r.at }

// checkScript sleeps 3, then 2 and 5 relayed, the 5 only if check agrees;
// its body logs where it runs and what ThenLeft says there.
type checkScript struct {
	log   *[]string
	check RelayCheck
	pc    int
}

func (s *checkScript) Step(p *Proc) bool {
	*s.log = append(*s.log, fmt.Sprintf("body%d@%d left %d", s.pc, int64(p.Now()), p.ThenLeft()))
	s.pc++
	switch s.pc {
	case 1:
		p.Sleep(3)
		p.ThenSleep(2)
		p.ThenSleepIf(5, s.check)
	case 2:
		if p.ThenLeft() == 0 { // relayed: done
			return true
		}
		p.CancelThen() // refused: the body sleeps the 5 itself
		p.Sleep(5)
	default:
		return true
	}
	return false
}

func TestThenSleepIfRefused(t *testing.T) {
	for _, c := range []struct {
		at   Time
		want []string
	}{
		{5, []string{"body0@0 left 0", "body1@5 left 1", "body2@10 left 0"}}, // refused at 5: the body runs there
		{7, []string{"body0@0 left 0", "body1@10 left 0"}},                   // agreed at 5: relayed
	} {
		e := New(1)
		var log []string
		e.SpawnSteps("relayer", &checkScript{log: &log, check: refuse{c.at}})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(log, c.want) {
			t.Errorf("refusing at %d: %v, want %v", int64(c.at), log, c.want)
		}
	}
}

func TestStopRelays(t *testing.T) {
	e := New(1)
	var log []string
	p := e.SpawnSteps("relayer", &checkScript{log: &log})
	e.At(4, p.StopRelays) // after the relayed wake-up at 3, before the one at 5
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"body0@0 left 0", "body1@5 left 1", "body2@10 left 0"}; !slices.Equal(log, want) || e.Relays() != 1 {
		t.Errorf("stopped at 4: %v, %d relays; want %v and 1", log, e.Relays(), want)
	}
}
