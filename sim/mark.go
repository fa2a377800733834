package sim

import "fmt"

// A mark stands for an event whose only work would be to schedule one
// other event: a GPU load's sample point, where memory's value is read and
// the load's end is scheduled for when the data is back. The agent can
// read the value later, as of the key (its memory keeps what it needs),
// but the end's place among the events of its time depends on where its
// sequence number was taken: at the sample point, after every event run
// before it. A mark keeps that place without the event: the run takes a
// sequence number for it when it passes the mark's key (before the first
// event after it), exactly where the event would have taken one, and the
// one event deferred to the mark (PushAtMark, a keyed wait's resumption)
// goes into the queue then, with that number. Times, order and every
// other event are those of the run with the event; the mark itself is not
// an event (nor counted). The run's windows (parallel.go) and its end
// count pending marks as pending events.

// Mark is one such key. The zero value is unset; SetMark sets it. A Mark
// is owned by one agent and reused for its next key once passed.
type Mark struct {
	t   Time
	seq uint64 // the key's own sequence number (ReserveSeq at SetMark)
	got uint64 // the number taken when the run passed the key; 0 before
	// The event deferred to the mark, queued at (at, got) once it passes.
	h   Handler
	at  Time
	set bool // pending: in the engine's marks, or chained after one
	// dead: the event the mark stood for is in the queue at its key
	// (WakeAtMark); passing it takes no number.
	dead bool
	// next is a mark chained after this one (SetMarkAfter), whose number
	// is the first this one's event would have taken.
	next *Mark
}

// SetMark sets m to the key (t, a sequence number taken now): the key an
// event scheduled now at t would have. t must not be before now; m must
// not be pending (set and not yet passed).
func (e *Engine) SetMark(m *Mark, t Time) {
	if m.set || t < e.now {
		panic(fmt.Sprintf("sim: SetMark at %v (now %v) of a mark still pending", t, e.now))
	}
	*m = Mark{t: t, seq: e.ReserveSeq(), set: true}
	e.insertMark(m)
}

// SetMarkAfter sets m to the key at t of an event that the event at
// prev's key would have scheduled first: its number is the one prev takes
// when the run passes prev (until then m is ahead of every event run).
// prev must be pending with no mark chained yet; t not before its time.
func (e *Engine) SetMarkAfter(m, prev *Mark, t Time) {
	if m.set || !prev.set || prev.next != nil || t < prev.t {
		panic(fmt.Sprintf("sim: SetMarkAfter at %v of a mark at %v", t, prev.t))
	}
	*m = Mark{t: t, set: true}
	prev.next = m
}

// markKey is a pending mark in the engine's heap, its key kept beside it.
type markKey struct {
	t   Time
	seq uint64
	m   *Mark
}

func (a *markKey) less(b *markKey) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

// markQueue holds pending marks set at one offset from the time they were
// set (a GPU's sample points, its acquires' ends, its wake-ups): set in
// time and number order, they pass in it, a FIFO.
type markQueue struct {
	off  Duration
	q    []markKey
	head int
}

// insertMark adds pending mark m to the engine's marks: to the FIFO of
// its offset from now when its key is not before that FIFO's last, else
// to a binary heap (a sorted list cost a shift per wake-up mark at now
// among hundreds of later sample points; a heap of them, a tenth of the
// instructions).
func (e *Engine) insertMark(m *Mark) {
	k := markKey{t: m.t, seq: m.seq, m: m}
	e.nmarks++
	if e.markMinOK && k.less(&e.markMin) {
		e.markMinOK = false // found again by firstMarkAt
	}
	d := m.t - e.now
	for i := range e.mq {
		mq := &e.mq[i]
		if mq.off != d {
			continue
		}
		if n := len(mq.q); n == mq.head || mq.q[n-1].less(&k) {
			if mq.head >= 1024 && 2*mq.head >= n { // drop the passed ones' slots
				n = copy(mq.q, mq.q[mq.head:])
				mq.q, mq.head = mq.q[:n], 0
			}
			mq.q = append(mq.q, k)
			return
		}
		e.heapMark(k)
		return
	}
	if len(e.mq) < 8 {
		e.mq = append(e.mq, markQueue{off: d, q: []markKey{k}})
		return
	}
	e.heapMark(k)
}

// heapMark adds k to the marks' binary heap.
func (e *Engine) heapMark(k markKey) {
	ms := append(e.mheap, k)
	i := len(ms) - 1
	for i > 0 {
		up := (i - 1) / 2
		if !k.less(&ms[up]) {
			break
		}
		ms[i] = ms[up]
		i = up
	}
	ms[i] = k
	e.mheap = ms
}

// firstMarkAt returns the earliest pending mark and where it is: a FIFO's
// index, or −1 for the heap. nmarks must be positive.
func (e *Engine) firstMarkAt() (*markKey, int) {
	if e.markMinOK {
		return &e.markMin, e.markMinAt
	}
	var best *markKey
	at := -1
	if len(e.mheap) > 0 {
		best = &e.mheap[0]
	}
	for i := range e.mq {
		mq := &e.mq[i]
		if mq.head < len(mq.q) && (best == nil || mq.q[mq.head].less(best)) {
			best, at = &mq.q[mq.head], i
		}
	}
	e.markMin, e.markMinAt, e.markMinOK = *best, at, true
	return best, at
}

// popMark removes the earliest pending mark, found at at (firstMarkAt).
func (e *Engine) popMark(at int) {
	e.nmarks--
	e.markMinOK = false
	if at >= 0 {
		mq := &e.mq[at]
		mq.q[mq.head] = markKey{}
		mq.head++
		if mq.head == len(mq.q) {
			mq.q, mq.head = mq.q[:0], 0
		}
		return
	}
	ms := e.mheap
	n := len(ms) - 1
	last := ms[n]
	ms[n] = markKey{}
	ms = ms[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		best := c
		if c+1 < n && ms[c+1].less(&ms[c]) {
			best = c + 1
		}
		if !ms[best].less(&last) {
			break
		}
		ms[i] = ms[best]
		i = best
	}
	if n > 0 {
		ms[i] = last
	}
	e.mheap = ms
}

// Time returns the mark's time.
func (m *Mark) Time() Time { return m.t }

// Pending reports whether m is set and the run has not passed it yet.
func (m *Mark) Pending() bool { return m.set }

// Ahead reports whether the event being run orders before m's key: an
// event at the key would still run. A write done now is seen by a read
// at the key exactly when Ahead holds.
func (e *Engine) Ahead(m *Mark) bool {
	if m.seq == 0 { // chained after a mark not yet passed (SetMarkAfter)
		return true
	}
	return e.runsBefore(m.t, m.seq)
}

// PushAtMark queues h's event at t, not before m's time, as an event
// scheduled by an event at m's key would be (after every event scheduled
// before the key passed, before every one scheduled after). m must be
// set, carry no other deferred event, and, if passed, t must not be before now.
func (e *Engine) PushAtMark(m *Mark, t Time, h Handler) {
	if m.h != nil || t < m.t {
		panic(fmt.Sprintf("sim: PushAtMark at %v of a mark at %v (one deferred event at most, not before the mark)", t, m.t))
	}
	if m.got != 0 {
		if !e.checkFuture(t) {
			return
		}
		e.queue.push(t, m.got, event{h: h})
		return
	}
	m.h, m.at = h, t
}

// SleepAtMark blocks p until t, its wake-up queued as by an event at
// m's key (PushAtMark).
func (p *Proc) SleepAtMark(m *Mark, t Time) {
	p.e.PushAtMark(m, t, p)
	p.block("sleep")
}

// passMarks takes the numbers of the marks (and chains' marks) before the
// queue's first key (and of those at or before limit when nothing else is
// due by then), queueing their deferred events.
func (e *Engine) passMarks(limit Time) {
	qt, qs, qok := e.queueFirst()
	for e.nmarks > 0 || len(e.chains) > 0 {
		if e.nmarks == 0 {
			if !e.passChains(qt, qs, qok, limit) {
				return
			}
			qt, qs, qok = e.queueFirst()
			continue
		}
		k, at := e.firstMarkAt()
		if len(e.chains) > 0 && e.chains[0].less(&chainKey{t: k.t, seq: k.seq}) {
			// The chains' marks before the first Mark and the queue.
			bt, bs := k.t, k.seq
			if qok && chainKeyLess(qt, qs, bt, bs) {
				bt, bs = qt, qs
			}
			if e.passChains(bt, bs, true, limit) {
				qt, qs, qok = e.queueFirst()
			} else if len(e.chains) > 0 && e.chains[0].less(&chainKey{t: k.t, seq: k.seq}) {
				return // a chain is next, after the queue's first or limit
			}
			continue
		}
		if k.t > limit || qok && chainKeyLess(qt, qs, k.t, k.seq) {
			return
		}
		m := k.m
		e.popMark(at)
		if m.dead { // its event is queued at this key (WakeAtMark)
			m.set, m.dead = false, false
			continue
		}
		if e.passMark(m) {
			qt, qs, qok = e.queueFirst()
		}
	}
}

// queueFirst returns the queue's first key, if any.
func (e *Engine) queueFirst() (Time, uint64, bool) {
	if e.queue.len() == 0 {
		return 0, 0, false
	}
	t, s := e.queue.peekKey()
	return t, s, true
}

// chainKeyLess reports whether key (at, as) orders before (bt, bs).
func chainKeyLess(at Time, as uint64, bt Time, bs uint64) bool {
	return at < bt || at == bt && as < bs
}

// passMark takes m's number, as its event would have at its key, and
// reports whether it queued m's deferred event.
func (e *Engine) passMark(m *Mark) bool {
	if m.t > e.now {
		e.now = m.t
	}
	e.seq++
	e.marksPassed++
	m.got, m.set = e.seq, false
	if n := m.next; n != nil {
		m.next = nil
		n.seq = m.got
		e.insertMark(n)
	}
	if h := m.h; h != nil {
		m.h = nil
		if p, ok := h.(*Proc); ok && p.poller {
			e.pollerPending++
			p.pending++
		}
		e.queue.push(m.at, m.got, event{h: h})
		return true
	}
	return false
}

// WakeAtMark makes the event m stands for an event after all: p's
// wake-up at m's own key, run as the event at that key would have run
// (before every event the run orders after the key, after every one it
// orders before), for an agent whose chain of marks (SetMarkAfter) stood
// for wake-ups that did nothing others see until something changed what
// the next would read: m is the chain's first mark not yet passed, whose
// number is known (set by SetMark, or chained after a mark that has
// passed). The marks chained after m are dropped, unset, with the event
// deferred to the last (PushAtMark), and m takes no number when the run
// passes its key. Called from another agent's event that orders before
// the key (a write m's wake-up would read).
func (p *Proc) WakeAtMark(m *Mark) {
	e := p.e
	if !m.set || m.dead || m.seq == 0 || m.got != 0 {
		panic(fmt.Sprintf("sim: WakeAtMark of %q at a mark at %v that is not pending with its number", p.name, m.t))
	}
	for n := m.next; n != nil; {
		nn := n.next
		*n = Mark{}
		n = nn
	}
	m.next, m.h, m.dead = nil, nil, true
	if !e.checkFuture(m.t) {
		return
	}
	if p.poller {
		e.pollerPending++
		p.pending++
	}
	e.queue.push(m.t, m.seq, event{h: p})
}

// MarksPassed returns how many marks the run has passed so far (each one
// an event it did not run: see Mark).
func (e *Engine) MarksPassed() uint64 { return e.marksPassed }

// pendingMarks reports whether a mark is yet to be passed.
func (e *Engine) pendingMarks() bool { return e.nmarks > 0 || len(e.chains) > 0 }

// marksKey returns the earliest key of the pending marks and chains;
// pendingMarks must hold.
func (e *Engine) marksKey() (Time, uint64) {
	bt, bs := MaxTime, ^uint64(0)
	if e.nmarks > 0 {
		k, _ := e.firstMarkAt()
		bt, bs = k.t, k.seq
	}
	if len(e.chains) > 0 {
		if c := &e.chains[0]; chainKeyLess(c.t, c.seq, bt, bs) {
			bt, bs = c.t, c.seq
		}
	}
	return bt, bs
}

// firstMark returns the earliest pending mark's time; pendingMarks must hold.
func (e *Engine) firstMark() Time {
	if e.nmarks == 0 {
		return e.chains[0].t
	}
	k, _ := e.firstMarkAt()
	if len(e.chains) > 0 && e.chains[0].t < k.t {
		return e.chains[0].t
	}
	return k.t
}

// DeferWake makes p's next wake-up by a notification (Signal.Notify, p a
// plain waiter then) a mark instead of an event, for a step process whose
// wake-up would only begin a wait of d whose effects nobody sees before it
// ends (a work-group's poll resuming with an acquire that invalidates its
// own L1 and waits for it): p resumes d after the notification, its
// wake-up ordered as if the skipped wake-up event had slept d; WokeLate
// then reports true and p does what that event did. A wake-up at a
// WaitNotBefore key, in place (Signal.Wake) or after CancelDeferWake is
// an event as before. m must not be pending.
//
// With on set, the notification calls on(m) first, m set at the wake-up's
// key: it may do what the wake-up event and the events after it would have
// done, as far as nobody else sees it before p resumes, and queue p's
// resumption itself (PushAtMark on a mark chained after m), reporting
// true; false leaves the resumption d later.
func (p *Proc) DeferWake(m *Mark, d Duration, on func(m *Mark) bool) {
	if p.poller || p.steps == nil {
		return
	}
	p.wakeMark, p.wakeAfter, p.wakeOn = m, d, on
}

// CancelDeferWake undoes DeferWake if no notification has used it yet.
func (p *Proc) CancelDeferWake() { p.wakeMark, p.wakeOn = nil, nil }

// WokeLate reports whether p's last wake-up was deferred (DeferWake), and
// forgets it.
func (p *Proc) WokeLate() bool {
	l := p.late
	p.late = false
	return l
}

// wakeLate is p's wake-up by a notification now as a mark (DeferWake):
// the mark takes the number the wake-up event would have, and p resumes
// at the end of the wait that event would have begun.
func (e *Engine) wakeLate(p *Proc) {
	m, on := p.wakeMark, p.wakeOn
	p.wakeMark, p.wakeOn, p.late = nil, nil, true
	e.SetMark(m, e.now)
	if on != nil && on(m) {
		return
	}
	e.PushAtMark(m, e.now+p.wakeAfter, p)
}
