package shmem

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
