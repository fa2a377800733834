// Package verbs is the GPU-native verbs runtime of GNN_GPURDMA
// (the GPUrdma paper, the dissertation): QPs and CQs created by the
// host at setup (Domain.Connect, Node.NewCQ, registered buffers) in GPU or
// host memory, and the post path GPU threads run themselves — write the
// 64 B WQE (QP.Post; QP.PostBlock for the threadblock-collaborative post),
// update the doorbell record, system fence, MMIO doorbell (QP.Ring) — and
// the CQ poll (CQ.Poll, CQ.WaitQP; Scanner for the collaborative poll of a
// shared CQ). A host-thread path (HostPost, HostRing, HostPoll) serves
// CPU-driven baselines. The NIC side is hw/nic's verbs front end.
//
// Costs: the GPU single-thread steps are the calibration inputs of
// the GPUrdma paper (Spec.FieldStore per 8-byte field written, DBRecord,
// Fence); everything after the doorbell — WQE fetch, payload read, wire,
// remote landing, ack, CQE write, the poll's loads — is the NIC, PCIe and
// network models, so the CQ poll time and every bandwidth emerge. Stores
// are functional: a WQE in GPU memory sits in the dGPU write-back L2 until
// the fence writes it back (QP.RingUnfenced shows the stale fetch). The
// GPUrdma paper's optimisations are independent flags: WQE reuse (only fields
// that differ from the slot's contents are written), pipelining and
// batched doorbells are used by the callers' loops (the workloads).
//
// Not modelled: the K40's memory-side L2 (volatile loads read memory at
// the memory latency), CQ overrun (CQs are sized for their QPs), QP pools
// and dynamically connected QPs, GPU-side RDMA
// atomics.
package verbs
