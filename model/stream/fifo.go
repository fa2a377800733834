package stream

// fifo is a queue that reuses its storage: popped slots are cleared (so
// they hold nothing for the collector), and the live tail moves to the
// front when the slice is full and at least half of it is popped.
type fifo[T any] struct {
	buf  []T
	head int
}

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

// peek returns the oldest element in place; the queue must not be empty.
func (f *fifo[T]) peek() *T { return &f.buf[f.head] }
