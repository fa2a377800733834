// Package stream is the host-side GPU runtime: an in-order stream (an HSA
// user-mode queue served by the GPU's command processor) that takes kernel
// launches and, for GDS (gpu-networking.md §5), NIC-trigger and wait-value
// operations, plus host synchronization on a kernel's completion signal.
//
// The host's path to enqueue a packet (hardware.md §10, gpu-networking.md
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
package stream
