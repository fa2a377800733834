// Package sched time-slices simulated software threads on a fixed set of
// cores (the dissertation: "if more service threads are requested than there
// are CP cores, the threads are time-sliced round-robin on the cores",
// [DEFAULT] quantum 10 µs). It serves the ComP-Net service threads on the
// CP cores (the host cores have their own scheduler in hw/cpu).
//
// A thread is bound to one core (round-robin at Bind) and charges every
// stretch of work with Busy, including the stalls of its memory accesses:
// a busy-polling thread never leaves its core on its own. While other
// threads of the same core are runnable, the holder is preempted when its
// quantum is used up and goes to the back of the core's FIFO. A thread
// alone on its core is never preempted.
//
// Not modelled: context-switch cost, migration between cores, priorities.
package sched
