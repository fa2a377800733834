package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// runLent runs runScript's agents with the agent a coroutine that sleeps,
// runs the script's waits (as its own code, or lent to stepScript with
// RunSteps), then a step that finishes at once, and sleeps again.
func runLent(lend bool) (log []string, events uint64, end Time) {
	e := New(1)
	var sig Signal
	e.At(10, sig.Notify)
	e.Spawn("other", func(p *Proc) {
		for range 4 {
			p.Sleep(5)
			log = append(log, fmt.Sprintf("other@%v", p.Now()))
		}
	})
	q := e.Spawn("agent", func(p *Proc) {
		p.Sleep(1)
		if lend {
			p.RunSteps(&stepScript{sig: &sig, log: &log})
			p.RunSteps(doneAtOnce{}) // ends in its first step: no switch
		} else {
			scriptBody(&sig, &log)(p)
		}
		log = append(log, fmt.Sprintf("back@%v", p.Now()))
		p.Sleep(2)
	})
	e.Spawn("joiner", func(p *Proc) {
		p.Join(q)
		log = append(log, fmt.Sprintf("joined@%v", p.Now()))
	})
	if err := e.Run(); err != nil {
		panic(err)
	}
	return log, e.Events(), e.Now()
}

// doneAtOnce is a Stepper with nothing to wait for.
type doneAtOnce struct{}

func (doneAtOnce) Step(*Proc) bool { return true }

// A coroutine that lends its process to a Stepper (RunSteps) runs the
// steps at the times, in the event order and with the event count of the
// same waits in its own code, and resumes in the event of the last step.
func TestRunStepsMatchesCoroutine(t *testing.T) {
	wantLog, wantEv, wantEnd := runLent(false)
	gotLog, gotEv, gotEnd := runLent(true)
	if strings.Join(gotLog, " ") != strings.Join(wantLog, " ") || gotEv != wantEv || gotEnd != wantEnd {
		t.Fatalf("lent: %v, %d events, end %v\ncoroutine: %v, %d events, end %v", gotLog, gotEv, gotEnd, wantLog, wantEv, wantEnd)
	}
	if !strings.Contains(strings.Join(gotLog, " "), "back@40") {
		t.Fatalf("the coroutine did not resume at the steps' end: %v", gotLog)
	}
}

// A panic in a lent step fails the run naming the process; a run stopped
// while the process is lent releases its coroutine (Close).
func TestRunStepsPanicAndClose(t *testing.T) {
	e := New(1)
	e.Spawn("agent", func(p *Proc) { p.RunSteps(twoWaits{}) })
	var pe *PanicError
	if err := e.Run(); !errors.As(err, &pe) || pe.Proc != "agent" {
		t.Fatalf("err = %v, want a panic of agent", err)
	}
	e = New(1)
	var sig Signal
	e.Spawn("agent", func(p *Proc) { p.RunSteps(waitForever{&sig}) })
	if err := e.Run(); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Fatalf("err = %v, want a deadlock naming agent", err)
	}
	e.Close()
}
