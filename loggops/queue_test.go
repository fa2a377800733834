package loggops

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/sim"
)

// refHeap is a plain binary heap over (t, ts): the order queue must keep.
type refHeap []key

func (h refHeap) less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].ts < h[j].ts
}

func (h *refHeap) push(k key) {
	*h = append(*h, k)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *refHeap) pop() key {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	for i := 0; ; {
		m := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < n && h.less(c, m) {
				m = c
			}
		}
		if m == i {
			break
		}
		(*h)[i], (*h)[m] = (*h)[m], (*h)[i]
		i = m
	}
	return top
}

// TestQueueOrder checks the bucket queue against a reference heap on random
// pushes and pops: few distinct times (so buckets fill), fresh stamps and
// re-queued entries that keep an old stamp (so buckets go out of order),
// pushes into the bucket being drained and into earlier times.
func TestQueueOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		q := newQueue()
		var ref refHeap
		var ts uint64
		now := sim.Time(0)
		steps := rapid.IntRange(1, 3000).Draw(rt, "steps")
		for range steps {
			if len(ref) > 0 && rapid.IntRange(0, 2).Draw(rt, "pop") == 0 {
				got, want := q.pop(), ref.pop()
				if got != want {
					rt.Fatalf("pop: got %+v, want %+v", got, want)
				}
				now = got.t
				if rapid.Bool().Draw(rt, "requeue") {
					got.t += sim.Time(rapid.IntRange(1, 3).Draw(rt, "delay"))
					q.push(got)
					ref.push(got)
				}
				continue
			}
			ts++
			k := key{t: now + sim.Time(rapid.IntRange(-1, 4).Draw(rt, "dt")), ts: ts, ref: uint32(ts), kind: uint32(ts % 2)}
			k.t = max(k.t, 0)
			q.push(k)
			ref.push(k)
		}
		for len(ref) > 0 {
			if got, want := q.pop(), ref.pop(); got != want {
				rt.Fatalf("drain: got %+v, want %+v", got, want)
			}
		}
		if q.len() != 0 {
			rt.Fatalf("len %d after draining", q.len())
		}
	})
}

// TestQueueCompacts checks that a bucket receiving entries while it is
// drained keeps its memory bounded by the live entries.
func TestQueueCompacts(t *testing.T) {
	q := newQueue()
	var ts uint64
	for range 10 {
		ts++
		q.push(key{t: 5, ts: ts})
	}
	for range 100 * compactAt {
		k := q.pop()
		if k.t != 5 {
			t.Fatalf("popped time %v, want 5", k.t)
		}
		ts++
		q.push(key{t: 5, ts: ts})
	}
	if c := cap(q.buckets[q.times[0].b].e); c > 4*compactAt {
		t.Errorf("bucket capacity %d after %d same-time events, want at most %d", c, 100*compactAt, 4*compactAt)
	}
}
