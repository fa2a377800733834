// Package spin implements the receive-side MPI datatype strategies of
// the SC'19 paper on the sPIN NIC of hw/spin, with the
// datatype engine of package datatype doing the real region computation:
//
//   - HostUnpack: the packed message lands contiguously by plain RDMA, then
//     the host unpacks it with datatype.Unpack; its time is that unpack
//     executed on the node's simulated host core (cpu.Walk: the engine's
//     regions, ddt.host_region_instr instructions each plus their loads
//     and stores, through the core's L1/L2/L3 and DRAM at the real
//     addresses, cold caches: the NIC just wrote the message to DRAM),
//     or under ddt.host_model = affine the closed form regions·t_region +
//     m/BW_copy_cold (comparison only).
//   - Iovec: the Portals-4 iovec engine walks a host-built list.
//   - Specialized: vector arithmetic or a binary search over the
//     prefix sums of an index list; only for types that normalize to one
//     level of blocks (ErrNotApplicable otherwise).
//   - HPULocal: a segment per vHPU (blocked-RR, Δp = 1, P vHPUs),
//     catching up over the packets other vHPUs took, resetting when a
//     packet lies behind.
//   - ROCP: the nearest host checkpoint is copied (C bytes of NIC
//     memory traffic and C/8 cycles; none at one checkpoint per packet),
//     caught up and discarded.
//   - RWCP: blocked-RR with Δp = Δr/k and one vHPU per checkpoint;
//     each vHPU progresses its checkpoint in place and restores it from a
//     master copy when a packet of its sequence arrives behind it.
//
// Every handler charges the handler cycle costs (Costs) for the work the
// datatype engine really did: blocks found, blocks skipped in catch-up
// (Segment.Stats), stack depth; DMA issue and invocation are the NIC's
// (hw/spin); the general handlers read their dataloops and the
// specialized ones their descriptor from NIC memory (L2 on pulp) at their
// start; on PULP each block found or skipped also reads the leaf
// dataloop from L2 (ddt.block_dataloop_read), a bank beat each. Δr
// comes from ChooseInterval (the paper's choice of Δr), with T_PH(γ) estimated from the same
// constants (RO-CP's including its checkpoint copy, part of the paper's
// T_PH^init, and its mean catch-up at each candidate interval, part of
// the paper's T_PH^setup) and exactly the paper's three constraints; the buffer-aware
// refinement (ddt.buffer_aware_interval, ours, off by default) also keeps
// the first packets of all P sequences within the packet buffer, which
// the paper's procedure does not, and the simulated back-pressure shows
// why. The host builds RO-CP's and RW-CP's checkpoints on its simulated
// core (Plan.HostCreate); no other method creates anything.
//
// Memory traffic (RecvResult.Traffic, with Endpoint.Host) is what the
// memory system counted: the node's DRAM server (the NIC's writes, in
// 64 B bursts per line each write touches, no direct cache placement;
// the host's reads and write-backs), the host unpack's fills per cache
// level, the PCIe link's bytes and the NIC memory's.
//
// Endpoint is the MPI integration: a receive plans the method's
// NIC structures, allocates NIC memory (ErrNICMemory when they do not
// fit), copies them over PCIe as host time, posts the ME with its
// execution context, and sends a ready-to-receive message so the data
// never arrives unexpected; the completion handler's zero-byte DMA event,
// FIFO-ordered after every write, ends the receive. Plans are built per
// (datatype, count) and hold offsets relative to the buffer origin.
//
// Kernel and Bandwidth are the static runs of the SC'19 paper:
// packets preloaded in NIC memory and assigned to HPUs up front, the RW-CP
// handlers above (one checkpoint per run of packets, brought into the
// running core's local memory) or a plain block copy; on preset pulp they
// exercise the accelerator's L2, cluster DMAs and output port.
//
// NIC memory: a plan's structures are copied to the NIC on
// its first receive and stay resident for later receives of the same plan
// (no copy then). When they do not fit what is free, ddt.nic_mem_policy
// decides: evict idle resident structures (lowest Plan.Priority first,
// least recently used among equals) or fall back to host unpack; a receive
// that finds no room even after eviction falls back too. Structures larger
// than the whole NIC memory fail at NewPlan with ErrNICMemory naming the
// datatype.
//
// Unexpected messages: with EnableUnexpected the data PT has
// overflow-list buffers; SendEager sends without the RTR and RecvPosted
// posts without it. A message already there when the receive is posted
// cannot be offloaded (its datatype was unknown when it came): Portals'
// append reports it as PUT_OVERFLOW and the host unpacks it from the
// overflow buffer on the host core (cold caches). The ddt experiments use the
// RTR protocol, so their data never arrives unexpected.
//
// User hints (type_set_attr): Plan.Priority (victim selection),
// Plan.NoOffload (the host unpacks), and ε per type through the Costs given
// to NewPlan.
//
// Not modelled: sender-side (outbound) datatype processing in the
// experiments.
package spin
