package sim

import "runtime"

// spinPolls bounds how often receive polls a channel before it blocks:
// about 20–60 µs, yielding the processor now and then to other goroutines
// (the garbage collector's workers).
const spinPolls = 1 << 12

// receive returns the next value from ch, polling it for a while before
// blocking. It is the partitioned engine's barrier (Group.Run). Why: a
// window is a few hundred microseconds of work, and parking a thread and
// waking it through the scheduler costs tens of microseconds of CPU on
// each side; on two idle cores a plain channel barrier made the 256-node
// allreduce about 30 % more expensive per event than one engine, and no
// faster (docs/parallel.md). A bounded poll keeps the barrier cheap on
// idle cores and short when the other side is descheduled.
func receive[T any](ch <-chan T) (T, bool) {
	for i := range spinPolls {
		select {
		case v, ok := <-ch:
			return v, ok
		default:
		}
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	v, ok := <-ch
	return v, ok
}
