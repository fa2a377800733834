package sim

import (
	"errors"
	"strings"
	"testing"
)

// poller is a busy-polling agent: every nanosecond it looks at *flag and
// fails the run with PollDeadlock's error when PollIdle says the
// simulation is frozen.
func poller(e *Engine, name string, flag *bool) {
	e.Spawn(name, func(p *Proc) {
		p.SetPoller("the flag")
		for !*flag {
			p.PollStart()
			p.Sleep(Nanosecond)
			if *flag {
				p.PollBusy()
				return
			}
			if p.PollIdle() {
				e.Fail(e.PollDeadlock())
				return
			}
		}
	})
}

// Agents blocked for good while busy pollers keep the queue busy end the
// run as a deadlock naming the blocked agents (not as a run that polls
// forever); while another agent still has an event pending (a long
// sleep) that will change what the pollers read, they are not frozen.
func TestPollersDoNotHideADeadlock(t *testing.T) {
	e := New(1)
	var never Signal
	flag := false
	poller(e, "svc[0]", &flag)
	poller(e, "svc[1]", &flag)
	e.Spawn("wg[0]", func(p *Proc) { p.Sleep(5 * Nanosecond); p.Wait(&never, "a flag nobody sets") })
	err := e.RunUntil(Millisecond)
	var dl *DeadlockError
	if !errors.As(err, &dl) || len(dl.Blocked) != 1 || dl.Polling != 2 {
		t.Fatalf("err = %v, want a deadlock of wg[0] with 2 pollers", err)
	}
	if first, _, _ := strings.Cut(err.Error(), "\n"); first != "deadlock at 6ns: 1 process(es) blocked with no pending event but 2 polling agent(s) that find nothing to do: wg[0] waits on a flag nobody sets; 2 poll the flag (svc[0], ...)" {
		t.Errorf("first line %q", first)
	}

	e = New(1)
	flag = false
	poller(e, "svc[0]", &flag)
	poller(e, "svc[1]", &flag)
	e.Spawn("app", func(p *Proc) { p.Sleep(Microsecond); flag = true })
	if err := e.RunUntil(Millisecond); err != nil {
		t.Fatalf("a pending wake-up of another agent: %v", err)
	}
	if e.Now() != Microsecond {
		t.Errorf("pollers saw the flag at %v", e.Now())
	}
}

// A poller that polls for something no agent will ever write, with no
// other agent left, is frozen on its own: the deadlock names what it
// polls. A poller that keeps finding work keeps the others from being
// frozen.
func TestPollRoundFreezes(t *testing.T) {
	e := New(1)
	flag := false
	e.Spawn("host", func(p *Proc) {
		p.SetPoller("notification 3")
		for !flag {
			p.PollStart()
			p.Sleep(Nanosecond)
			if p.PollRound(flag) {
				return
			}
		}
	})
	err := e.RunUntil(Millisecond)
	var dl *DeadlockError
	if !errors.As(err, &dl) || len(dl.Blocked) != 0 || len(dl.Pollers) != 1 {
		t.Fatalf("err = %v, want a deadlock of one poller", err)
	}
	if first, _, _ := strings.Cut(err.Error(), "\n"); first != "deadlock at 1ns: 0 process(es) blocked with no pending event but 1 polling agent(s) that find nothing to do: host polls notification 3" {
		t.Errorf("first line %q", first)
	}

	// A poller that keeps finding work (a counter it drains, refilled by
	// another poller's busy rounds) is not frozen until the work ends.
	e = New(1)
	work := 0
	e.Spawn("producer", func(p *Proc) {
		p.SetPoller("its budget")
		for i := 0; ; i++ {
			p.PollStart()
			p.Sleep(Nanosecond)
			if i < 100 {
				work++
			}
			if p.PollRound(i < 100) {
				return
			}
		}
	})
	e.Spawn("consumer", func(p *Proc) {
		p.SetPoller("work")
		for {
			p.PollStart()
			p.Sleep(Nanosecond)
			found := work > 0
			if found {
				work--
			}
			if p.PollRound(found) {
				return
			}
		}
	})
	err = e.RunUntil(Millisecond)
	if !errors.As(err, &dl) || e.Now() < 100*Nanosecond || e.Now() > 110*Nanosecond {
		t.Fatalf("err = %v at %v, want a deadlock just after the 100 work items", err, e.Now())
	}
}
