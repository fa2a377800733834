// Package loggops simulates GOAL schedules (package goal) in the LogGOPS
// model: gpunetsim's scale mode, which replays up to millions of ranks where
// the detailed hardware models would be too slow (workloads.md §11.12). It
// follows LogGOPSim's semantics, so both give identical times, except for
// the reference's known pitfalls listed below.
//
// # Units
//
// Times are sim.Time (picoseconds). The per-byte costs G and O are PerByte
// values in femtoseconds per byte, so 0.04ns (25 GB/s) is 40000 and even
// 0.0025ns (400 GB/s) is exact; a per-byte term (s−1)·G is computed exactly
// in 128-bit arithmetic and rounded up to a whole picosecond. A "calc D"
// lasts D × Params.CalcUnit (default 1ns, LogGOPSim's unit). Products beyond
// 2^60 ps (13 days) saturate. Results are integers and byte-identical across
// runs.
//
// # Semantics
//
// Each host has, per CPU, the time the CPU is next free and, per NIC, the
// next free send and receive times. Operations run when their dependencies
// are met:
//
//   - calc d starts at t ≥ CPU free and occupies the CPU until t+d.
//   - send s starts at t ≥ max(CPU free, NIC send free); the CPU is busy
//     until t+o+(s−1)O, the NIC send side until t+g+(s−1)G, and the message
//     arrives at t+o+L. If s ≤ S (eager) the send is complete for its
//     dependents at t+o+(s−1)O; if s > S (rendezvous) it completes only
//     when a receive matches it, and the sender's CPU and NIC send clocks
//     are raised to that time.
//   - recv is posted at t ≥ CPU free at no cost and first matched against
//     the unexpected messages, oldest first.
//   - An arrival is processed at t' ≥ max(arrival, CPU free, NIC receive
//     free) on the CPU and NIC indices given by the send (the receive may
//     not be posted yet); the CPU is busy until t'+o+max((s−1)O, (s−1)G) and
//     the NIC receive side until t'+g+(s−1)G. It matches the oldest posted
//     receive with the same source (or -1) and tag (or -1), else it queues
//     as unexpected.
//   - A host's finish time is the last moment one of its CPUs is busy.
//
// Operations wait in one queue ordered by (time, stamp). An operation gets a
// stamp when it becomes ready and keeps it when it is re-queued because its
// CPU or NIC is busy; a message gets one when it is sent. Operations that
// become ready in the same step are stamped host by host (ascending),
// sends before receives before calcs, and otherwise in program order. This
// is LogGOPSim's order; the engine in package sim cannot express it (its
// sequence number changes on every push), so the package keeps its own
// queue, which is also lighter than a callback per event: one bucket of
// entries per distinct time, drained in stamp order, and a small heap of
// the times. Collectives at scale run in lockstep (a 65,536-rank ring has
// tens of thousands of entries at each of a few times), where a heap over
// all entries would miss the cache at every level of every pop.
//
// # Pitfalls of LogGOPSim that this package does not share
//
//   - Operations that become ready together keep program order (LogGOPSim's
//     unstable sort by type can reorder them, breaking first-in first-out
//     matching for the same source and tag once more than 16 are ready).
//   - An operation released by a dependency never starts before that
//     dependency's completion (or, for irequires, its start): a calc at
//     t+d, an eager send at t+o+(s−1)O, a rendezvous send at its match, a
//     receive when its message has been received (t'+o+max(...)) or when it
//     is posted if that is later. LogGOPSim starts it at its own CPU's free
//     time, which on another CPU can be in the past. With one CPU and one
//     NIC the two rules give the same times.
//   - A zero-byte message has no per-byte term (LogGOPSim computes (0−1)·G
//     in unsigned arithmetic).
//   - Rendezvous is decided by the message's size in both matching paths,
//     and the clocks raised are those of the CPU and NIC the send used
//     (LogGOPSim uses the receive's size and indices when the receive finds
//     the message already queued).
//   - Errors cite 1-based line numbers; a schedule that cannot finish is a
//     *DeadlockError listing the stuck operations and unmatched messages,
//     never a partial result.
//
// # Streaming and memory
//
// Ranks are read lazily (see package goal's Window): an operation is loaded
// before anything it waits for starts, and dropped when it has completed and
// no later statement can name it. Memory is proportional to ranks plus the
// operations in flight: about 150 bytes per rank, plus 72 per operation
// held.
package loggops
