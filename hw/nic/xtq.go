package nic

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// XTQ (the dissertation's XTQ chapter): a put whose body is [64 B command packet | kernel
// arguments | payload], gathered by the initiator NIC from two buffers, and
// turned by the target NIC into an AQL kernel dispatch in a GPU user-mode
// queue without the target CPU.

// TaskHeader marks a gather put (Header.Task). With Xtq set it is an XTQ
// message (header flag xtq=1); without, a plain put whose body was
// gathered from two buffers (Portals iovec), which HSA uses.
type TaskHeader struct {
	Xtq    bool
	CmdLen uint64 // command packet + arguments, ≥ 64 bytes
}

// XtqKernel is a Kernel Lookup Table entry (the dissertation's XTQ chapter).
type XtqKernel struct {
	Object uint64   // kernel object handle written into the packet
	Buffer mem.Addr // target-resident buffer, written into kernel argument 0
	Signal mem.Addr // completion signal written into the packet; 0 = keep the initiator's
}

// XtqQueue is a Queue Lookup Table entry: a user-mode queue descriptor.
type XtqQueue struct {
	Base       mem.Addr // slot 0
	Size       uint64   // slots, a power of two
	WriteIndex mem.Addr
	ReadIndex  mem.Addr
	Doorbell   mem.Addr
	Agent      XtqAgent // the queue's owner: the packets it takes
}

// XtqAgent is the agent a user-mode queue feeds.
type XtqAgent uint8

// Agents.
const (
	AgentGPU XtqAgent = iota // kernel-dispatch packets (hw/gpu AQL queue)
	AgentCPU                 // agent-dispatch packets (hw/cpu agent queue)
)

// String returns the printed name of a XtqAgent.
func (a XtqAgent) String() string {
	if a == AgentCPU {
		return "CPU"
	}
	return "GPU"
}

// GatherPut is an XtqPut (or, with Xtq false, a plain two-buffer put).
type GatherPut struct {
	Xtq        bool
	Target     int
	PT         int // the target's task portal
	MatchBits  uint64
	Cmd        mem.Addr // command packet followed by the kernel arguments
	CmdLen     uint64   // ≥ 64 for XTQ
	Payload    mem.Addr
	PayloadLen uint64
	// HdrData, when non-zero, is the header data the target's events
	// carry instead of CmdLen (a plain gather put whose receiver learns
	// the task from the header: HSA's active-message header).
	HdrData uint64
	Ack     AckType
	EQ      *EQ // initiator events (SEND, ACK); may be nil
	CT      *CT // counts ACKs when non-nil
	UserPtr any
}

// XtqStats counts the target-side XTQ procedure.
type XtqStats struct {
	Tasks      uint64 // packets written into a GPU queue
	Failures   uint64 // tasks failed (failure event posted)
	FullPolls  uint64 // queue-index reads that found the queue full
	MaxHeld    int    // most hold-buffer slots taken at once (≤ nic.xtq_hold_depth)
	MaxBacklog int    // most packets waiting at the ingress for a hold slot
	// IngressWaits counts the task headers (and headers queued behind
	// them) that waited at the ingress; IngressWaitTime is their total
	// wait.
	IngressWaits    uint64
	IngressWaitTime sim.Time
	// Table lookups: CacheHits and CacheMisses count the on-NIC cache of
	// host-memory tables (xtq_tables = host; a miss is a PCIe read);
	// LookupTime is the total time tasks spent looking their entries up.
	CacheHits   uint64
	CacheMisses uint64
	CacheMerged uint64 // lookups that waited for an entry read already in flight
	LookupTime  sim.Time
	Doorbells   uint64
	Rewrites    uint64
	HeldTime    sim.Time // total time tasks waited for queue room
	LastTaskAt  sim.Time // when the last doorbell write was issued
	LastBell    sim.Time // when the last doorbell write became visible
	LastLanded  sim.Time // when the last gather put (XTQ or not)'s bytes were all visible
	LastIssue   sim.Time // initiator: when the last gather put started on the NIC
}

type xtqState struct {
	kernels   map[uint64]XtqKernel
	functions map[uint64]XtqFunction
	queues    map[uint16]*xtqQueue
	stats     XtqStats
	// Host-memory tables (xtq_tables = host): each table's base address
	// and the on-NIC cache of their entries.
	tableBase [tables]mem.Addr
	cache     xtqCache
}

type xtqQueue struct {
	desc XtqQueue
	held []*xtqJob // waiting in arrival order; the head is being enqueued
	busy bool
}

type xtqJob struct {
	m      *inMsg
	packet [gpu.AQLPacketSize]byte
	since  sim.Time
}

// XtqStats returns the XTQ counters.
func (n *NIC) XtqStats() XtqStats { return n.xtq.stats }

// XtqRegisterKernel fills KLUT[idx] (XtqRegisterKernel of the dissertation's XTQ chapter).
// The host's cost of the call is the caller's.
func (n *NIC) XtqRegisterKernel(idx uint64, k XtqKernel) error {
	if idx >= uint64(n.spec.XtqTableSize) {
		return fmt.Errorf("%s: XtqRegisterKernel: index %d: must be in [0, nic.xtq_table_size = %d)", n.name, idx, n.spec.XtqTableSize)
	}
	if n.xtq.kernels == nil {
		n.xtq.kernels = map[uint64]XtqKernel{}
	}
	n.xtq.kernels[idx] = k
	n.writeEntry(tableKernel, idx, k.words()...)
	return nil
}

// XtqRegisterQueue fills QLUT[idx].
func (n *NIC) XtqRegisterQueue(idx uint16, q XtqQueue) error {
	if int(idx) >= n.spec.XtqTableSize {
		return fmt.Errorf("%s: XtqRegisterQueue: index %d: must be in [0, nic.xtq_table_size = %d)", n.name, idx, n.spec.XtqTableSize)
	}
	if q.Size == 0 || q.Size&(q.Size-1) != 0 {
		return fmt.Errorf("%s: XtqRegisterQueue: queue size %d: must be a power of two", n.name, q.Size)
	}
	if n.xtq.queues == nil {
		n.xtq.queues = map[uint16]*xtqQueue{}
	}
	if old := n.xtq.queues[idx]; old != nil && (len(old.held) > 0 || old.busy) {
		return fmt.Errorf("%s: XtqRegisterQueue: index %d: tasks for the queue it names are still on the NIC", n.name, idx)
	}
	n.xtq.queues[idx] = &xtqQueue{desc: q}
	n.writeEntry(tableQueue, uint64(idx), q.words()...)
	return nil
}

// XtqPut posts a gather put from host thread p: the doorbell and command
// fetch of a host command, then the NIC reads the command buffer and the
// payload by two DMA streams into one outgoing message. SEND is raised
// when both reads are done; ACK (if requested) when the target has
// delivered and enqueued the task, or failed it.
func (n *NIC) XtqPut(p *sim.Proc, g GatherPut) {
	if g.Xtq && g.CmdLen < gpu.AQLPacketSize {
		panic(fmt.Sprintf("%s: XtqPut: command length %d: must hold the 64 B packet", n.name, g.CmdLen))
	}
	if g.Target < 0 {
		panic(fmt.Sprintf("%s: XtqPut: target %d", n.name, g.Target))
	}
	n.hostPost(p, "xtq put", true, func() { n.issueGather(g) })
}

func (n *NIC) issueGather(g GatherPut) {
	n.xtq.stats.LastIssue = n.e.Now()
	n.lastIssue = n.e.Now()
	n.stats.Commands++
	n.nextMsg++
	id := n.nextMsg
	total := g.CmdLen + g.PayloadLen
	hdrData := g.CmdLen
	if g.HdrData != 0 {
		hdrData = g.HdrData
	}
	md := &MD{Start: g.Cmd, Length: total, EQ: g.EQ, CT: g.CT}
	if g.CT != nil {
		md.Options |= MDEventCTAck
	}
	cmd := Command{Op: CmdPut, MD: md, Length: total, Target: g.Target, PT: g.PT, MatchBits: g.MatchBits,
		Ack: g.Ack, UserPtr: g.UserPtr, HdrData: hdrData}
	// hdr_data carries the command length (or the caller's header), so a
	// plain gather put's receiver (HSA) finds the payload after the
	// command.
	hdr := &Header{Op: CmdPut, Initiator: n.id, PT: g.PT, MatchBits: g.MatchBits, Length: total, Ack: g.Ack,
		HdrData: hdrData, Task: &TaskHeader{Xtq: g.Xtq, CmdLen: g.CmdLen}}
	if g.Ack != NoAckReq {
		n.out[id] = &outMsg{cmd: cmd, start: n.e.Now()}
	}
	n.sendPackets(g.Target, KindRequest, id, hdr, total, FailOK, 0, n.fromTwo(g.Cmd, g.CmdLen, g.Payload), func() {
		n.initiatorSend(cmd)
	})
}

// fromTwo returns the source of a message whose bytes [0, la) come from a
// and the rest from b: each packet issues a DMA read per part.
func (n *NIC) fromTwo(a mem.Addr, la uint64, b mem.Addr) payloadSrc {
	return payloadSrc{kind: srcTwo, base: a, la: la, base2: b}
}

// xtqReject checks an XTQ header packet against the posted receive buffer
// (me, nil when nothing matched) and reports true when the message is
// refused: no posted buffer, or the message does not fit in what is left
// of it. The failure is a TASK event at the target and a failed ack.
// An accepted message's command and argument bytes are kept as control
// words, so a payload-free run still carries them. Plain gather puts are
// never refused here.
func (n *NIC) xtqReject(m *inMsg, p *pt, me *MEntry) bool {
	h := m.hdr
	if h.Task == nil {
		return false
	}
	var free uint64
	var at mem.Addr
	if me != nil {
		off := h.RemoteOffset
		if me.me.Options&MEManageLocal != 0 {
			off = me.offset
		}
		if off <= me.me.Length {
			free = me.me.Length - off
		}
		at = me.me.Start + mem.Addr(off)
	}
	fail := FailOK
	switch {
	case me == nil:
		fail = FailTaskNoBuffer
	case h.Length > free:
		fail = FailTaskTooLarge
	}
	if !h.Task.Xtq {
		// A plain gather put follows the Portals rules; its command is
		// still a control word for the receiving host.
		if me != nil {
			n.mem.MarkControl(at, int(min(h.Task.CmdLen, free)))
		}
		return false
	}
	if fail == FailOK {
		n.mem.MarkControl(at, int(h.Task.CmdLen))
		return false
	}
	m.fail = fail
	n.stats.Drops++
	n.xtq.stats.Failures++
	ev := n.targetEvent(EventTask, nil, m.src, h, free, 0, fail)
	n.postEvent(p.eq, ev) // behind the NIC's earlier writes
	return true
}

// xtqTarget runs the target-side procedure of the dissertation's XTQ
// chapter once the last write of message m's payload is issued: rewrite
// the NIC's copy of the command packet through the lookup tables, rewrite
// kernel arguments 0 and 1 in memory, then hand the packet to the queue's
// enqueue engine. Every write it makes is posted behind the payload's, so
// none is visible before the payload is, and the doorbell waits for all of
// them (xtqWrite).
func (n *NIC) xtqTarget(m *inMsg) {
	le := binary.LittleEndian
	var pkt [gpu.AQLPacketSize]byte
	if m.cmd != nil {
		pkt = *m.cmd // kept as the body streamed through (keepCommand)
		m.cmd = nil
	} else {
		n.mem.Read(m.dest, pkt[:]) // a sPIN context's message, visible by now
	}
	if uint16(pkt[gpu.AQLHeaderOff]) == cpu.PacketTypeAgentDispatch {
		n.xtqCPUTask(m, pkt)
		return
	}
	kidx := le.Uint64(pkt[gpu.AQLKernelObjectOff:])
	qidx := le.Uint16(pkt[gpu.AQLQueueIndexOff:])
	start := n.e.Now()
	n.xtqLookup([]tableLookup{{tableKernel, kidx}, {tableQueue, uint64(qidx)}}, func(entries [][]uint64) {
		n.xtq.stats.LookupTime += n.e.Now() - start
		switch {
		case entries[0] == nil:
			n.xtqFail(m, FailTaskNoKernel, kidx)
			return
		case entries[1] == nil:
			n.xtqFail(m, FailTaskNoQueue, uint64(qidx))
			return
		case queueFromWords(entries[1]).Agent != AgentGPU:
			n.xtqFail(m, FailTaskWrongAgent, uint64(qidx))
			return
		}
		n.e.After(n.spec.XtqRewrite, func() {
			n.xtqRewrite(m, pkt, kernelFromWords(entries[0]), n.xtqQueueState(qidx, queueFromWords(entries[1])), start)
		})
	})
}

// xtqQueueState returns the NIC's enqueue state of queue index qidx,
// whose descriptor the lookup returned.
func (n *NIC) xtqQueueState(qidx uint16, desc XtqQueue) *xtqQueue {
	q := n.xtq.queues[qidx]
	q.desc = desc
	return q
}

// xtqRewrite rewrites the NIC's copy of the packet with the kernel's entry
// and hands it to q's enqueue engine.
func (n *NIC) xtqRewrite(m *inMsg, pkt [gpu.AQLPacketSize]byte, k XtqKernel, q *xtqQueue, start sim.Time) {
	le := binary.LittleEndian
	n.xtq.stats.Rewrites++
	args := m.dest + gpu.AQLPacketSize
	le.PutUint64(pkt[gpu.AQLKernelObjectOff:], k.Object)
	le.PutUint64(pkt[gpu.AQLKernargOff:], uint64(args))
	if k.Signal != 0 {
		le.PutUint64(pkt[gpu.AQLSignalOff:], uint64(k.Signal))
	}
	le.PutUint16(pkt[gpu.AQLQueueIndexOff:], 0)
	if argsLen := m.hdr.Task.CmdLen - gpu.AQLPacketSize; argsLen >= 16 {
		payload := m.dest + mem.Addr(m.hdr.Task.CmdLen)
		n.dmaWrite(16, func() {
			n.mem.Store64(args, uint64(k.Buffer))
			n.mem.Store64(args+8, uint64(payload))
		})
	}
	n.span("xtq rewrite", start, n.e.Now())
	q.held = append(q.held, &xtqJob{m: m, packet: pkt, since: n.e.Now()})
	n.xtqNext(q)
}

// xtqFail fails task m: a TASK event naming the reason (HdrData carries
// the offending index) and a failed ack.
func (n *NIC) xtqFail(m *inMsg, fail FailType, idx uint64) {
	m.fail = fail
	n.xtq.stats.Failures++
	ev := n.targetEvent(EventTask, m.me, m.src, m.hdr, m.mlength, m.dest, fail)
	ev.HdrData = idx
	landed := max(n.e.Now(), n.upVis) // the payload may still be landing
	n.postEvent(n.pts[m.me.pt].eq, ev)
	n.e.At(landed, func() { n.respond(m, nil) })
	n.xtqRelease(m)
}

// xtqNext starts enqueueing the head task of q unless one is in progress:
// tasks for one queue enter it in arrival order.
func (n *NIC) xtqNext(q *xtqQueue) {
	if q.busy || len(q.held) == 0 {
		return
	}
	q.busy = true
	n.xtqCheck(q, q.held[0])
}

// xtqCheck checks the queue for room and reserves a slot. Under policy
// retry the read of the read index and the fetch-add on the write index
// are issued back to back (two outstanding non-posted requests, as a
// host producer's atomic add and index load overlap): a task that finds
// the queue full keeps its slot and the NIC re-polls the read index every
// xtq_retry until the slot is free. Under policy drop a reservation cannot
// be taken back, so the NIC first reads both indices (one DMA read of the
// 16 B they share), fails the task if the queue is full, and reserves
// only when there is room.
func (n *NIC) xtqCheck(q *xtqQueue, j *xtqJob) {
	d := q.desc
	if n.spec.XtqFullPolicy == "retry" {
		tr, kr := n.dmaRead(d.ReadIndex, 8)
		w := n.mem.Load64(d.WriteIndex)
		n.mem.Store64(d.WriteIndex, w+1)
		ta := n.link.Atomic(pcieUp, n.e.Now(), 8, 0)
		n.dmaBegin(1)
		n.e.At(max(tr, ta), func() {
			n.dmaEnd(kr + 1)
			n.xtqWhenFree(q, w, func() { n.xtqWrite(q, j, w) })
		})
		return
	}
	t, k := n.dmaRead(d.WriteIndex, 16)
	n.e.At(t, func() {
		n.dmaEnd(k)
		w, r := n.mem.Load64(d.WriteIndex), n.mem.Load64(d.ReadIndex)
		if w-r >= d.Size {
			n.xtq.stats.FullPolls++
			q.held = q.held[1:]
			q.busy = false
			n.xtqFail(j.m, FailTaskQueueFull, 0)
			n.xtqNext(q)
			return
		}
		n.xtqReserve(q, j)
	})
}

// xtqReserve does the multi-producer AQL protocol: an atomic fetch-add on
// the write index (a non-posted round trip; the add takes effect at
// memory when issued), then, once the slot is free, the packet body
// (bytes 2–63) and, ordered after it, the header; once those and the
// task's data are visible, the doorbell write of the new write index.
func (n *NIC) xtqReserve(q *xtqQueue, j *xtqJob) {
	d := q.desc
	w := n.mem.Load64(d.WriteIndex)
	n.mem.Store64(d.WriteIndex, w+1)
	t := n.link.Atomic(pcieUp, n.e.Now(), 8, 0)
	n.dmaBegin(1)
	n.e.At(t, func() {
		n.dmaEnd(1)
		n.xtqWhenFree(q, w, func() { n.xtqWrite(q, j, w) })
	})
}

// xtqWhenFree runs fn once slot w is free (the queue was full when the
// NIC reserved it, or another producer reserved ahead of the NIC's check),
// re-reading the read index every xtq_retry.
func (n *NIC) xtqWhenFree(q *xtqQueue, w uint64, fn func()) {
	d := q.desc
	if w-n.mem.Load64(d.ReadIndex) < d.Size {
		fn()
		return
	}
	n.xtq.stats.FullPolls++
	n.e.After(n.spec.XtqRetry, func() {
		t, k := n.dmaRead(d.ReadIndex, 8)
		n.e.At(t, func() { n.dmaEnd(k); n.xtqWhenFree(q, w, fn) })
	})
}

func (n *NIC) xtqWrite(q *xtqQueue, j *xtqJob, w uint64) {
	d := q.desc
	slot := d.Base + mem.Addr((w%d.Size)*gpu.AQLPacketSize)
	pkt := j.packet
	header := binary.LittleEndian.Uint16(pkt[gpu.AQLHeaderOff:])
	n.dmaWrite(gpu.AQLPacketSize-2, func() { n.mem.Write(slot+2, pkt[2:]) })
	n.dmaWrite(2, func() { n.mem.Write(slot, []byte{byte(header), byte(header >> 8)}) })
	n.xtq.stats.Tasks++
	n.xtq.stats.HeldTime += n.e.Now() - j.since
	n.xtq.stats.LastTaskAt = n.e.Now()
	ring := func() {
		n.xtq.stats.Doorbells++
		n.xtq.stats.LastBell = n.e.Now()
		gpu.RingDoorbell(n.mem, d.Doorbell, w+1)
		n.spanOp("xtq enqueue", "", j.since)
		n.respond(j.m, nil)
	}
	if d.Agent == AgentGPU && n.link.OnChip() {
		// On the coherent directory a GPU queue's doorbell is an on-chip
		// MMIO store to the GPU's register (soc.mmio_latency), as every
		// doorbell on an APU is, the host's to the same queue included:
		// the NIC writes it only once the payload, the argument rewrite
		// and both packet writes are visible, and it reaches the packet
		// processor its latency later.
		n.e.At(n.link.MMIOStore(max(n.e.Now(), n.upVis)), ring)
	} else {
		// A CPU agent's doorbell is a signal in memory that its thread
		// polls, and behind PCIe a GPU's is a posted write: either way a
		// write issued after the payload, the argument rewrite and both
		// packet writes, so (posted writes stay ordered) it is visible
		// only once they all are.
		n.dmaWrite(8, ring)
	}
	q.held = q.held[1:]
	q.busy = false
	n.xtqRelease(j.m) // the command copy is in the queue now
	n.xtqNext(q)
}
