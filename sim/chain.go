package sim

// Chain holds events that come due in the order they are scheduled, such
// as the completions of a FIFO server (a link's packets, a DMA engine's
// reads), and keeps only the first of them in the engine's queue.
//
// Why: a busy link has every queued packet's arrival already computed, and
// scheduling each one at once made the queue hold thousands of events on a
// 64-node run, a third of whose CPU time went to the queue's comparisons
// (docs/speed.md). A chain takes each event's sequence number when it is
// scheduled, exactly as Engine.AtH would, and puts the event into the queue
// with that number when its predecessor runs. An event only enters the
// queue earlier than it is due, with the key it would have had, and the
// queue's order is by key alone, so every event runs exactly when and in
// the order it would have: times and event counts are unchanged.
//
// An event scheduled before the chain's last one (out of order) goes to the
// queue at once, with the same effect. The zero Chain is empty and ready;
// a Chain serves one engine.
type Chain struct {
	e     *Engine
	items []chained // items[head] is in the engine's queue; the rest wait
	head  int
}

type chained struct {
	t   Time
	seq uint64
	h   Handler
	arg uint64
}

// AtH schedules h.Handle(arg) at time t on engine e, like e.AtH.
func (c *Chain) AtH(e *Engine, t Time, h Handler, arg uint64) {
	if !e.checkFuture(t) {
		return
	}
	e.seq++
	if c.head == len(c.items) {
		c.e = e
		c.items = append(c.items[:0], chained{t: t, seq: e.seq, h: h, arg: arg})
		c.head = 0
		e.queue.push(t, e.seq, event{h: c})
		return
	}
	if t < c.items[len(c.items)-1].t {
		e.queue.push(t, e.seq, event{h: h, arg: arg})
		return
	}
	c.items = append(c.items, chained{t: t, seq: e.seq, h: h, arg: arg})
}

// Len returns the chain's events not yet run.
func (c *Chain) Len() int { return len(c.items) - c.head }

// Handle runs the chain's first event after putting the next one into the
// engine's queue.
func (c *Chain) Handle(uint64) {
	it := c.items[c.head]
	c.items[c.head] = chained{} // drop references for the GC
	c.head++
	switch {
	case c.head == len(c.items):
		c.items, c.head = c.items[:0], 0
	default:
		if c.head >= 64 && 2*c.head >= len(c.items) {
			// A link that never drains: move the waiting events down
			// so the slice does not grow for ever.
			n := copy(c.items, c.items[c.head:])
			clear(c.items[n:])
			c.items, c.head = c.items[:n], 0
		}
		next := &c.items[c.head]
		c.e.queue.push(next.t, next.seq, event{h: c})
	}
	it.h.Handle(it.arg)
}
