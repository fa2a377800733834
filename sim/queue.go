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

// eventQueue is a hand-written 4-ary min-heap of small keys (container/heap
// boxes through an interface and allocates per push). Payloads live in a
// slab with a free list, so sifting moves 24-byte keys that stay in L1.
//
// Events scheduled for the current time (a fifth of a packet-level run's:
// wake-ups, zero-cost hand-offs) skip the heap: they take the next sequence
// number, so they come after everything already due now and in the order
// they were scheduled, a FIFO (pushNow). pop takes the smaller key of the
// FIFO's head and the heap's top, so the order is exactly the heap's alone.
type eventQueue struct {
	keys []key
	slab []event
	free []int32
	// due holds events at the current time with increasing sequence
	// numbers; due[dueHead:] are pending.
	due     []dueEvent
	dueHead int
	// hole: take handed out the heap's top and left its key in place.
	// The next push replaces it (one sift instead of a removal and an
	// insertion: most events schedule one more, a chain its next, a
	// process its wake-up); settle removes it if none comes.
	hole bool
}

// dueEvent is an event in the current-time FIFO.
type dueEvent struct {
	t   Time
	seq uint64
	ev  event
}

func (q *eventQueue) len() int {
	n := len(q.keys) + len(q.due) - q.dueHead
	if q.hole {
		n--
	}
	return n
}

// settle removes the top key that take left in place, if any.
func (q *eventQueue) settle() {
	if q.hole {
		q.hole = false
		q.removeTop()
	}
}

// pushNow queues ev at t, the time of the event being run, with a sequence
// number above every other pending event's.
func (q *eventQueue) pushNow(t Time, seq uint64, ev event) {
	q.due = append(q.due, dueEvent{t: t, seq: seq, ev: ev})
}

// dueFirst reports whether the FIFO's head comes before the heap's top.
// The queue must be settled.
func (q *eventQueue) dueFirst() bool {
	if q.dueHead == len(q.due) {
		return false
	}
	if len(q.keys) == 0 {
		return true
	}
	d, k := &q.due[q.dueHead], &q.keys[0]
	return d.t < k.t || (d.t == k.t && d.seq < k.seq)
}

// pop removes the earliest entry, from the FIFO or the heap, and returns
// its time and event. The queue must not be empty.
func (q *eventQueue) pop() (Time, event) {
	t, ev := q.take()
	q.settle()
	return t, ev
}

// next takes the earliest entry as take does if it is due at or before
// limit (ok). Otherwise it takes nothing and later reports whether an
// entry is pending (after limit). It is the event loop's peek and take in
// one: one settle and one FIFO-or-heap decision per event.
func (q *eventQueue) next(limit Time) (t Time, ev event, ok, later bool) {
	q.settle()
	if !q.dueFirst() {
		if len(q.keys) == 0 {
			return 0, event{}, false, false
		}
		top := &q.keys[0]
		if top.t > limit {
			return 0, event{}, false, true
		}
		ev = q.slab[top.slot]
		q.slab[top.slot] = event{} // drop references for the GC
		q.free = append(q.free, top.slot)
		q.hole = true
		return top.t, ev, true, false
	}
	if q.due[q.dueHead].t > limit {
		return 0, event{}, false, true
	}
	t, ev = q.popDue()
	return t, ev, true, false
}

// popDue removes and returns the FIFO's head.
func (q *eventQueue) popDue() (Time, event) {
	d := &q.due[q.dueHead]
	t, ev := d.t, d.ev
	d.ev = event{} // drop references for the GC
	q.dueHead++
	if q.dueHead == len(q.due) {
		q.due, q.dueHead = q.due[:0], 0
	}
	return t, ev
}

// take returns the earliest entry's time and event and removes it: from
// the FIFO at once, from the heap by leaving a hole at the top for the
// next push or settle. The queue must not be empty.
func (q *eventQueue) take() (Time, event) {
	q.settle()
	if !q.dueFirst() {
		top := &q.keys[0]
		ev := q.slab[top.slot]
		q.slab[top.slot] = event{} // drop references for the GC
		q.free = append(q.free, top.slot)
		q.hole = true
		return top.t, ev
	}
	return q.popDue()
}

// peekTime returns the earliest pending time. The queue must not be empty.
func (q *eventQueue) peekTime() Time {
	q.settle()
	if q.dueFirst() {
		return q.due[q.dueHead].t
	}
	return q.keys[0].t
}

func (q *eventQueue) push(t Time, seq uint64, ev event) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = ev
	} else {
		slot = int32(len(q.slab))
		q.slab = append(q.slab, ev)
	}
	k := key{t: t, seq: seq, slot: slot}
	if q.hole {
		q.hole = false
		q.replaceTop(k)
		return
	}
	q.keys = append(q.keys, k)
	q.siftUp(len(q.keys)-1, k)
}

// removeTop removes the heap's top key. It uses Floyd's variant: the hole
// at the root moves down along the smallest children to a leaf without
// comparing against the displaced last key, which then sifts up from
// there (usually zero or one step, since the last key is typically among
// the latest).
func (q *eventQueue) removeTop() {
	n := len(q.keys) - 1
	last := q.keys[n]
	q.keys = q.keys[:n]
	if n > 0 {
		q.siftUp(q.holeToLeaf(), last)
	}
}

// replaceTop puts k in the place of the heap's top key: the hole at the
// root moves to a leaf as in removeTop and k sifts up from there.
func (q *eventQueue) replaceTop(k key) {
	q.siftUp(q.holeToLeaf(), k)
}

// holeToLeaf moves a hole at the root down along the smallest children to
// a leaf and returns the leaf's index.
func (q *eventQueue) holeToLeaf() int {
	keys := q.keys
	n := len(keys)
	i := 0
	for {
		first := 4*i + 1
		if first+4 > n {
			return q.lastChildren(i, first, n)
		}
		// Full node: a tournament without branches over the four
		// children, seen as one array so that there is one bounds check.
		c := (*[4]key)(keys[first : first+4])
		a := lessBit(&c[1], &c[0])
		b := 2 + lessBit(&c[3], &c[2])
		b = a + lessBit(&c[b&3], &c[a&1])*(b-a)
		keys[i] = c[b&3]
		i = first + int(b&3)
	}
}

// siftUp puts k into the hole at i, moving it up past later parents.
func (q *eventQueue) siftUp(i int, k key) {
	keys := q.keys
	for i > 0 {
		parent := (i - 1) / 4
		if !k.before(&keys[parent]) {
			break
		}
		keys[i] = keys[parent]
		i = parent
	}
	keys[i] = k
}

// lastChildren moves the hole at i down into the smallest of its fewer than
// four children keys[first:n], if any, and returns the hole's new index.
func (q *eventQueue) lastChildren(i, first, n int) int {
	keys := q.keys
	if first >= n {
		return i
	}
	child := first
	for c := first + 1; c < n; c++ {
		if keys[c].before(&keys[child]) {
			child = c
		}
	}
	keys[i] = keys[child]
	return child
}
