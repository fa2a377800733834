// Package loggops simulates GOAL schedules (package goal) in the LogGOPS
// model: gpunetsim's scale mode, which replays up to millions of ranks where
// the detailed hardware models would be too slow (the SC'19 paper). It
// follows LogGOPSim's semantics, so both give identical times, except for
// the reference's known pitfalls listed below.
//
// # Units
//
// Times are sim.Time (picoseconds). The per-byte costs G and O are PerByte
// values in femtoseconds per byte, so 0.04ns (25 GB/s) is 40000 and even
// 0.0025ns (400 GB/s) is exact; a per-byte term (s−1)·G is computed exactly
// in 128-bit arithmetic and rounded up to a whole picosecond. A "calc D"
// lasts D × Params.CalcUnit (default 1ns, LogGOPSim's unit). The clock
// ends at Horizon, 2^60 ps (13.3 days): a product or a time that would reach
// it fails the run with a *HorizonError naming the operation (never a
// clamped or wrapped time). Results are integers and byte-identical across
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
// is LogGOPSim's order but for the last rule; the engine in package sim
// cannot express it (its sequence number changes on every push), so the
// package keeps its own queue, which is also lighter than a callback per
// event: one bucket of entries per distinct time, drained in stamp order,
// and a small heap of the times. Collectives at scale run in lockstep (a
// 65,536-rank ring has tens of thousands of entries at each of a few
// times), where a heap over all entries would miss the cache at every
// level of every pop.
//
// # Pitfalls of LogGOPSim that this package does not share
//
// With Params.Compat = CompatNone (the default):
//
//   - Operations that become ready together keep program order. LogGOPSim
//     takes them in release order (the order of the dependency lines that
//     name the completing operation) and then sorts each host's batch by
//     kind with std::sort, which is unstable beyond 16 elements: equal
//     operations are permuted, which breaks first-in first-out matching for
//     the same source and tag and reorders sends to different peers (any
//     host with more than 16 operations ready at once, e.g. a linear
//     all-to-all of 10 ranks, gets other times).
//   - An operation released by a dependency never starts before that
//     dependency's completion (or, for irequires, its start): a calc at
//     t+d, an eager send at t+o+(s−1)O, a rendezvous send at its match, a
//     receive when its message has been received (t'+o+max(...)) or when it
//     is posted if that is later. LogGOPSim starts it at its own CPU's free
//     time, which on another CPU can be in the past. With one CPU the two
//     rules give the same times.
//   - A zero-byte message has no per-byte term (LogGOPSim computes (0−1)·G
//     in unsigned arithmetic, i.e. −G, and wraps around if that takes a
//     clock below zero).
//   - Rendezvous is decided by the message's size in both matching paths,
//     and the clocks raised are those of the CPU and NIC the send used
//     (LogGOPSim uses the receive's size and indices when the receive finds
//     the message already queued; with sizes on both sides of S it completes
//     a send twice or never).
//   - Errors cite 1-based line numbers; a schedule that cannot finish is a
//     *DeadlockError listing the stuck operations and unmatched messages,
//     never a partial result (LogGOPSim prints times whenever its matching
//     queues are empty, even if operations never ran).
//
// # Reproducing LogGOPSim
//
// Params.Compat = CompatLogGOPSim (CLI --compat loggopsim) reproduces the
// first three pitfalls bit for bit: release order reordered by an exact
// re-implementation of libstdc++'s std::sort (introsort, tested against
// permutations produced by g++), released operations at their own CPU's
// clock, and −G (−O) for empty messages, with an error where a clock that
// this took below zero (which LogGOPSim's unsigned arithmetic wraps to
// about 2^64) is read. Of the fourth it reproduces the raised indices (the
// receive's CPU and NIC at the sender); a receive and a queued message on
// opposite sides of S, where LogGOPSim completes the send twice or never,
// is an error. The fifth is not reproduced: such runs are deadlocks here.
// A LogGOPSim built against another C++ library (libc++ on macOS) sorts
// differently and cannot be matched. docs/goal.md records the differential
// comparison with a re-statement of LogGOPSim's loop.
//
// LogGOPSim's parameters are integers in one time unit (usually ns). To
// compare with per-byte costs below one unit, run LogGOPSim in ps and give
// this package --calc-unit 1ps; pass S explicitly (LogGOPSim's default is
// 65535, ours 64KiB). LogGOPSim prints per-host times instead of the
// maximum for 16 hosts or fewer.
//
// # Streaming and memory
//
// Ranks are read lazily (see package goal's Window): an operation is loaded
// before anything it waits for starts, and dropped when it has completed and
// no later statement can name it. Memory is proportional to ranks plus the
// operations in flight: about 150 bytes of state per rank plus its reader
// (a generator's few dozen bytes, or a file rank's decoding buffer), 72 per
// operation held and 16 per queued event. Measured peaks (RSS, Go runtime
// included): 523 B per rank for a 1,048,576-rank binomial broadcast, whose
// operations are all live at once, and 1.7 KB per rank for a 65,536-rank
// ring allreduce.
package loggops
