// Package pulp models the memory system of the PULP-based sPIN accelerator
// (the SC'19 paper), the optional HPU model of preset pulp:
// clusters of RISC-V cores, each cluster with an L1 scratchpad of banks
// (two per core) and one multi-channel DMA engine, a shared L2 scratchpad of
// two banks, a 256-bit input port from the network into L2 and a 256-bit
// output port towards PCIe.
//
// Every resource is a server with a queue (port): it moves `width` bytes
// per cycle, a transfer of n bytes holds it for ⌈n/width⌉ beats plus any
// per-transfer setup, and later requests queue behind earlier ones. A
// transfer that streams through several resources (an L2 bank, a cluster
// DMA channel, the output port) holds each of them for its beats from the
// moment it is issued, and completes when the slowest has passed its last
// beat, plus the fixed latencies on the path. So bank contention, DMA
// channel saturation and the output port's width all come from queueing,
// not from a fixed rate.
//
//   - Packets land in L2 through the input port (PacketIn). L2 addresses
//     interleave over the banks in granules of l2_interleave bytes.
//   - A core reads and writes L2 over the interconnect (L2Access, and
//     L2Reads for a loop's reads): l2_latency cycles plus the bank's
//     word arbitration. PULP's interconnects arbitrate every cycle,
//     round-robin, so a core's access alternates beats with a DMA burst
//     holding the bank instead of waiting for all of it, and the burst
//     loses the beats the core takes; cores' accesses queue behind each
//     other. The same holds for a core's own L1 banks (L1Access).
//   - The cluster DMA moves data L2 → L1 (Stage) and L1 → output port
//     (Out) at dma_width bytes per cycle per direction, L1 → L1 across
//     clusters (Move: out of one cluster, into the other), and the NIC's
//     engine moves L2 → output port directly (OutFromL2).
//   - A core's L1 traffic goes to its two banks (L1Access), which also take
//     the DMA writes into and reads out of that core's buffers (bursts).
//
// Core i runs in cluster i mod clusters, so fewer cores than the design's
// 32 still spread over every cluster's DMA engine.
//
// Not modelled: L1 and L2 capacity limits (the sPIN side accounts for NIC
// memory and the packet buffer), the shared instruction caches (handlers
// are charged in cycles), interconnect contention other than at the L2
// bank ports and the DMA channels. The bound on queued outbound DMA
// transfers (dma_queue) is enforced by the sPIN side, which issues them.
package pulp
