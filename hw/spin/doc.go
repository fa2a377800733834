// Package spin models the sPIN side of a Portals NIC (the dissertation (Portals 4)
// §5, the SC'19 paper): execution contexts bound to matching entries,
// header/payload/completion handlers running on HPUs, the packet buffer
// with back-pressure, the scheduler and its policies, NIC memory, and the
// DMA write engine towards host memory. It also holds the Portals-4 iovec
// receive engine of the datatype baseline (the SC'19 paper).
//
// # Usage
//
//	s := spin.New(node.NIC, spec)                                // one per NIC that runs handlers
//	ctx, err := s.NewContext(spin.Handlers{Payload: h}, pol, nicBytes) // NIC memory for the context
//	node.NIC.MEAppend(pt, nic.ME{..., Ctx: ctx}, nic.Priority)
//
// The Portals NIC hands every put packet bound to such an ME to the
// context (nic.ExecContext); an ME without a context keeps the plain DMA
// path bit for bit. A handler is a Go function over a *HandlerCtx; it
// really computes (e.g. datatype regions) and charges its time: Cycles for
// compute, NICMem for NIC-memory traffic, DMAPayload/DMAToHost(B) for DMA
// writes (flag NoEvent), DMAFromHostB for reads, Command for NIC commands.
// Return Success, Drop or Fail.
//
// # Timing model
//
//   - Inbound: a packet bound to a context is copied into the packet
//     buffer (B_pkt bytes, a NIC-memory write); when the buffer cannot take
//     it the Portals inbound engine stalls and holds every later packet in
//     arrival order until a slot frees (nic.NIC.Resume): no loss. A slot
//     frees when the packet's handlers are done and every DMA reading it
//     has read it. The fabric's ports do not see the stall (no link-level
//     credits): held packets wait in the NIC's inbound queue.
//   - Handler execution requests go to the scheduler when the copy is done.
//     Default policy: FIFO to any idle HPU. Blocked round-robin (Δp,
//     #vHPUs): packet i belongs to sequence ⌊i/Δp⌋ on vHPU (sequence mod
//     #vHPUs); a vHPU runs on one HPU while it has ready packets, in
//     arrival order, then yields. Happens-before: a message's payload
//     handlers start after its header handler ends; its completion handler
//     starts after every payload handler has ended.
//   - HPUs are blocking agents (sim.Proc), one per core, at HPUFreq. Each
//     invocation costs InvokeCycles; each DMA issue DMAIssueCycles. A
//     handler's compute runs on a local clock; the agent catches up with it
//     at every service that touches a shared resource, so requests reach
//     NIC memory and the DMA FIFO at the simulated time they were issued.
//   - NIC memory: one FIFO byte server at MemBandwidth with a latency of
//     MemLatency HPU cycles and at most Channels() accesses in flight,
//     shared by packet copies, handler traffic and DMA payload reads.
//   - DMA write FIFO: a request enters at issue, reads its source from NIC
//     memory, then leaves as TLPs of at most the link's MPS over the NIC's
//     PCIe link; each TLP pays the link's gap and TLPHeader bytes of
//     overhead (the link's bandwidth is its full-TLP effective rate, so a
//     TLP of l bytes occupies ⌈(l+H)·MPS/(MPS+H)⌉ bytes of it). Writes are
//     visible in issue order. The FIFO is unbounded; its occupancy
//     (requests entered and not yet left) is recorded: the maximum always,
//     the trace with TraceDMA. A DMA without NoEvent raises a DMAEvent
//     when it is visible, hence after every earlier write (FIFO order).
//   - Message completion: after the completion handler (or the last
//     payload handler when there is none), once every DMA issued so far is
//     on PCIe, the Portals NIC posts the PUT event on the ME's PT EQ after
//     all those writes are visible, and sends the ack. A FAIL ends the
//     message with a HANDLER_FAIL event; DROP skips the message's later
//     payload handlers.
//   - Outbound sPIN (ProcessPut): one HER per packet of the message,
//     no packet data in NIC memory; the payload handler finds its packet's
//     host regions and hands them over with StreamRegion (a streaming-put
//     command each); the NIC appends them to one streaming put
//     (nic.SPutStart) in packet order, whatever order handlers finish in.
//   - HPU model pulp (spin.hpu_model, the SC'19 paper, package pulp):
//     the same agents and scheduler on the PULP accelerator's memories.
//     Packets land in L2 through the input port; before a handler runs, the
//     cluster DMA stages its packet into L1 (Stats.StageWait); SharedMem
//     (dataloops, master checkpoints) goes to L2, arbitrated per beat at
//     its banks (a core alternates with DMA bursts, package pulp);
//     NICMem is the core's L1; Bring moves a checkpoint or segment into the
//     running cluster's L1 on first use and between clusters after; a DMA
//     write leaves L1 through the cluster DMA and the output port — a
//     cluster queues at most spin.pulp.dma_queue of them until their source
//     is read, and a handler issuing into a full queue stalls
//     (Stats.DMAQueueWait) — and the FIFO hands requests to PCIe in order (a request read early by
//     another cluster waits for the ones before it).
//   - Static runs (RunStatic, the SC'19 paper): packets preloaded
//     in NIC memory and assigned to HPUs up front, no scheduler; each
//     handler's Work over Elapsed is its IPC under the cycle-cost model.
//   - Iovec engine: one engine processes packets in arrival order, a DMA
//     write per region; every IovecEntries entries consumed it stalls for
//     an IovecFetch read of the next ones (no prefetch).
//
// # Not modelled
//
// Handler instruction caches, DMA completion events on the PT EQ (they are kept on the sPIN side; the
// message's completion is the PUT event there), and contexts on overflow
// lists (unexpected messages take the plain path, the SC'19 paper).
package spin
