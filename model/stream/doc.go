// Package stream is the host-side GPU runtime: an in-order stream (an HSA
// user-mode queue served by the GPU's command processor) that takes kernel
// launches and, for GDS (the dissertation's GPU-TN chapter (GDS)), NIC-trigger and wait-value
// operations, plus host synchronization on a kernel's completion signal.
//
// The host's path to enqueue a packet (the dissertation
// §6): the runtime's instructions (sw.kernel_launch for a kernel dispatch,
// sw.aql_build for the other packets: GDS trigger and wait, barrier
// marker), the queue reserve's locked read-modify-write of the queue's
// write index (a miss: the CP's reads took the line, so it costs
// cpu.dram_latency on the host core), the packet's store, and the doorbell
// store, which reaches the CP after the memory latency; the CP reads the
// packet and pays the GPU's launch overhead. A host waits for a kernel's
// completion signal by polling it (sw.kernel_wait = poll: its core stays
// busy) or in a blocking wait (block: the core is free, and the thread
// runs again cpu.wake_latency after the signal is written).
//
// Completion signals come from a per-stream pool: a kernel's word goes
// back once the host has waited for it and the next launch resets it (the
// store is part of sw.kernel_launch). A Program (Enqueue) is a schedule of
// operations made from their index when the CP reaches them (GDS: wait,
// kernel, trigger per ring step), each costing the host what the single
// call costs; its kernels run with a null completion signal. Operations
// waiting for the CP are small values, not closures: a GDS host enqueues
// its whole schedule ahead of the CP.
package stream
