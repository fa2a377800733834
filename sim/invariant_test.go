package sim

import (
	"errors"
	"testing"
)

// End checks run when a run ends idle, and their violations fail it; they
// do not run after Stop, and a deadlock is reported instead of them.
func TestEndChecks(t *testing.T) {
	e := New(1)
	calls := 0
	e.AddEndCheck(func(now Time) []Violation {
		calls++
		return []Violation{{Agent: "thing", At: now, What: "broken"}}
	})
	e.After(5*Nanosecond, func() {})
	err := e.Run()
	var ie *InvariantError
	if !errors.As(err, &ie) || len(ie.Violations) != 1 || ie.Violations[0].At != 5*Nanosecond {
		t.Fatalf("err = %v, want one violation at 5ns", err)
	}
	if want := "invariant check: 1 violation(s)\n  thing at 5ns: broken"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	e.After(Nanosecond, e.Stop)
	e.After(2*Nanosecond, func() {})
	if err := e.Run(); err != nil || calls != 1 {
		t.Errorf("after Stop: err %v, %d calls; want no check", err, calls)
	}

	d := New(1)
	d.AddEndCheck(func(Time) []Violation { t.Error("end check ran on a deadlock"); return nil })
	var s Signal
	d.Spawn("waiter", func(p *Proc) { p.Wait(&s, "never") })
	var de *DeadlockError
	if err := d.Run(); !errors.As(err, &de) {
		t.Errorf("err = %v, want a deadlock", err)
	}
}
