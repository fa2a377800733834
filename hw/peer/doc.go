// Package peer models what a GPU does to another GPU of its node without a
// NIC: its work-groups' stores, loads and atomics to the peer's memory
// (NVLink or Infinity Fabric peer access through CUDA or HIP IPC mappings,
// as NVSHMEM's and ROC_SHMEM's intra-node transports use), and its DMA copy
// engines' peer copies (cudaMemcpyPeerAsync).
//
// Every access crosses the node's GPU fabric (hw/net's intra-node tier) as
// packets of at most link.payload bytes, or as one flow in the flow model,
// sharing the fabric's links and their contention with NIC-issued
// intra-node traffic. Bytes are read from the source memory when a transfer
// starts and written into the destination memory, waking its watchers,
// when it arrives; an atomic is applied at the target's memory when its
// request arrives.
//
// Left out: the peer's L2 (a peer store lands in memory, as a NIC's DMA
// does here), the fabric's flit-level protocol and credit flow control, the
// page-table walks of first-touch IPC mappings, and the copy engines'
// own bandwidth limit (the fabric bounds them).
package peer
