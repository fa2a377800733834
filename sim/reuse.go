package sim

// FIFO is a first-in first-out queue that reuses its storage: popped
// slots are cleared (so they hold nothing for the collector), and the live
// tail moves to the front when the slice is full and at least half of it
// was popped. Queues that fill and drain for a whole run (a stream's
// operations, a NIC's trigger FIFO) otherwise reallocate as they reslice
// from the front. The zero FIFO is empty and ready.
type FIFO[T any] struct {
	buf  []T
	head int
}

// Len returns the number of queued elements.
func (f *FIFO[T]) Len() int { return len(f.buf) - f.head }

// Push adds v at the back.
func (f *FIFO[T]) Push(v T) {
	if f.head > 0 && len(f.buf) == cap(f.buf) && 2*f.head >= len(f.buf) {
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, v)
}

// Pop removes and returns the oldest element; the queue must not be empty.
func (f *FIFO[T]) Pop() T {
	var zero T
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return v
}

// Front returns the oldest element in place; the queue must not be empty.
func (f *FIFO[T]) Front() *T { return &f.buf[f.head] }

// Back returns the newest element in place; the queue must not be empty.
func (f *FIFO[T]) Back() *T { return &f.buf[len(f.buf)-1] }

// FreeList keeps things done with for reuse, last in first out (the most
// recently used is the likeliest still in cache). The zero FreeList is
// empty and ready.
type FreeList[T any] struct{ items []T }

// Get returns a kept thing and true, or the zero T and false when none is
// kept.
func (f *FreeList[T]) Get() (T, bool) {
	var zero T
	n := len(f.items)
	if n == 0 {
		return zero, false
	}
	v := f.items[n-1]
	f.items[n-1] = zero // hold nothing for the collector
	f.items = f.items[:n-1]
	return v, true
}

// Put keeps v for a later Get.
func (f *FreeList[T]) Put(v T) { f.items = append(f.items, v) }

// Len returns the number of things kept.
func (f *FreeList[T]) Len() int { return len(f.items) }
