package shmem

// BlockingForm makes the context's calls from coroutine code run the
// channel's blocking Submit instead of its step form, which tests compare
// with it.
func (c *Ctx) BlockingForm() { c.blockingForm = true }
