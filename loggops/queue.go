package loggops

import (
	"slices"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Event kinds.
const (
	evOp  uint32 = iota // an operation is due: ref is an op handle
	evMsg               // a message arrives: ref is a message handle
)

// key is one queue entry, ordered by (t, ts). Unlike sim.Engine's sequence
// number, ts is chosen by the caller and kept when an entry is re-queued
// because its CPU or NIC was busy; LogGOPSim breaks ties that way.
type key struct {
	t    sim.Time
	ts   uint64
	ref  uint32
	kind uint32
}

// queue holds keys in (t, ts) order. Collectives at scale run in lockstep:
// tens of thousands of entries share a handful of distinct times, and a
// heap over all of them costs a cache miss per level at every pop (half the
// run time of a 65,536-rank ring). So entries are grouped in one bucket per
// distinct time, a small 4-ary heap orders the buckets, and a bucket is a
// slice drained front to back: stamps are handed out in increasing order, so
// appends almost always keep a bucket sorted, and a bucket that is not is
// sorted once when it becomes the earliest.
type queue struct {
	n       int                // entries in all buckets
	times   []slot             // 4-ary min-heap of the buckets by time
	buckets []bucket           // indexed by slot.b
	free    []int32            // bucket indices to reuse
	index   map[sim.Time]int32 // bucket of each queued time
	lastT   sim.Time           // time of the bucket last pushed to ...
	lastB   int32              // ... and its index, -1 if none
}

// slot is a bucket's place in the time heap.
type slot struct {
	t sim.Time
	b int32
}

// entry is a key without its time, which its bucket holds.
type entry struct {
	ts   uint64
	ref  uint32
	kind uint32
}

// bucket holds the entries of one time; e[pos:] are still queued.
type bucket struct {
	e        []entry
	pos      int
	unsorted bool // e[pos:] may be out of stamp order
}

// compactAt is the number of drained entries above which a bucket that
// keeps receiving entries while it is drained (same-time chains) moves its
// live entries to the front, so its memory follows live entries.
const compactAt = 1024

func newQueue() queue {
	return queue{index: make(map[sim.Time]int32), lastB: -1}
}

func (q *queue) len() int { return q.n }

func (q *queue) push(k key) {
	b := q.lastB
	if b < 0 || q.lastT != k.t {
		var ok bool
		if b, ok = q.index[k.t]; !ok {
			b = q.newBucket(k.t)
		}
		q.lastT, q.lastB = k.t, b
	}
	bk := &q.buckets[b]
	if n := len(bk.e); n > bk.pos && bk.e[n-1].ts > k.ts {
		bk.unsorted = true
	}
	bk.e = append(bk.e, entry{ts: k.ts, ref: k.ref, kind: k.kind})
	q.n++
}

// newBucket makes an empty bucket for time t and queues it.
func (q *queue) newBucket(t sim.Time) int32 {
	var b int32
	if n := len(q.free); n > 0 {
		b = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		q.buckets = append(q.buckets, bucket{})
		b = int32(len(q.buckets) - 1)
	}
	q.index[t] = b
	q.pushTime(slot{t: t, b: b})
	return b
}

// pop removes the earliest key. The queue must not be empty.
func (q *queue) pop() key {
	top := q.times[0]
	bk := &q.buckets[top.b]
	if bk.unsorted {
		slices.SortFunc(bk.e[bk.pos:], func(x, y entry) int {
			if x.ts < y.ts {
				return -1
			}
			return 1 // stamps are unique
		})
		bk.unsorted = false
	}
	e := bk.e[bk.pos]
	bk.pos++
	q.n--
	switch {
	case bk.pos == len(bk.e):
		bk.e, bk.pos = bk.e[:0], 0
		q.popTime()
		delete(q.index, top.t)
		q.free = append(q.free, top.b)
		if q.lastB == top.b {
			q.lastB = -1
		}
	case bk.pos >= compactAt && 2*bk.pos >= len(bk.e):
		bk.e = bk.e[:copy(bk.e, bk.e[bk.pos:])]
		bk.pos = 0
	}
	return key{t: top.t, ts: e.ts, ref: e.ref, kind: e.kind}
}

func (q *queue) pushTime(s slot) {
	q.times = append(q.times, s)
	h := q.times
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p].t <= s.t {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = s
}

func (q *queue) popTime() {
	h := q.times
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.times = h
	if n == 0 {
		return
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if h[j].t < h[m].t {
				m = j
			}
		}
		if h[m].t >= last.t {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = last
}
