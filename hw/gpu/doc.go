// Package gpu models a GCN-style GPU at the abstraction of the dissertation:
// compute units with SIMD servers and residency limits, a work-group
// dispatcher, a command processor (CP) that serves an in-order queue of
// kernel dispatches and stream operations, fixed launch and teardown
// overheads, and the HSA-style scoped acquire/release memory model the
// dissertation's GPUs follow (docs/model.md), with functional effects.
//
// A kernel is a Go function run once per work-group (WG) as a blocking
// process; work-items are loops inside it. The body declares its costs
// through the WG: VALU (vector instructions per wavefront, 4 cycles each on
// its SIMD), Scalar, Stream (bulk bytes through the node's memory server),
// word Loads/Stores through the cache model, Barrier, Acquire and Release.
// A kernel may instead give its body as a state machine (Kernel.Steps,
// steps.go): the work-group then runs as callback events, with the same
// simulated times and events, but no coroutine stack and no coroutine
// switch per wait; large runs use it for their hot kernels.
//
// Memory model. Word accesses (flags, counters, queue slots) go through a
// per-CU vector L1 that is not coherent: a line once filled returns its
// cached bytes until an acquire at device or system scope invalidates the L1,
// or the line is evicted (FIFO, gpu.l1_lines). So a consumer that skips the
// acquire really reads stale data. Stores write through the L1; in APU mode
// the L2 is write-through and probe-coherent, so it is folded into memory; in
// dGPU mode the L2 is write-back and not probed: stores stay in dirty L2
// lines until a system-scope release writes them back, and a system-scope
// acquire invalidates L2 lines so NIC-written data becomes visible. System-
// scope atomic loads bypass the caches. A memory-side L2 (Spec.L2MemorySide,
// NVIDIA's) is the exception for the GPU's own memory: every write to it,
// a NIC's included, passes through the L2, so the L2 is never stale there;
// word loads, atomics and system-scope loads of that memory are served by
// the L2 (a hit when the tag model holds the line), stores are visible to
// all when they reach it, and only lines of host memory remain for a
// system-scope acquire or release to drop or write back (gpu.go). Kernel start implies a system
// acquire and kernel end a system release, charged to launch and teardown.
//
// User-mode queues (aql.go, the dissertation's XTQ chapter): HSA AQL rings in
// host memory with write and read indices and a doorbell word, served by a
// per-queue packet processor on the CP that waits for the doorbell, reads
// the slot (a memory access), waits for a valid header, frees the slot,
// runs the kernel (kernel objects are registered code handles; arguments
// are read from the kernarg address) and decrements the completion signal
// after teardown. Packets of one queue run one at a time (as with the
// barrier bit); queues run concurrently. The launch overheads are the
// preset's (zero in preset xtq: the CP reads the packet and dispatches as
// CUs free up).
//
// Bulk arrays are modelled for bandwidth only (Stream): the body reads and
// writes their bytes in memory directly, so bulk data is never stale. This
// keeps large kernels fast; the visibility rules are exercised by the
// control words, which is where the strategies differ. Address-carrying
// bulk accesses (StreamLines, the LoadLanes gather, bulk.go) pass each
// line through the L2 tag model: L2 hits cost the L2 latency and no
// memory bandwidth, misses and every line of an L2-uncacheable page go to
// the memory server, so the cost of GIO's uncacheable pages emerges from
// the reuse of the access pattern (the GIO slides). The tag model is
// not invalidated by a work-group's system-scope acquire (the functional
// L2 copy is), so timing of reuse across such acquires is optimistic.
package gpu
