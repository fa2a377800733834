// Package sim is gpunetsim's discrete-event engine: simulated time, an event
// queue, blocking processes and deterministic random streams. It knows
// nothing of hardware.
//
// Time is an int64 count of picoseconds (Time, Duration). Two kinds of
// activity share one queue ordered by (time, sequence number), so ties run in
// the order they were scheduled and a run repeats exactly:
//
//   - Callback events (At, After, AtH) for high-count mechanics: packets,
//     ports, DMA, counters. They must not block. AtH takes a Handler and an
//     argument and allocates nothing.
//   - Processes (Spawn) for agents that block: host threads, GPU
//     work-groups, service threads. A process is an iter.Pull coroutine that
//     runs straight-line code and blocks only through engine operations:
//     Proc.Sleep, Proc.Wait on a Signal (with a predicate), Proc.Join.
//   - Step processes (SpawnSteps) for agents too numerous for a coroutine
//     each (GPU work-groups): the body is a Stepper, a state machine the
//     engine calls at the start and after each wait, with the same events
//     as the coroutine body that waits where it waits. A coroutine can also
//     lend its process to a Stepper for a stretch of many short waits
//     (Proc.RunSteps: a host thread's MPI progress loop).
//
// The queue is a radix heap (radix.go: monotone, as nothing is scheduled
// before now) beside a FIFO of the events scheduled for the current time;
// a Chain keeps only the first of a series of events that come due in
// scheduling order (a link's arrivals) in it. FIFO and FreeList (reuse.go)
// are the storage-reusing queue and free list the models share.
//
// Run drains the queue. When it empties while non-daemon processes still
// wait, Run returns a *DeadlockError listing every blocked process and what
// it waits on. A panic inside a process stops the run with a *PanicError
// carrying the process name and stack.
//
// A Group (parallel.go) splits one simulation into partitions, one Engine
// each, run in parallel windows of the lookahead (the least delay of any
// cross-partition interaction) with a deterministic merge of the events
// posted across partitions at every barrier (docs/parallel.md).
//
// One Engine per goroutine; nothing here is safe for concurrent use, and
// there is no package-level state. Random streams (Engine.Stream) are PCG
// generators derived from the engine seed and an entity name, so adding an
// entity never perturbs another's stream.
package sim
