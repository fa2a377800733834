package sim

import "math/bits"

// Handler receives allocation-free callback events scheduled with AtH.
type Handler interface {
	Handle(arg uint64)
}

// funcHandler adapts a plain func to Handler. A func value is pointer-shaped,
// so the conversion does not allocate.
type funcHandler func()

func (f funcHandler) Handle(uint64) { f() }

// event is what runs when a queue entry comes due.
type event struct {
	h   Handler
	arg uint64
}

// key orders the queue: time first, then scheduling sequence, so ties run
// first-in first-out. slot indexes the event's payload.
type key struct {
	t    Time
	seq  uint64
	slot int32
}

func (a *key) before(b *key) bool { return lessBit(a, b) == 1 }

// lessBit is 1 when a orders before b, else 0, computed without branches as
// the borrow of the 128-bit subtraction (a.t, a.seq) − (b.t, b.seq). Heap
// comparisons are unpredictable, so avoiding the branch matters. Times are
// never negative, so the unsigned view orders them correctly.
func lessBit(a, b *key) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.t), uint64(b.t), borrow)
	return borrow
}

// eventQueue orders pending events: a radix heap of small keys
// (radix.go; container/heap boxes through an interface and allocates per
// push). Payloads live in a slab with a free list, so the heap moves
// 24-byte keys without pointers.
//
// Events scheduled for the current time (a fifth of a packet-level run's:
// wake-ups, zero-cost hand-offs) skip the heap: they take the next sequence
// number, so they come after everything already due now and in the order
// they were scheduled, a FIFO (pushNow). pop takes the smaller key of the
// FIFO's head and the heap's top, so the order is exactly the heap's alone.
type eventQueue struct {
	heap radixHeap
	slab []event
	free []int32
	// due holds events at the current time with increasing sequence
	// numbers; due[dueHead:] are pending.
	due     []dueEvent
	dueHead int
	// dead counts the heap's cancelled entries (Engine.Cancel): their slab
	// events have the handler cancelled.
	dead int
	// cur is the sequence number of the entry taken last: the event being
	// run (Engine.runsBefore).
	cur uint64
}

// dueEvent is an event in the current-time FIFO.
type dueEvent struct {
	t   Time
	seq uint64
	ev  event
}

func (q *eventQueue) len() int { return q.heap.n - q.dead + len(q.due) - q.dueHead }

// cancelled is the handler of a cancelled event: it never runs.
type cancelled struct{}

func (cancelled) Handle(uint64) { panic("sim: a cancelled event ran") }

// isCancelled reports whether ev was cancelled.
func (ev *event) isCancelled() bool {
	_, c := ev.h.(cancelled)
	return c
}

// cancel drops the pending heap entry whose payload is in slot: its event
// gets the cancelled handler, and the entry leaves the heap when it comes to the
// top (next) or when cancelled entries outnumber live ones (compact), so
// the heap holds O(live events) whatever the rate of cancellations.
func (q *eventQueue) cancel(slot int32) {
	q.slab[slot] = event{h: cancelled{}}
	q.dead++
	if q.dead >= 1024 && 2*q.dead > q.heap.n {
		q.compact()
	}
}

// compact removes every cancelled entry from the heap and frees its slot.
// The order of the others is by key alone, so it does not change.
func (q *eventQueue) compact() {
	q.heap.filter(func(k *key) bool {
		if !q.slab[k.slot].isCancelled() {
			return true
		}
		q.slab[k.slot] = event{}
		q.free = append(q.free, k.slot)
		return false
	})
	q.dead = 0
}

// pushNow queues ev at t, the time of the event being run, with a sequence
// number above every other pending event's.
func (q *eventQueue) pushNow(t Time, seq uint64, ev event) {
	q.due = append(q.due, dueEvent{t: t, seq: seq, ev: ev})
}

// dueFirst reports whether the FIFO's head comes before the heap's top.
func (q *eventQueue) dueFirst() bool {
	if q.dueHead == len(q.due) {
		return false
	}
	if q.heap.n == 0 {
		return true
	}
	d, k := &q.due[q.dueHead], q.heap.min()
	return d.t < k.t || (d.t == k.t && d.seq < k.seq)
}

// next takes the earliest entry, as pop does, if it is due at or before
// limit (ok). Otherwise it takes nothing and later reports whether an
// entry is pending (after limit). It is the event loop's peek and pop in
// one: one FIFO-or-heap decision per event.
func (q *eventQueue) next(limit Time) (t Time, ev event, ok, later bool) {
	var k *key
	if q.heap.n > 0 {
		k = q.heap.min()
	}
	if q.dueHead < len(q.due) {
		if d := &q.due[q.dueHead]; k == nil || d.t < k.t || d.t == k.t && d.seq < k.seq {
			if d.t > limit {
				return 0, event{}, false, true
			}
			t, ev = q.popDue()
			return t, ev, true, false
		}
	}
	if k == nil {
		return 0, event{}, false, false
	}
	if k.t > limit {
		return 0, event{}, false, true
	}
	t, ev = q.popHeap()
	if ev.isCancelled() {
		q.dead-- // the engine skips it
	}
	return t, ev, true, false
}

// nextBefore is next for a run with marks whose earliest key is (bt,
// bs): it takes the earliest entry, as next does, when the entry is due at
// or before limit and orders before that key, so that passing the marks
// would pass none (ok). Otherwise it takes nothing, and the caller passes
// the marks and calls next (Engine.runBeforeMarks).
func (q *eventQueue) nextBefore(limit, bt Time, bs uint64) (t Time, ev event, ok bool) {
	if q.len() == 0 {
		return 0, event{}, false // passMarks then sees no queue: the slow way
	}
	var k *key
	if q.heap.n > 0 {
		k = q.heap.min()
	}
	if q.dueHead < len(q.due) {
		if d := &q.due[q.dueHead]; k == nil || d.t < k.t || d.t == k.t && d.seq < k.seq {
			if d.t > limit || !chainKeyLess(d.t, d.seq, bt, bs) {
				return 0, event{}, false
			}
			t, ev = q.popDue()
			return t, ev, true
		}
	}
	if k.t > limit || !chainKeyLess(k.t, k.seq, bt, bs) {
		return 0, event{}, false
	}
	t, ev = q.popHeap()
	if ev.isCancelled() {
		q.dead-- // the engine skips it
	}
	return t, ev, true
}

// popHeap removes the heap's earliest entry and returns its time and event.
func (q *eventQueue) popHeap() (Time, event) {
	k := q.heap.pop()
	q.cur = k.seq
	ev := q.slab[k.slot]
	q.slab[k.slot] = event{} // drop references for the GC
	q.free = append(q.free, k.slot)
	return k.t, ev
}

// popDue removes and returns the FIFO's head.
func (q *eventQueue) popDue() (Time, event) {
	d := &q.due[q.dueHead]
	t, ev := d.t, d.ev
	q.cur = d.seq
	d.ev = event{} // drop references for the GC
	q.dueHead++
	if q.dueHead == len(q.due) {
		q.due, q.dueHead = q.due[:0], 0
	}
	return t, ev
}

// pop removes the earliest entry, from the FIFO or the heap, and returns
// its time and event. The queue must not be empty.
func (q *eventQueue) pop() (Time, event) {
	if !q.dueFirst() {
		return q.popHeap()
	}
	return q.popDue()
}

// peekKey returns the earliest pending key. The queue must not be empty.
// The heap's earliest key is looked up once (dueFirst's and a second min
// were two lookups: passMarks asks before nearly every event of a run
// with marks or chains).
func (q *eventQueue) peekKey() (Time, uint64) {
	if q.heap.n == 0 {
		d := &q.due[q.dueHead]
		return d.t, d.seq
	}
	k := q.heap.min()
	if q.dueHead < len(q.due) {
		if d := &q.due[q.dueHead]; d.t < k.t || d.t == k.t && d.seq < k.seq {
			return d.t, d.seq
		}
	}
	return k.t, k.seq
}

// peekTime returns the earliest pending time. The queue must not be empty.
func (q *eventQueue) peekTime() Time {
	if q.dueFirst() {
		return q.due[q.dueHead].t
	}
	return q.heap.min().t
}

// push queues ev at t with sequence number seq; t must not be before the
// time of the last event taken.
func (q *eventQueue) push(t Time, seq uint64, ev event) int32 {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = ev
	} else {
		slot = int32(len(q.slab))
		q.slab = append(q.slab, ev)
	}
	q.heap.push(key{t: t, seq: seq, slot: slot})
	return slot
}
