package nbc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type fakeReq struct{ done bool }

func (r *fakeReq) Done() bool { return r.done }

// fake completes one outstanding request per Poll or Block and logs what
// happens.
type fake struct {
	log     []string
	pending []*fakeReq
	failAt  int
}

func (f *fake) start(kind string, op Op) (Request, error) {
	if op.Step == f.failAt {
		return nil, errors.New("refused")
	}
	f.log = append(f.log, fmt.Sprintf("%s%d", kind, op.Step))
	r := &fakeReq{}
	f.pending = append(f.pending, r)
	return r, nil
}
func (f *fake) Isend(op Op) (Request, error) { return f.start("s", op) }
func (f *fake) Irecv(op Op) (Request, error) { return f.start("r", op) }
func (f *fake) Poll() {
	if len(f.pending) > 0 {
		f.pending[0].done = true
		f.pending = f.pending[1:]
	}
}
func (f *fake) Block() { f.Poll() }

func sched() Schedule {
	return Schedule{
		{{Kind: Send, Step: 0}, {Kind: Recv, Step: 0}, {Kind: Reduce, Step: 0}},
		{{Kind: Copy, Step: 1}},
		{{Kind: Send, Step: 2}, {Kind: Recv, Step: 2}},
	}
}

func TestRoundsAdvanceOnlyWhenComplete(t *testing.T) {
	f := &fake{failAt: -1}
	local := func(op Op) { f.log = append(f.log, fmt.Sprintf("%v%d", op.Kind, op.Step)) }
	h := Start(f, local, sched())
	if done, _ := h.Test(); done || h.Round() != 0 {
		t.Fatalf("after one poll: round %d", h.Round())
	}
	if err := h.Wait(); err != nil {
		t.Fatal(err)
	}
	want := "s0 r0 reduce0 copy1 s2 r2"
	if got := strings.Join(f.log, " "); got != want {
		t.Fatalf("log %q, want %q", got, want)
	}
	if h.Round() != 3 || sched().Sends() != 2 {
		t.Fatalf("round %d, sends %d", h.Round(), sched().Sends())
	}
}

func TestTransportErrorStopsTheCollective(t *testing.T) {
	f := &fake{failAt: 2}
	err := Start(f, func(Op) {}, sched()).Wait()
	if err == nil || !strings.Contains(err.Error(), "round 2") {
		t.Fatalf("err = %v, want a round-2 failure", err)
	}
}

// fakeTasks runs the remote-task kinds like sends.
type fakeTasks struct{ fake }

func (f *fakeTasks) Task(op Op) (Request, error) { return f.start(op.Kind.String(), op) }

// Remote-task ops go to a TaskTransport in round order; a plain transport
// refuses them with an error naming the kind.
func TestTaskOps(t *testing.T) {
	s := Schedule{
		{{Kind: TaskPost, Step: 0}, {Kind: Send, Step: 0}, {Kind: Recv, Step: 0}},
		{{Kind: XtqPut, Step: 1}, {Kind: TaskWait, Step: 1}},
	}
	f := &fakeTasks{fake{failAt: -1}}
	if err := Start(f, nil, s).Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.log, " "); got != "taskpost0 s0 r0 xtqput1 taskwait1" {
		t.Errorf("log %q", got)
	}
	err := Start(&fake{failAt: -1}, nil, s).Wait()
	if err == nil || !strings.Contains(err.Error(), "cannot run taskpost ops") {
		t.Errorf("plain transport: %v, want a refusal naming taskpost", err)
	}
}
