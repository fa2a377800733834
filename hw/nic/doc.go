// Package nic models a node's network interface with Portals 4 semantics,
// Portals triggered operations and the GPU-TN trigger extension
// (the dissertation (Portals 4); the MPI mapping is built above it, in
// model/).
//
// # Usage
//
// Build one NIC per node with New over the node's mem.Memory, the NIC's
// pcie.Link and the net.Fabric (New attaches it). Target side: allocate an
// EQ (NewEQ), counting events (NewCT), portal table entries (PTAlloc), and
// append matching entries (MEAppend). Initiator side: describe buffers with
// MD and post Commands. Agents (host threads, GPU work-groups) are
// *sim.Proc and use the blocking entry points; the NIC itself is callback
// mechanics and never blocks:
//
//	Doorbell(p, cmd)                     host command: MMIO doorbell, descriptor fetch, CmdLatency
//	PostTriggered(p, cmd, ct, threshold) Portals triggered op; Arm is the NIC-side half
//	PostDeferred / ActivateDoorbell      GDS: the CPU stores, the GPU CP's doorbell activates
//	PostDeferredBlock(p, count, cmd)     GDS: count deferred commands made from their index
//	RegisterTrigger(p, tag, cmd, th, f)  GPU-TN TrigPut/TrigGet (onHostRegister)
//	RegisterTriggerOf(p, tag, blk, i, th) the same for command i of a CommandBlock
//	TriggerWrite(p, tag)                 GPU-TN store to TriggerAddr (onTriggerWrite)
//	Execute(cmd)                         a command already on the NIC (CmdLatency, no PCIe)
//
// Completion is observed through EQ (Get, Wait, Signal), CT (Get, Wait,
// Signal) and Command.CompletionFlag words in memory (Watch them).
//
// # Timing model (all times int64 picoseconds, sizes in bytes)
//
//   - Host command: a posted write (Down) of the 8 B doorbell, or of the
//     CmdSize descriptor with InlineCmd; the caller sleeps until its side
//     is done. At visibility the NIC DMA-reads the CmdSize descriptor (a
//     PCIe read, skipped with InlineCmd), waits CmdLatency and executes.
//     Commands are pipelined (CmdLatency is a latency, not an occupancy).
//   - Outbound: a message is split into packets of at most maxPayload; each
//     packet's payload is DMA-read (requests of at most MaxReadReq, P2P
//     penalty for GPU memory) and handed to the fabric when it arrives, in
//     order; all reads of a message are issued at once (the NIC buffer is
//     not bounded). SEND is raised when the last packet has been read and
//     sent (the buffer is reusable).
//   - Inbound: one pipeline in arrival order. A header packet is matched
//     at arrival, costing MatchCost per list entry traversed (priority,
//     then overflow), delaying it and every packet behind it. Put payloads
//     are posted DMA writes (Up), visible in order; atomics DMA-read the
//     target, then post the result, applying the read-modify-write
//     functionally when the write lands. Once the completion packet's last
//     payload write is issued (not once it is visible): target events,
//     each a posted EventSize write issued right behind the payload's on
//     the same ordered path and so visible no earlier than the payload
//     (PCI Express Base Specification, transaction ordering: a posted
//     write does not pass an earlier one; Portals 4: an event means the
//     data is in the buffer), and CT counts (on the NIC, no write of their
//     own, changed when the writes before them are visible). Once the data
//     is visible: the ack or fetch reply (a zero-payload or data packet). Gets read the ME's data and reply;
//     GET is raised when the last reply packet has left. Responses to
//     dropped messages wait for earlier writes, so acks leave in order.
//     Out-of-order fabrics are tolerated: payload packets that overtake
//     their header are held until it is matched (Stats.Overtaken), and a
//     message completes when all its packets are in, not on the last index.
//     (Simulator only: a message's packets are one array, recycled once
//     every packet was retired where it is last used, recycle.go. A
//     Portals packet's payload stays in the sender's memory as a
//     mem.Snapshot when it is read and is copied once, straight into the
//     destination, when it lands; anything reaching the source range
//     first, another reader of the payload, or a crossing to another
//     partition copies it into the packet's buffer then. The bytes that
//     land are those of the read, as with an eager copy.)
//   - Initiator: acks raise ACK (or only a count for CT_ACK_REQ); reply
//     data is written into the MD (ResultMD for fetches) and REPLY, its
//     count and the completion flag are written behind the last write of
//     it, ordered as the target's events are. Completion flags are 8 B posted writes.
//     Every event (SEND and ACK too) is a posted write behind the NIC's
//     earlier ones, so none passes data the NIC wrote before it.
//   - Triggered ops: one evaluation unit, TrigEvalCost per armed
//     entry examined; a fired op issues CmdLatency after evaluation.
//   - GPU-TN: trigger stores are 8 B posted writes (Down); a FIFO slot
//     is taken at issue and freed at pop (the writer blocks when all
//     TrigFIFODepth slots are taken). The NIC pops one entry per TrigPop
//     (lookup included for assoc and hash); memlist adds a 64 B DMA read on
//     a miss in its on-NIC cache of TrigMaxEntries entries and has no entry
//     limit. With assoc or hash, at most TrigMaxEntries entries live; a
//     trigger for a new tag then stalls the FIFO, and a registration for a
//     new tag waits on the NIC (served first when an entry retires). A fired
//     entry retires at once; its op issues CmdLatency later. A stalled FIFO
//     head blocks the triggers behind it, so registered ops holding every
//     entry and an early trigger for an unregistered tag deadlock, as on the
//     hardware; a command block's registration word (NotifyRegistered) lets
//     a kernel trigger only what is registered.
//
// # Semantics
//
// Matching follows Portals 4: priority list then overflow list in append
// order, match bits under ignore bits, MatchID source filter, operation
// permission (fetching atomics need both MEOpPut and MEOpGet), NO_TRUNCATE.
// An overflow match raises PUT (etc.) on the overflow ME and records the
// header on the PT's unexpected list; a later priority append that matches
// it raises PUT_OVERFLOW (etc.) with Start in the overflow buffer. CTs count
// only with MEEventCTComm / MEEventCTOverflow / MDEventCT* set, as in
// Portals. A message that matches nothing is dropped (no target event; ACK
// or REPLY with FailDropped; a failure count on the MD's CT when counting).
// A PT with flow control is disabled instead when nothing matches or its EQ
// is full (PT_DISABLED event, FailPTDisabled) until PTEnable. An EQ that is
// full when an event lands loses it (EQ.Dropped, Stats.EQDrops). Modelled
// failures are data, never Go errors; malformed commands and broken
// invariants are simulator bugs and panic naming the NIC.
//
// # Verbs front end (the GPUrdma paper, verbs*.go)
//
// InfiniBand reliable-connected queue pairs on the same packet engine,
// PCIe link and fabric. Software (a host thread or GPU threads) writes
// 64 B WQEs into a send ring in host or GPU memory (AllocData), keeps a
// doorbell record, and rings the QP's MMIO doorbell (QP.Doorbell, or
// DoorbellFrom for a write forwarded from the GPU) with the new producer
// index. After CmdLatency the QP joins the run queue of VerbsEngines HCA
// engines: one QP's WQEs are processed serially (packet ordering), other
// QPs in parallel. An engine fetches the posted WQEs by one DMA read of at
// most MaxReadReq bytes (so what sits in memory at that moment is what is
// sent: an unflushed GPU store is misread), spends VerbsWQECost, checks
// the lkey, reads the payload by DMA (inline data comes from the WQE) and
// hands the packets to the fabric. Operations: RDMA write, write with
// immediate, send, send with immediate (these consume a receive WQE the
// target fetches by DMA after reading the receive producer index from the
// doorbell record) and RDMA read. Completions are 64 B CQEs with an owner
// bit (OwnerFor), posted DMA writes ordered after the data, issued in WQE
// order per QP once the ack is in (a read's or atomic's once the last
// response packet's write is issued, right behind it: the ordering, not a
// wait for the landing, keeps it behind the data); one CQ
// may serve several QPs. Bad keys, out-of-range addresses, missing receive
// WQEs and malformed WQEs complete with error CQEs (WCStatus); the QP then
// enters the error state and every later WQE is flushed, at both ends.
// Scatter/gather lists (verbs_sge.go): a WQE with WQESGL gathers its
// payload from (a read scatters its response over) up to VerbsMaxSGE
// entries, a receive WQE with NumSGE scatters a send over its list; the
// NIC reads a list by DMA and checks count, keys and total. A CQ with a
// consumer record (CQ.SetConsumerRecord) overruns when a CQE would
// overwrite an unconsumed one: the CQ enters the error state, a CQ error
// event is raised (AsyncEvents) and its QPs move to the error state.
// A send or write with immediate that finds no receive WQE gets an RNR
// NAK (verbs_rnr.go): the responder holds the QP's later messages behind
// one waiting for its receive WQE and drops them after the NAK; the
// requester waits VerbsRNRTimer, goes back to the NAKed WQE and re-sends
// from there, up to VerbsRNRRetry times (7: forever), then fails the WQE
// with WCRNRRetryExc and flushes the rest.
// SetReorder switches on the peer-to-peer write-reordering hazard of
// the GPUrdma paper for verbs writes into GPU memory.
//
// # XTQ (the dissertation's XTQ chapter, xtq.go)
//
// XtqPut gathers a command buffer (64 B AQL packet + kernel arguments) and
// a payload by two DMA streams into one put flagged xtq. At the target the
// header is matched against the posted receive buffer (MANAGE_LOCAL); a
// missing buffer or a message larger than its free space fails at once.
// When the last byte's write is issued, the NIC rewrites its copy of the
// packet (taken from the arriving packets, not read back from memory)
// through the kernel and queue lookup tables (2 × xtq_lookup + xtq_rewrite)
// and writes arguments 0 and 1 (KLUT buffer, payload address) into memory;
// per queue, in arrival order, it DMA-reads the queue's write and read
// indices, holds the task and re-polls every xtq_retry while the queue is
// full (or fails it, xtq_full_policy = drop), reserves the slot by a
// non-posted atomic on the write index, writes the packet body, then the
// header, then the new write index to the queue's doorbell: posted writes
// stay ordered, so the doorbell is visible only after the payload, the
// arguments and the packet. The ack leaves then. Failures (no
// buffer, too large, unknown kernel or queue index, full queue under drop)
// are TASK events with NIFail XTQ_* at the target and a failed ack.
//
// A message whose packet header type is AGENT_DISPATCH is a CPU task
// (xtq_cpu.go): function index and queue index from the agent packet, the
// Function Lookup Table (XtqRegisterFunction) gives the function pointer,
// argument 0 (buffer) and the signal, argument 1 becomes the payload
// address; the queue must be a CPU agent queue (XtqQueue.Agent), else
// XTQ_WRONG_AGENT, and the enqueue is the GPU task's.
//
// The NIC keeps each task's command copy in a hold buffer of
// xtq_hold_depth slots (8, the dissertation's XTQ chapter) from header parse to enqueue
// (xtq_hold.go). When every slot is taken, a new task header is not
// parsed: it waits at the ingress with the rest of its message, behind it
// every later task header and every later message of its source, until
// an enqueue frees a slot; nothing is dropped or overwritten. Packets of
// accepted messages, other sources' plain messages and responses pass.
//
// The lookup tables are on-NIC SRAM (xtq_tables = nic, xtq_lookup per
// lookup) or live in host memory behind an on-NIC set-associative LRU
// cache (xtq_tables = host, xtq_cache_entries, xtq_cache_ways;
// xtq_tables.go): the registration calls write the entry to host memory
// and invalidate its cached copy, a hit costs xtq_lookup, a miss a PCIe
// DMA read of the entry (misses of one task are issued together; a lookup
// of an entry already being read waits for that read).
//
// # sPIN hooks (the SC'19 paper)
//
// An ME whose Ctx is set hands its put packets to that execution context
// (ExecContext, ctx.go; implemented by hw/spin) instead of the plain DMA
// path; the context may refuse a packet (full packet buffer), which stalls
// the inbound engine until Resume, and ends the message with
// CtxMsg.Complete. SPutStart / SPut.Stream (sput.go) send a streaming put:
// one message over consecutive regions, packetized over the concatenated
// stream, whose completion packet carries the final length; the target
// clips its packets to the room in the ME until then (MANAGE_LOCAL MEs
// advance by that room).
//
// # Not modelled
//
// Non-matching NIs and LEs, NI limits, PtlMESearch, MD/ME handles freed
// while in use, AUTO_FREE, bounded NIC buffers and DMA engine occupancy
// (the DMA FIFO is reported, not bounded), packet loss and retransmission,
// the CT host mirror (a host CT poll's MMIO cost is the caller's), sPIN
// (the SC'19 paper), the GPU-TN dynamic extension; verbs: transport
// retries (the fabric loses nothing), unreliable and dynamically connected transports,
// CQ overrun on CQs without a consumer record; for XTQ, link credits behind
// the hold buffer (the
// packets waiting at the ingress are unbounded; the sender is not
// stopped). Host software costs of Portals calls (MEAppend, EQGet) are
// charged by the caller.
package nic
