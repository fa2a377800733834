package nic

// fifo is a queue that reuses its storage (as model/stream's): popped
// slots are cleared, and the live tail moves to the front when the slice is
// full and at least half of it is popped. The GPU-TN trigger FIFO and the
// registrations waiting for an entry fill and drain all run long; reslicing
// from the front made them reallocate.
type fifo[T any] struct {
	buf  []T
	head int
}

func (f *fifo[T]) len() int { return len(f.buf) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && len(f.buf) == cap(f.buf) && 2*f.head >= len(f.buf) {
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, v)
}

// pop removes and returns the oldest element; the queue must not be empty.
func (f *fifo[T]) pop() T {
	var zero T
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return v
}

// front returns the oldest element; the queue must not be empty.
func (f *fifo[T]) front() T { return f.buf[f.head] }
