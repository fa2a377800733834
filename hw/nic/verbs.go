package nic

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The verbs front end (the GPUrdma paper): InfiniBand reliable-
// connected queue pairs over the same packet engine, PCIe link and fabric
// as the Portals interface. Work queues and completion queues are rings of
// 64 B entries in node memory (host or GPU pool) that software writes and
// the NIC reads by DMA, so every byte the GPU or the host puts there is
// really fetched, and a stale or unflushed entry is really misread.

// WQESize and CQESize are the sizes of a work-queue and a completion-queue
// entry (the GPUrdma paper: WQE = 64 B; CQE [DEFAULT] 64 B).
const (
	WQESize = 64
	CQESize = 64
	// InlineMax is the payload a WQE can carry inline (its last 16 bytes).
	InlineMax = 16
	// WQEWords is the number of 8-byte fields of a WQE (the unit the
	// GPUrdma calibration charges per store, the GPUrdma paper).
	WQEWords = WQESize / 8
)

// VerbsOp is a work request's operation.
type VerbsOp uint8

// Work-request operations.
const (
	VNop      VerbsOp = iota // completes without traffic (invalid in a posted WQE)
	VWrite                   // RDMA write
	VWriteImm                // RDMA write with immediate: consumes a receive WQE at the target
	VSend                    // send: lands in the buffer of the target's next receive WQE
	VSendImm                 // send with immediate
	VRead                    // RDMA read
	// VAtomic is an RDMA atomic of Length (4 or 8) bytes at RemoteAddr:
	// Imm selects AtomicAdd, AtomicSwap or AtomicCSwap, the operand is
	// Inline[0:8] and the compare value Inline[8:16]; the old value
	// returns into LocalAddr.
	VAtomic
	vOpCount
)

// Atomic operations of a VAtomic WQE (in WQE.Imm).
const (
	AtomicAdd uint32 = iota
	AtomicSwap
	AtomicCSwap
)

var vopNames = [...]string{"nop", "rdma-write", "rdma-write-imm", "send", "send-imm", "rdma-read", "rdma-atomic"}

// String returns the printed name of a VerbsOp.
func (o VerbsOp) String() string {
	if int(o) < len(vopNames) {
		return vopNames[o]
	}
	return fmt.Sprintf("verbs-op(%d)", uint8(o))
}

// needsRecv reports whether the operation consumes a receive WQE.
func (o VerbsOp) needsRecv() bool { return o == VWriteImm || o == VSend || o == VSendImm }

// WQE flags.
const (
	WQESignaled uint8 = 1 << iota // write a CQE on completion
	WQEInline                     // the payload is in WQE.Inline, not at LocalAddr
	WQESGL                        // the local buffer is a scatter/gather list at LocalAddr (verbs_sge.go)
)

// WQE is a send-queue entry. Its 64-byte layout, one field per 8-byte
// word (Word): 0 opcode, flags, immediate; 1 length, lkey; 2 local
// address; 3 remote address; 4 rkey, QP number (control segment); 5 wr_id;
// 6–7 inline data.
type WQE struct {
	Op         VerbsOp
	Flags      uint8
	Imm        uint32
	Length     uint32
	LKey       uint32
	LocalAddr  mem.Addr
	RemoteAddr mem.Addr
	RKey       uint32
	QPN        uint32
	WRID       uint64
	Inline     [InlineMax]byte
}

// Word returns the WQE's 8-byte field i (little-endian in memory).
func (w WQE) Word(i int) uint64 {
	switch i {
	case 0:
		return uint64(w.Op) | uint64(w.Flags)<<8 | uint64(w.Imm)<<32
	case 1:
		return uint64(w.Length) | uint64(w.LKey)<<32
	case 2:
		return uint64(w.LocalAddr)
	case 3:
		return uint64(w.RemoteAddr)
	case 4:
		return uint64(w.RKey) | uint64(w.QPN)<<32
	case 5:
		return w.WRID
	case 6:
		return binary.LittleEndian.Uint64(w.Inline[:8])
	case 7:
		return binary.LittleEndian.Uint64(w.Inline[8:])
	}
	panic(fmt.Sprintf("nic: WQE word %d out of [0, %d)", i, WQEWords))
}

// Encode writes the WQE's 64 bytes into b.
func (w WQE) Encode(b []byte) {
	for i := range WQEWords {
		binary.LittleEndian.PutUint64(b[8*i:], w.Word(i))
	}
}

// DecodeWQE parses 64 bytes as a WQE.
func DecodeWQE(b []byte) WQE {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	w := WQE{Op: VerbsOp(u(0)), Flags: uint8(u(0) >> 8), Imm: uint32(u(0) >> 32),
		Length: uint32(u(1)), LKey: uint32(u(1) >> 32), LocalAddr: mem.Addr(u(2)), RemoteAddr: mem.Addr(u(3)),
		RKey: uint32(u(4)), QPN: uint32(u(4) >> 32), WRID: u(5)}
	copy(w.Inline[:], b[48:64])
	return w
}

// RecvWQE is a receive-queue entry: 0 wr_id, 1 address, 2 length and lkey
// (the rest of the 64 bytes is unused).
type RecvWQE struct {
	WRID   uint64
	Addr   mem.Addr
	Length uint32
	LKey   uint32
	// SGL, when NumSGE > 0, is a scatter list of NumSGE entries (words 3
	// and 4) that replaces (Addr, Length, LKey).
	SGL    mem.Addr
	NumSGE uint32
}

// Encode writes the receive WQE into b (at least 40 bytes).
func (r RecvWQE) Encode(b []byte) {
	binary.LittleEndian.PutUint64(b, r.WRID)
	binary.LittleEndian.PutUint64(b[8:], uint64(r.Addr))
	binary.LittleEndian.PutUint64(b[16:], uint64(r.Length)|uint64(r.LKey)<<32)
	binary.LittleEndian.PutUint64(b[24:], uint64(r.SGL))
	binary.LittleEndian.PutUint64(b[32:], uint64(r.NumSGE))
}

// DecodeRecvWQE parses a receive WQE.
func DecodeRecvWQE(b []byte) RecvWQE {
	v := binary.LittleEndian.Uint64(b[16:])
	return RecvWQE{WRID: binary.LittleEndian.Uint64(b), Addr: mem.Addr(binary.LittleEndian.Uint64(b[8:])),
		Length: uint32(v), LKey: uint32(v >> 32), SGL: mem.Addr(binary.LittleEndian.Uint64(b[24:])),
		NumSGE: uint32(binary.LittleEndian.Uint64(b[32:]))}
}

// WCStatus is a completion's status (ibv_wc_status).
type WCStatus uint8

// Completion statuses.
const (
	WCSuccess      WCStatus = iota
	WCLocLenErr             // inline payload too long, or a receive buffer too small
	WCLocQPOpErr            // bad opcode, or a WQE whose control segment names another QP
	WCLocProtErr            // the lkey does not cover the local buffer with the needed access
	WCRemInvReqErr          // the target QP does not exist or could not take the message
	WCRemAccessErr          // the rkey does not cover the remote range with the needed access
	WCRNRRetryExc           // no receive WQE was posted at the target through every RNR retry
	WCWRFlushErr            // flushed: the QP was already in the error state
)

var wcNames = [...]string{"success", "local-length-error", "local-qp-operation-error", "local-protection-error",
	"remote-invalid-request", "remote-access-error", "rnr-retry-exceeded", "wr-flush-error"}

// String returns the printed name of a WCStatus.
func (s WCStatus) String() string {
	if int(s) < len(wcNames) {
		return wcNames[s]
	}
	return fmt.Sprintf("wc-status(%d)", uint8(s))
}

// CQE is a completion-queue entry. Layout: 0–3 QP number, 4–7 WQE index
// (low 32 bits), 8–15 wr_id, 16–19 byte count, 20–23 immediate, 24
// opcode, 25 status, 26 flags (bit 0: immediate present, bit 1: receive
// completion), 63 owner bit.
type CQE struct {
	QPN     uint32
	Index   uint32
	WRID    uint64
	ByteLen uint32
	Imm     uint32
	Op      VerbsOp
	Status  WCStatus
	HasImm  bool
	Recv    bool // a receive completion (send or write-with-immediate arrived)
	Owner   uint8
}

// Encode writes the CQE's 64 bytes into b.
func (c CQE) Encode(b []byte) {
	clear(b[:CQESize])
	binary.LittleEndian.PutUint32(b, c.QPN)
	binary.LittleEndian.PutUint32(b[4:], c.Index)
	binary.LittleEndian.PutUint64(b[8:], c.WRID)
	binary.LittleEndian.PutUint32(b[16:], c.ByteLen)
	binary.LittleEndian.PutUint32(b[20:], c.Imm)
	b[24], b[25] = byte(c.Op), byte(c.Status)
	if c.HasImm {
		b[26] |= 1
	}
	if c.Recv {
		b[26] |= 2
	}
	b[63] = c.Owner
}

// DecodeCQE parses 64 bytes as a CQE.
func DecodeCQE(b []byte) CQE {
	return CQE{QPN: binary.LittleEndian.Uint32(b), Index: binary.LittleEndian.Uint32(b[4:]),
		WRID: binary.LittleEndian.Uint64(b[8:]), ByteLen: binary.LittleEndian.Uint32(b[16:]),
		Imm: binary.LittleEndian.Uint32(b[20:]), Op: VerbsOp(b[24]), Status: WCStatus(b[25]),
		HasImm: b[26]&1 != 0, Recv: b[26]&2 != 0, Owner: b[63]}
}

// OwnerFor returns the owner bit a valid CQE carries at completion count k
// of a CQ of entries slots: 1 on the first pass over the ring, 0 on the
// second, and so on, so zeroed memory never looks valid.
func OwnerFor(k uint64, entries int) uint8 { return uint8((k/uint64(entries) + 1) & 1) }

// Access is a memory region's permission set.
type Access uint8

// Access rights of a memory region.
const (
	AccessLocalWrite  Access = 1 << iota // the NIC may write it for local WQEs (read responses, receives)
	AccessRemoteWrite                    // remote RDMA writes may land in it
	AccessRemoteRead                     // remote RDMA reads may read it
)

// MR is a registered memory region; its Key serves as lkey and rkey.
type MR struct {
	Key    uint32
	Addr   mem.Addr
	Length uint64
	Access Access
}

// covers reports whether the region holds [a, a+l) with access need.
func (r *MR) covers(a mem.Addr, l uint64, need Access) bool {
	return r != nil && a >= r.Addr && l <= r.Length && uint64(a-r.Addr) <= r.Length-l && r.Access&need == need
}

// CQ is a completion queue: a ring of CQESize entries at Base that the NIC
// writes by posted DMA writes, in completion order, with the owner bit of
// OwnerFor. Several QPs may share one CQ.
//
// With a consumer record (SetConsumerRecord) the NIC checks every CQE
// against it: a CQE that would overwrite one software has not consumed is
// a CQ overrun, as in verbs: the CQ enters the error state (that CQE and
// every later one are dropped), an asynchronous CQ error event is raised
// (AsyncEvents) and every QP completing into the CQ moves to the error
// state, so its later work requests are flushed.
type CQ struct {
	Num      int
	Base     mem.Addr
	Entries  int
	produced uint64
	ci       mem.Addr // consumer record (0: software sizes the CQ, no check)
	failed   bool
	dropped  uint64
}

// SetConsumerRecord names the 8-byte word where software keeps the count
// of CQEs it consumed (the CQ doorbell record's consumer index). The NIC
// reads it as memory holds it when it writes a CQE (the HCA keeps the
// record where it reads it; the read is not charged separately).
func (c *CQ) SetConsumerRecord(a mem.Addr) { c.ci = a }

// Failed reports whether the CQ overran and is in the error state.
func (c *CQ) Failed() bool { return c.failed }

// Dropped returns the CQEs dropped because the CQ is in the error state.
func (c *CQ) Dropped() uint64 { return c.dropped }

// AsyncKind names an asynchronous error event (ibv_event_type).
type AsyncKind uint8

// Asynchronous events.
const (
	EventCQError AsyncKind = iota // a CQ overran (IBV_EVENT_CQ_ERR)
)

// String returns the printed name of an AsyncKind.
func (k AsyncKind) String() string { return "cq-error" }

// AsyncEvent is an asynchronous error event of the NIC: data in the
// simulated world that software reads, never a panic.
type AsyncEvent struct {
	Kind AsyncKind
	At   sim.Time
	CQ   int      // the CQ of a cq-error
	QPs  []uint32 // the QPs it moved to the error state
}

// Produced returns the number of CQEs the NIC has issued to the CQ.
func (c *CQ) Produced() uint64 { return c.produced }

// SlotAddr returns the address of CQE number k (counting from 0).
func (c *CQ) SlotAddr(k uint64) mem.Addr { return c.Base + mem.Addr(k%uint64(c.Entries)*CQESize) }

// QPConfig places a queue pair's rings and names its CQs.
type QPConfig struct {
	SQ        mem.Addr // send ring: SQEntries × WQESize bytes
	SQEntries int
	RQ        mem.Addr // receive ring: RQEntries × WQESize bytes (0: no receive queue)
	RQEntries int
	// DBRec is the doorbell record: 8 B send producer index, then 8 B
	// receive producer index. The NIC reads the receive half by DMA when a
	// message needs a receive WQE; the send half is software's record
	// (the MMIO doorbell carries the send index to the NIC).
	DBRec  mem.Addr
	SendCQ *CQ
	RecvCQ *CQ // nil: SendCQ
}

// QPState is a queue pair's state.
type QPState uint8

// QP states (the connected ones; setup is Connect).
const (
	QPInit QPState = iota
	QPReady
	QPError
)

// QP is a reliable-connected queue pair.
type QP struct {
	n      *NIC
	Num    uint32
	cfg    QPConfig
	state  QPState
	remote int
	rqpn   uint32

	posted  uint64 // send producer index the NIC has seen by doorbell
	next    uint64 // next WQE to process
	cacheAt uint64 // index of cache[0]
	cache   []WQE  // fetched WQEs not yet processed
	queued  bool   // on the engine run queue
	active  bool   // an engine is processing it

	retired  uint64             // WQEs completed in order
	finished map[uint64]wqeDone // completed out of order, awaiting retirement
	rqNext   uint64             // receive WQEs consumed
	rnr      rnrState           // RNR NAKs and go-back (verbs_rnr.go)
	stats    QPStats

	// The engine's work on the QP in flight, read by the events that end
	// it (qpFetched, qpParsed), and the release after its last packet
	// (startWQE): per QP, not a closure per WQE.
	fetch wqeFetch
	exec  wqeExec
	fin   func()
}

// QPStats count one QP's work.
type QPStats struct {
	WQEs, Fetches, CQEs, Errors, Doorbells uint64
}

type wqeDone struct {
	w      WQE
	status WCStatus
	bytes  uint32
}

// Config returns the QP's configuration.
func (q *QP) Config() QPConfig { return q.cfg }

// State returns the QP's state.
func (q *QP) State() QPState { return q.state }

// Stats returns the QP's counters.
func (q *QP) Stats() QPStats { return q.stats }

// Retired returns the number of send WQEs completed (in order).
func (q *QP) Retired() uint64 { return q.retired }

// Connect binds the QP to QP rqpn on node remote and makes it ready.
func (q *QP) Connect(remote int, rqpn uint32) {
	q.remote, q.rqpn, q.state = remote, rqpn, QPReady
}

// verbs is the NIC's verbs state.
type verbs struct {
	mrs     map[uint32]*MR
	nextKey uint32
	qps     table[QP] // by number − 1
	cqs     table[CQ] // by number
	runq    []*QP
	runqAt  int // runq's head: runq[runqAt:] wait, in order
	busy    int
	in      map[uint64]*rcIn
	// inKey, inM: the entry of in found last (inGet), nil when it left
	// in (inDel): a message's packets arrive one after another, and each
	// looked its message up in the map (3 % of a 64-node GIO allreduce).
	inKey   uint64
	inM     *rcIn
	early   map[uint64][]*Packet
	reorder *Reorder
	ppb     *PPB
	landed  uint64 // highest sequence number of a GPU-memory write that landed
	wseq    uint64 // sequence numbers of verbs writes
	stats   VerbsStats
	async   []AsyncEvent
	dropped map[uint64]int // packets still to come of messages the responder dropped (verbs_rnr.go)
	lands   []*rcLanding   // landings done, for reuse (verbs_rx.go)
	cqeFree []*cqeWrite    // CQE writes landed, for reuse (writeCQE)
	outFree []*rcIn        // records of acked messages, for reuse (recycleOut, recycleIn)
	wqeBuf  []byte         // the WQE batch read's bytes (qpFetched)
	// makeQP, when set, makes a reserved QP that a packet names before
	// anyone made it (SetQPMaker).
	makeQP func(num uint32)
}

// AsyncEvents returns the NIC's asynchronous error events so far.
func (n *NIC) AsyncEvents() []AsyncEvent { return n.vs().async }

// VerbsStats count the verbs front end's activity.
type VerbsStats struct {
	WQEs, Fetches, CQEs, ErrorCQEs, Naks, EnginesMax uint64
	CQOverruns, RNRNaks, RNRRetries                  uint64
	Reordered                                        uint64 // NIC→GPU writes delayed by the reorder hazard
}

func (n *NIC) vs() *verbs {
	if n.v == nil {
		n.v = &verbs{mrs: map[uint32]*MR{}, nextKey: 0x100, in: map[uint64]*rcIn{}, early: map[uint64][]*Packet{}}
	}
	return n.v
}

// VerbsStats returns the verbs counters.
func (n *NIC) VerbsStats() VerbsStats { return n.vs().stats }

// RegMR registers [a, a+length) with access and returns the region. It
// costs the caller nothing (registration is setup).
func (n *NIC) RegMR(a mem.Addr, length uint64, access Access) *MR {
	v := n.vs()
	v.nextKey++
	r := &MR{Key: v.nextKey, Addr: a, Length: length, Access: access}
	v.mrs[r.Key] = r
	return r
}

// DeregMR removes a region: later WQEs naming its key fail.
func (n *NIC) DeregMR(key uint32) { delete(n.vs().mrs, key) }

// MaxCQEntries is the most entries a CQ holds (ConnectX's 2^22 CQEs).
const MaxCQEntries = 1 << 22

// CreateCQ makes a completion queue of entries slots at base (entries ×
// CQESize bytes, real bytes: allocate it with AllocData).
func (n *NIC) CreateCQ(base mem.Addr, entries int) (*CQ, error) {
	if err := n.checkCQ(base, entries); err != nil {
		return nil, err
	}
	v := n.vs()
	c := &CQ{Num: v.cqs.Len(), Base: base, Entries: entries}
	v.cqs.push(c)
	return c, nil
}

// checkCQ validates a CQ ring of entries slots at base (CreateCQ).
func (n *NIC) checkCQ(base mem.Addr, entries int) error {
	if entries < 1 || entries > MaxCQEntries {
		return fmt.Errorf("%s: CQ of %d entries: must be in [1, %d]", n.name, entries, MaxCQEntries)
	}
	if !n.mem.HasData(base, entries*CQESize) {
		return fmt.Errorf("%s: CQ ring at %#x holds no bytes: allocate it with AllocData", n.name, uint64(base))
	}
	return nil
}

// ReserveCQs takes count consecutive numbers CreateCQ would give CQs
// now, without making them, and returns the first: CreateCQAt makes each
// later (CQs made on first use).
func (n *NIC) ReserveCQs(count int) int {
	v := n.vs()
	first := v.cqs.Len()
	v.cqs.grow(count)
	return first
}

// CreateCQAt makes the CQ ReserveCQs reserved as number num.
func (n *NIC) CreateCQAt(num int, base mem.Addr, entries int) (*CQ, error) {
	v := n.vs()
	if num < 0 || num >= v.cqs.Len() || v.cqs.get(num) != nil {
		return nil, fmt.Errorf("%s: CQ %d was not reserved", n.name, num)
	}
	if err := n.checkCQ(base, entries); err != nil {
		return nil, err
	}
	c := &CQ{Num: num, Base: base, Entries: entries}
	v.cqs.set(num, c)
	return c, nil
}

// ReserveQPs takes count consecutive QP numbers without making the QPs
// and returns the first: a runtime that numbers its QPs by who connects
// to whom, whatever the order they are made in (CreateQPAt makes each).
func (n *NIC) ReserveQPs(count int) uint32 {
	v := n.vs()
	first := uint32(v.qps.Len() + 1)
	v.qps.grow(count)
	return first
}

// SetQPMaker sets f to be called when a packet names a reserved QP
// that was not made yet: it makes it (CreateQPAt) on this NIC, from
// this NIC's engine. The remote end of a connection is then made where
// it lives, when it is first needed, not by the node that connects to it
// (whose engine may be another partition's).
func (n *NIC) SetQPMaker(f func(num uint32)) { n.vs().makeQP = f }

// CreateQPAt makes the QP numbered num that ReserveQPs reserved.
func (n *NIC) CreateQPAt(num uint32, cfg QPConfig) (*QP, error) {
	v := n.vs()
	if num < 1 || int(num) > v.qps.Len() || v.qps.get(int(num-1)) != nil {
		return nil, fmt.Errorf("%s: QP %d was not reserved", n.name, num)
	}
	if err := n.checkQP(&cfg); err != nil {
		return nil, err
	}
	q := &QP{n: n, Num: num, cfg: cfg, finished: map[uint64]wqeDone{}}
	v.qps.set(int(num-1), q)
	return q, nil
}

// CreateQP makes a queue pair in the init state; Connect makes it ready.
func (n *NIC) CreateQP(cfg QPConfig) (*QP, error) {
	if err := n.checkQP(&cfg); err != nil {
		return nil, err
	}
	v := n.vs()
	q := &QP{n: n, Num: uint32(v.qps.Len() + 1), cfg: cfg, finished: map[uint64]wqeDone{}}
	v.qps.push(q)
	return q, nil
}

// checkQP validates a QP's configuration (CreateQP), defaulting its
// receive CQ to its send CQ.
func (n *NIC) checkQP(cfg *QPConfig) error {
	if cfg.SQEntries < 1 || cfg.SQEntries > 1<<16 {
		return fmt.Errorf("%s: send queue of %d entries: must be in [1, 65536]", n.name, cfg.SQEntries)
	}
	if cfg.SendCQ == nil {
		return fmt.Errorf("%s: QP without a send CQ", n.name)
	}
	if cfg.RecvCQ == nil {
		cfg.RecvCQ = cfg.SendCQ
	}
	if !n.mem.HasData(cfg.SQ, cfg.SQEntries*WQESize) || !n.mem.HasData(cfg.DBRec, 16) {
		return fmt.Errorf("%s: send ring or doorbell record holds no bytes: allocate them with AllocData", n.name)
	}
	if cfg.RQ != 0 && (cfg.RQEntries < 1 || !n.mem.HasData(cfg.RQ, cfg.RQEntries*WQESize)) {
		return fmt.Errorf("%s: receive ring of %d entries: need ≥ 1 entry with real bytes", n.name, cfg.RQEntries)
	}
	return nil
}

// qp returns QP number num, or nil.
func (n *NIC) qp(num uint32) *QP {
	v := n.vs()
	if num < 1 || int(num) > v.qps.Len() {
		return nil
	}
	if q := v.qps.get(int(num - 1)); q != nil || v.makeQP == nil {
		return q
	}
	v.makeQP(num)
	return v.qps.get(int(num - 1))
}

// Doorbell is a host thread's MMIO doorbell for the send queue: a posted
// 8 B write over the NIC's link carrying the new producer index pi; p
// sleeps until its side is done.
func (q *QP) Doorbell(p *sim.Proc, pi uint64) {
	sf := q.doorbellAt(p.Now(), pi, q.n.link.HostWriteLatency())
	p.SleepUntil(sf)
}

// DoorbellFrom enters the MMIO doorbell write into the NIC's link at time
// at (a write forwarded from another device, e.g. the GPU's posted write
// through the PCIe switch) and returns when the link took it. The NIC
// acts on it when it is visible.
func (q *QP) DoorbellFrom(at sim.Time, pi uint64) sim.Time { return q.doorbellAt(at, pi, 0) }

// doorbellAt is DoorbellFrom with hop added to the write's latency: the
// PCIe switch a host thread's write crosses (a GPU's write, peer to peer,
// turns around in it).
func (q *QP) doorbellAt(at sim.Time, pi uint64, hop sim.Duration) sim.Time {
	n := q.n
	sf, vis := n.link.PostedWrite(pcieDown, at, doorbellSize)
	n.e.AtH(vis+hop, (*qpRung)(q), pi)
	return sf
}

// qpRung is a QP as the event of its doorbell reaching the NIC (the
// producer index its argument): a handler on the QP, not a closure per
// doorbell.
type qpRung QP

// Handle handles the doorbell of producer index pi.
func (h *qpRung) Handle(pi uint64) { q := (*QP)(h); q.n.ringed(q, pi) }

// qpPosted is a QP as the event that makes a doorbell's new work (up to
// the producer index its argument) seen, CmdLatency after it arrived.
type qpPosted QP

// Handle takes the work up to pi and schedules the QP.
func (h *qpPosted) Handle(pi uint64) {
	q := (*QP)(h)
	q.posted = max(q.posted, pi)
	q.n.schedule(q)
}

// BlueFlameFrom is DoorbellFrom for a BlueFlame doorbell: the MMIO write
// carries the 64 B WQE for index pi−1 itself, so the HCA takes it from
// the write instead of fetching it (Spec.VerbsBlueFlame; the caller
// checks the knob).
func (q *QP) BlueFlameFrom(at sim.Time, pi uint64, w WQE) sim.Time {
	n := q.n
	sf, vis := n.link.PostedWrite(pcieDown, at, WQESize)
	n.e.At(vis, func() {
		if q.next == pi-1 && (pi-1 < q.cacheAt || pi-1-q.cacheAt >= uint64(len(q.cache))) {
			q.cache = append(q.cache[:0], w)
			q.cacheAt = pi - 1
		}
		n.ringed(q, pi)
	})
	return sf
}

// ringed handles a doorbell when it reaches the NIC: the new work is
// processed after the command latency.
func (n *NIC) ringed(q *QP, pi uint64) {
	q.stats.Doorbells++
	if pi <= q.posted {
		return
	}
	n.e.AtH(n.e.Now()+n.spec.CmdLatency, (*qpPosted)(q), pi)
}

// inGet returns in[k] (nil when absent).
func (v *verbs) inGet(k uint64) *rcIn {
	if v.inM != nil && v.inKey == k {
		return v.inM
	}
	m := v.in[k]
	if m != nil {
		v.inKey, v.inM = k, m
	}
	return m
}

// inSet sets in[k] = m.
func (v *verbs) inSet(k uint64, m *rcIn) {
	v.in[k] = m
	if v.inKey == k {
		v.inM = m
	}
}

// inDel deletes in[k].
func (v *verbs) inDel(k uint64) {
	delete(v.in, k)
	if v.inKey == k {
		v.inM = nil
	}
}
