package shmem

import "github.com/gpunetsim/gpunetsim/hw/mem"

// QueueRing returns the ring of the context's work-group queue and its
// entries (the host-forwarding backends; 0 for others).
func (c *Ctx) QueueRing() (ring mem.Addr, entries int) {
	if b, ok := c.dev.backend.(*queueBackend); ok {
		q := b.queues[c.wg.ID]
		return q.ring, int(q.q)
	}
	return 0, 0
}

// GIOLock returns the address of the ticket lock of the context's QP set
// to pe (0 when the sets are not shared), and the PEs its channel has
// recorded a last post for.
func (c *Ctx) GIOLock(pe int) (lock mem.Addr, posted int) {
	t, ok := c.ch.(*timedChannel)
	if !ok {
		return 0, 0
	}
	inner := t.ch
	if p, ok := inner.(*peerChannel); ok {
		inner = p.inner
	}
	ch, ok := inner.(*gioChan)
	if !ok || !ch.shared {
		return 0, 0
	}
	return ch.c.b.lock(ch.c.q*ch.c.b.dev.npes + pe), len(ch.last)
}

// BlockingForm makes the context's calls from coroutine code run the
// channel's blocking Submit instead of its step form, which tests compare
// with it.
func (c *Ctx) BlockingForm() { c.blockingForm = true }

// TemplaterLoop makes a GIO context's templater run its coroutine loop
// instead of its steps (called before the templater starts: in the
// kernel, after the context was created).
func (c *Ctx) TemplaterLoop() {
	if b, ok := c.dev.backend.(*gioBackend); ok {
		b.loopTemplater = true
	}
}

// FlushEvents makes a GIO context's stepped puts keep the PPB flush's
// wake-up an event (gioPutSteps.claimAtFlushEnd), as the blocking form
// does.
func (c *Ctx) FlushEvents() {
	if b, ok := c.dev.backend.(*gioBackend); ok {
		b.flushEvents = true
	}
}
