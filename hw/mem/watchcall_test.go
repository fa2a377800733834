package mem

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// A WatchCall is called by every write to its line (Store64, Write,
// Touch), not by writes to other lines, beside a signal Watch or
// WatchOnce hands out for the same line (before or after it, a once
// watch forgotten by its write while the call stays), and no more after
// UnwatchCall; the memory counts no watch left once both are gone.
func TestWatchCallOnEveryWriteOfItsLine(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  string // "", "watch", "once": a signal on the same line, set before the call
	}{{"alone", ""}, {"with Watch", "watch"}, {"with WatchOnce", "once"}} {
		m := New("m", true)
		a := m.AllocData(Host, 4*LineSize, "q")
		var s *sim.Signal
		switch c.sig {
		case "watch":
			s = m.Watch(a + 8)
		case "once":
			s = m.WatchOnce(a + 8)
		}
		calls := 0
		m.WatchCall(a+16, func() { calls++ })
		m.Store64(a, 1)
		m.Write(a+LineSize-8, make([]byte, 16)) // spans into the next line
		m.Touch(a+2*LineSize, 8)
		m.Store64(a+3*LineSize, 1)
		if calls != 2 {
			t.Errorf("%s: %d calls after two writes to the line and two elsewhere", c.name, calls)
		}
		r, _ := m.find(a, 0)
		if w := r.watched.find(a); w == nil || w.call == nil || (w.sig == nil) != (c.sig != "watch") || c.sig == "watch" && w.sig != s {
			t.Errorf("%s: after the write, the line's watch is %+v (signal %p)", c.name, w, s)
		}
		if c.sig == "" {
			if w := m.Watch(a); w == nil {
				t.Errorf("%s: Watch of a line watched by a call gave no signal", c.name)
			}
		}
		m.UnwatchCall(a)
		m.Store64(a, 2)
		if calls != 2 {
			t.Errorf("%s: %d calls after UnwatchCall", c.name, calls)
		}
	}
	m := New("m", true)
	a := m.AllocData(Host, LineSize, "q")
	m.WatchCall(a, func() {})
	m.UnwatchCall(a)
	if m.nwatched != 0 {
		t.Errorf("%d watches left after UnwatchCall of the only one", m.nwatched)
	}
}
