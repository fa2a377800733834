// Package gpi is the GPI (GASPI) subset of GPU-side GPI (the dissertation
// §2.6): segments, notifications and queues over the verbs runtime
// (model/verbs), with threadblock-wide device calls (Device: Write, Notify,
// WriteNotify, NotifyWaitsome, NotifyReset, Wait) and the same calls for a
// host thread (Host), which the CPU-driven baselines use.
//
// A queue connects a rank to every other rank: one QP per (queue, peer),
// created on first use together with its peer's end, and one CQ per
// (rank, queue) shared by its QPs. Notifications are 8-byte flags in a
// per-rank notification area; a notify is an inline RDMA write of the
// value (the payload travels inside the WQE), so write_notify is two WQEs
// on one QP, ordered at the sender and delivered in order by the RC
// transport — but under the peer-to-peer reorder hazard (the GPUrdma paper)
// the flag can still become visible before its payload.
//
// Device calls are work-group collective: the leader thread does the post
// path (model/verbs costs) and the call ends with a barrier. A full queue
// is drained first (gaspi_wait), as GPI applications do. Not modelled:
// timeouts other than blocking, gaspi_read, group collectives, atomics,
// passive communication.
package gpi
