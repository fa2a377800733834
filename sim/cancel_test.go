package sim

import (
	"testing"

	"pgregory.net/rapid"
)

// recordH records the args of the events it handles.
type recordH struct{ got *[]uint64 }

func (r recordH) Handle(arg uint64) { *r.got = append(*r.got, arg) }

// Cancelled events never run and are not counted; the others run in the
// order of their keys, as if the cancelled ones had never been scheduled,
// whether they leave the queue at its top or by compaction (many
// cancellations).
func TestCancelRemovesOnlyTheCancelled(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := New(1)
		var got []uint64
		h := recordH{&got}
		n := rapid.IntRange(1, 3000).Draw(t, "events")
		tickets := make([]Ticket, n)
		times := make([]Time, n)
		for i := range n {
			times[i] = Time(rapid.IntRange(1, 50).Draw(t, "time"))
			tickets[i] = e.AtHC(times[i], h, uint64(i))
		}
		cancelled := make([]bool, n)
		for i := range n {
			if rapid.IntRange(0, 3).Draw(t, "cancel") > 0 {
				e.Cancel(tickets[i])
				cancelled[i] = true
			}
		}
		var want []uint64
		for tm := Time(1); tm <= 50; tm++ {
			for i := range n {
				if times[i] == tm && !cancelled[i] {
					want = append(want, uint64(i))
				}
			}
		}
		if e.Pending() != len(want) {
			t.Fatalf("%d pending, want %d", e.Pending(), len(want))
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || e.Events() != uint64(len(want)) {
			t.Fatalf("ran %d events (counted %d), want %d", len(got), e.Events(), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("event %d: ran %d, want %d", i, got[i], want[i])
			}
		}
	})
}

// resched is a handler that moves its own event at every call of move.
type resched struct {
	e      *Engine
	tk     Ticket
	ran    int
	movesN int
}

func (r *resched) Handle(uint64) { r.ran++ }

func (r *resched) move(t Time) {
	r.e.Cancel(r.tk)
	r.tk = r.e.AtHC(t, r, 0)
	r.movesN++
}

// A handler rescheduled a million times keeps the queue at O(live events):
// cancelled entries are compacted away once they outnumber the live ones.
func TestCancelKeepsTheQueueSmall(t *testing.T) {
	e := New(1)
	rs := make([]*resched, 100)
	for i := range rs {
		rs[i] = &resched{e: e}
		rs[i].move(Time(1_000_000 + i))
	}
	most := 0
	for k := range 1_000_000 {
		rs[k%len(rs)].move(Time(2_000_000 - k))
		most = max(most, e.queue.heap.n)
	}
	if most > 2*len(rs)+1024 {
		t.Fatalf("queue held %d entries for %d live events", most, len(rs))
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.ran != 1 {
			t.Fatalf("handler %d ran %d times", i, r.ran)
		}
	}
	if e.Events() != uint64(len(rs)) {
		t.Fatalf("%d events counted, want %d", e.Events(), len(rs))
	}
}
