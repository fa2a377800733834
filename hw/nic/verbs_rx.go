package nic

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Packet kinds of the verbs front end, after the Portals ones.
const (
	KindRCRequest  Kind = iota + 16 // RDMA write/send data, or a read request
	KindRCAck                       // ack or NAK (RCHeader.Status) of a write or send
	KindRCReadResp                  // RDMA read response data (or its NAK)
)

func isRC(k Kind) bool { return k >= KindRCRequest && k <= KindRCReadResp }

// RCHeader is the transport header of a verbs message (the BTH/RETH/
// immediate of InfiniBand, reduced to what the model uses), carried by
// the message's first packet in Header.RC.
type RCHeader struct {
	Op         VerbsOp
	DstQPN     uint32
	RemoteAddr mem.Addr
	RKey       uint32
	Imm        uint32
	Status     WCStatus // acks and read responses
	Operand    uint64   // atomics
	Compare    uint64   // compare-swap
	PSN        uint64   // the requester's WQE index (verbs_rnr.go)
	Gen        uint64   // the requester's go-back generation
}

// rcIn is a verbs message in flight: at the initiator (qp, idx, w) until
// its ack or read response completes it; at the target (src, msg, hdr)
// until its last byte is visible.
type rcIn struct {
	n     *NIC
	qp    *QP
	idx   uint64
	w     WQE
	start sim.Time

	src      int
	msg      uint64
	hdr      *RCHeader
	length   uint64
	status   WCStatus
	dest     mem.Addr
	recv     *RecvWQE
	sgl      []SGE // the initiator's read scatter list, or the receive WQE's list
	recvWait bool
	rnr      bool // no receive WQE was posted: answered with an RNR NAK
	held     []*Packet
	seen     int
	npk      int
	pending  int
	lastSeen bool

	// out is the message the record sends: at the initiator its request,
	// at the target its ack (one allocation with the record, not three).
	out rcOut
}

// maxRecycledOut bounds the initiator records a NIC keeps for reuse.
const maxRecycledOut = 256

// recycleOut keeps initiator record m, whose message an ack completed
// successfully, for a later WQE (startWQE), instead of leaving it to the
// collector (a 64-node GIO allreduce made 65 k of them, 576 B each). Its
// last uses are over: the target sent the ack after every packet of the
// message was seen and every landing had run (rcMaybeDone), where each
// packet with a payload was retired (rcLanding: the packets' record, in
// m, last touched there; a packet without one is never retired) and the
// target's record read the header for the last time (rcDone); the
// message left in (inDel above), so a go-back no longer sees it; an RNR
// NAK or an error keeps it (rnrNak's retry reads it later), and so does
// the flow model, whose messages keep their header elsewhere.
func (n *NIC) recycleOut(m *rcIn) {
	v := n.vs()
	if n.flowPiece > 0 || len(v.outFree) >= maxRecycledOut {
		return
	}
	if n.poisonRetired { // tests: a later use of the record or its header reads impossible values
		*m = rcIn{idx: 1 << 62, msg: 1 << 62, length: 1 << 62, npk: -1, dest: 1 << 62, status: WCStatus(255)}
		m.out.rc = RCHeader{Op: vOpCount, DstQPN: ^uint32(0), RemoteAddr: 1 << 62, PSN: 1 << 62, Status: WCStatus(255)}
		m.out.hdr = Header{Length: 1 << 62, RC: &m.out.rc}
		return
	}
	*m = rcIn{}
	v.outFree = append(v.outFree, m)
}

// newRecord returns a message record for startWQE or rcBind: one that
// recycleOut or recycleIn kept, else a new one (the caller sets it whole).
func (n *NIC) newRecord() *rcIn {
	v := n.vs()
	if k := len(v.outFree); k > 0 {
		m := v.outFree[k-1]
		v.outFree[k-1] = nil
		v.outFree = v.outFree[:k-1]
		return m
	}
	return new(rcIn)
}

// recycleIn keeps the target's record whose ack's packets' record is tx,
// at the initiator that has just retired the ack's packet, as recycleOut
// keeps the initiator's (the records are alike; a ring's NIC is the
// initiator of as many messages as it is the target of, so its free list
// gets back the two records each of its messages made, and rcBind and
// startWQE take one each). Its last uses are over: the target sent the
// ack in rcDone, after the receive CQE and every landing and scatter
// (rcMaybeDone), with the message already out of in (rcData) and the
// receive-WQE wait resolved (recvReady); the ack's packet, the only
// thing that still led to it, retired here (all its packets: tx.pkts
// cleared). Only for a successful ack (an RNR NAK or an error leaves the
// target's QP state to it), not in the flow model. In a split run the
// target's partition handed the ack over at a barrier after its event
// ended, as it hands the packets' arrays that retire recycles.
func (n *NIC) recycleIn(tx *txMsg) {
	if tx == nil || tx.ackOf == nil || tx.pkts != nil || tx.retired == 0 {
		return
	}
	m := tx.ackOf
	tx.ackOf = nil
	n.recycleOut(m)
}

// rcOut is a verbs message's header and its packets' record.
type rcOut struct {
	tx  txMsg
	hdr Header
	rc  RCHeader
}

// rcDeliver processes a verbs packet after the inbound pipeline.
func (n *NIC) rcDeliver(pk *Packet) {
	v := n.vs()
	if r := v.reorder; r != nil && pk.Kind != KindRCAck {
		r.noteRx(n.e.Now(), n.fab.Serialization(pk.PayloadBytes()))
	}
	switch pk.Kind {
	case KindRCAck:
		m := v.inGet(outKey(pk.Msg))
		if m == nil {
			return // the message was abandoned by a go-back; its ack still came
		}
		v.inDel(outKey(pk.Msg))
		st := pk.Hdr.RC.Status
		tx := pk.tx
		n.retire(pk) // the ack's last use
		if st == WCRNRRetryExc {
			n.rnrNak(m)
			return
		}
		if st != WCSuccess {
			v.stats.Naks++
		}
		n.complete(m.qp, m.idx, m.w, st, m.w.Length)
		n.vspan(m.w.Op.String(), m.start)
		if st == WCSuccess {
			n.recycleIn(tx)
			n.recycleOut(m)
		}
		return
	case KindRCReadResp:
		n.readResponse(pk)
		return
	}
	key := msgKey(pk.Src, pk.Msg)
	m := v.inGet(key)
	if m == nil {
		if n.rcDropped(pk) {
			return
		}
		if pk.Index != 0 { // overtook its header on an out-of-order fabric
			n.stats.Overtaken++
			v.early[key] = append(v.early[key], pk)
			return
		}
		if !n.rcAdmit(n.qp(pk.Hdr.RC.DstQPN), pk) {
			return
		}
		m = n.rcBind(pk)
		v.inSet(key, m)
		if m.hdr.Op == VRead || m.hdr.Op == VAtomic {
			v.inDel(key)
			n.readRespond(m)
			return
		}
		defer func() {
			held := v.early[key]
			delete(v.early, key)
			for _, q := range held {
				n.rcDeliver(q)
			}
		}()
	}
	if m.recvWait {
		m.held = append(m.held, pk)
		return
	}
	n.rcData(m, pk)
}

// rcBind checks a message's header at the target: QP, rkey and range, and
// starts fetching a receive WQE when the operation consumes one.
func (n *NIC) rcBind(pk *Packet) *rcIn {
	h := pk.Hdr.RC
	m := n.newRecord()
	*m = rcIn{n: n, src: pk.Src, msg: pk.Msg, hdr: h, length: pk.Hdr.Length, npk: n.packets(pk.Hdr.Length),
		dest: h.RemoteAddr, start: n.e.Now()}
	q := n.qp(h.DstQPN)
	m.qp = q
	switch {
	case q == nil || q.state != QPReady || q.remote != pk.Src:
		m.status = WCRemInvReqErr
	case h.Op == VWrite || h.Op == VWriteImm:
		if !n.vs().mrs[h.RKey].covers(h.RemoteAddr, m.length, AccessRemoteWrite) {
			m.status = WCRemAccessErr
		}
	case h.Op == VRead:
		if !n.vs().mrs[h.RKey].covers(h.RemoteAddr, m.length, AccessRemoteRead) {
			m.status = WCRemAccessErr
		}
	case h.Op == VAtomic:
		if !n.vs().mrs[h.RKey].covers(h.RemoteAddr, m.length, AccessRemoteRead|AccessRemoteWrite) ||
			uint64(h.RemoteAddr)%m.length != 0 {
			m.status = WCRemAccessErr
		}
	}
	if m.status == WCSuccess && h.Op.needsRecv() {
		m.recvWait = true
		q.rnr.busy = m
		n.fetchRecv(q, m)
	}
	return m
}

// fetchRecv reads the receive producer index from the doorbell record and
// then the next receive WQE, both by DMA; the message's packets wait.
func (n *NIC) fetchRecv(q *QP, m *rcIn) {
	if q.cfg.RQ == 0 {
		m.status = WCRemInvReqErr
		n.e.After(0, func() { n.recvReady(m) })
		return
	}
	idx := q.rqNext
	q.rqNext++
	dbr := q.cfg.DBRec + 8
	t1, k1 := n.dmaRead(dbr, 8)
	n.e.At(t1, func() {
		n.dmaEnd(k1)
		if idx >= n.mem.Load64(dbr) {
			q.rqNext = min(q.rqNext, idx) // nothing was consumed
			m.status, m.rnr = WCRNRRetryExc, true
			n.recvReady(m)
			return
		}
		a := q.cfg.RQ + mem.Addr(idx%uint64(q.cfg.RQEntries)*WQESize)
		t2, k2 := n.dmaRead(a, WQESize)
		n.e.At(t2, func() {
			n.dmaEnd(k2)
			var b [WQESize]byte
			n.mem.Read(a, b[:])
			r := DecodeRecvWQE(b[:])
			m.recv = &r
			if r.NumSGE > 0 && m.hdr.Op != VWriteImm {
				n.fetchSGL(r.SGL, int(r.NumSGE), AccessLocalWrite, m.length, true,
					func(list []SGE) { m.sgl = list; n.recvReady(m) },
					func(s WCStatus) { m.status = s; n.recvReady(m) })
				return
			}
			if m.hdr.Op != VWriteImm {
				switch {
				case uint64(r.Length) < m.length:
					m.status = WCLocLenErr
				case m.length > 0 && !n.vs().mrs[r.LKey].covers(r.Addr, m.length, AccessLocalWrite):
					m.status = WCLocProtErr
				}
				m.dest = r.Addr
			}
			n.recvReady(m)
		})
	})
}

// recvReady releases the packets that waited for the receive WQE.
func (n *NIC) recvReady(m *rcIn) {
	m.recvWait = false
	defer n.rcRecvResolved(m)
	held := m.held
	m.held = nil
	for _, pk := range held {
		n.rcData(m, pk)
	}
}

// rcData lands one packet of a write or send (nothing on an error) and
// completes the message after its last byte is visible.
func (n *NIC) rcData(m *rcIn, pk *Packet) {
	m.seen++
	if m.status == WCSuccess && pk.Len > 0 && m.sgl != nil {
		data := n.denseData(pk)
		m.pending++ // until every piece was issued
		m.pending += n.scatter(m.sgl, pk.Offset, pk.Len, data, func() { m.pending--; n.rcMaybeDone(m) })
		n.fab.PutBuf(data)
		m.pending--
	} else if m.status == WCSuccess && pk.Len > 0 {
		m.pending++
		n.rcLand(pk, m.dest+mem.Addr(pk.Offset), m, false)
	}
	if m.seen == m.npk {
		m.lastSeen = true
		n.vs().inDel(msgKey(m.src, m.msg))
		n.rcRecvCQE(m)
		n.rcMaybeDone(m)
	}
}

// rcRecvCQE writes m's receive CQE (if any) once the last write of its
// payload is issued: a posted write behind them (postWrite keeps posted
// writes in order), visible no earlier than the payload.
func (n *NIC) rcRecvCQE(m *rcIn) {
	if m.recv == nil {
		return
	}
	h := m.hdr
	c := CQE{QPN: m.qp.Num, Index: uint32(m.qp.rqNext - 1), WRID: m.recv.WRID, ByteLen: uint32(m.length),
		Imm: h.Imm, HasImm: h.Op != VSend, Recv: true, Op: h.Op, Status: m.status}
	n.writeCQE(m.qp.cfg.RecvCQ, c)
}

// rcMaybeDone sends the ack once every packet of m is visible.
func (n *NIC) rcMaybeDone(m *rcIn) {
	if !m.lastSeen || m.pending > 0 {
		return
	}
	m.lastSeen = false
	n.e.AtH(max(n.e.Now(), n.upVis), (*rcDone)(m), 0) // (afterWrites without a closure)
}

// rcDone is a target's message as the event at which every write of it
// is visible: its ack.
type rcDone rcIn

// Handle sends the ack.
func (d *rcDone) Handle(uint64) {
	m := (*rcIn)(d)
	n, h := m.n, m.hdr
	st := m.status
	if st != WCSuccess && !m.rnr && m.qp != nil {
		m.qp.state = QPError // the responder stops too: later messages are refused (an RNR NAK leaves it ready)
	}
	if st == WCLocLenErr || st == WCLocProtErr {
		st = WCRemInvReqErr // the requester sees a remote error
	}
	o := &m.out
	o.rc = RCHeader{Status: st}
	o.hdr = Header{RC: &o.rc}
	n.sendPacketsIn(&o.tx, m.src, KindRCAck, m.msg, &o.hdr, 0, FailOK, 0, n.fromBuffer(nil), nil)
	o.tx.ackOf = m // (recycleIn)
	if n.e.Tracer() != nil {
		n.vspan("rx "+h.Op.String(), m.start)
	}
}

// readRespond answers an RDMA read: the data is read by DMA and sent back
// (or a NAK of zero length).
func (n *NIC) readRespond(m *rcIn) {
	hdr := &Header{Length: m.length, RC: &RCHeader{Status: m.status}}
	if m.status != WCSuccess {
		if m.status == WCRemAccessErr {
			m.qp.state = QPError
		}
		hdr.Length = 0
		n.sendPackets(m.src, KindRCReadResp, m.msg, hdr, 0, FailOK, 0, n.fromBuffer(nil), nil)
		return
	}
	if m.hdr.Op == VAtomic {
		n.atomicRespond(m, hdr)
		return
	}
	n.sendPackets(m.src, KindRCReadResp, m.msg, hdr, m.length, FailOK, m.length, n.fromMemory(m.dest), nil)
}

// atomicRespond performs an RDMA atomic: a DMA read of the target, then
// the read-modify-write applied when the posted write of the result lands
// (so atomics from every initiator serialise there), and the old value
// sent back.
func (n *NIC) atomicRespond(m *rcIn, hdr *Header) {
	h, a, w := m.hdr, m.dest, m.length
	t, k := n.dmaRead(a, w)
	n.e.At(t, func() {
		n.dmaEnd(k)
		n.dmaWriteTo(a, w, func() {
			var b [8]byte
			n.mem.Read(a, b[:w])
			old := binary.LittleEndian.Uint64(b[:])
			mask := uint64(1)<<(8*w) - 1
			if w == 8 {
				mask = ^uint64(0)
			}
			nv := old
			switch h.Imm {
			case AtomicAdd:
				nv = old + h.Operand
			case AtomicSwap:
				nv = h.Operand
			case AtomicCSwap:
				if old&mask == h.Compare&mask {
					nv = h.Operand
				}
			}
			var out [8]byte
			binary.LittleEndian.PutUint64(out[:], nv)
			n.mem.Write(a, out[:w])
			resp := make([]byte, w)
			copy(resp, b[:w])
			n.sendPackets(m.src, KindRCReadResp, m.msg, hdr, w, FailOK, w, n.fromBuffer(resp), nil)
		})
	})
}

// readResponse lands RDMA read response data at the initiator and
// completes the WQE when all of it is visible.
func (n *NIC) readResponse(pk *Packet) {
	v := n.vs()
	m := v.inGet(outKey(pk.Msg))
	if pk.Index == 0 {
		m.status = pk.Hdr.RC.Status
		m.npk = n.packets(pk.Hdr.Length)
	}
	m.seen++
	if m.status == WCSuccess && pk.Len > 0 && m.sgl != nil {
		data := n.denseData(pk)
		n.scatter(m.sgl, pk.Offset, pk.Len, data, func() {})
		n.fab.PutBuf(data)
	} else if m.status == WCSuccess && pk.Len > 0 {
		n.rcLand(pk, m.w.LocalAddr+mem.Addr(pk.Offset), m, true)
	}
	if m.npk > 0 && m.seen == m.npk {
		n.readIssued(m)
	}
}

// readIssued completes the WQE of read or atomic m once the last response
// packet's payload write is issued (every packet's is issued on its
// arrival), not once it is visible: the CQE is a posted write behind them
// on the same ordered path (postWrite; the PCI Express Base
// Specification's ordering rules do not let a posted write pass an
// earlier one), so a reader that sees it sees the data. A failed read has
// no data; its CQE follows the NIC's earlier writes all the same.
func (n *NIC) readIssued(m *rcIn) {
	n.vs().inDel(outKey(m.msg))
	n.complete(m.qp, m.idx, m.w, m.status, m.w.Length)
	n.vspan(m.w.Op.String(), m.start)
}

// rcWrite is a posted DMA write of data to a; done runs when the NIC
// considers it visible (its write ordering point). With the peer-to-peer
// reorder hazard on, a write into GPU memory lands only after an extra
// random delay (the GPUrdma paper), so a later flag can overtake it.
func (n *NIC) rcWrite(a mem.Addr, data []byte, l uint64, done func()) {
	v := n.vs()
	v.wseq++
	seq := v.wseq
	n.dmaWriteTo(a, l, func() {
		n.rcStore(a, data, nil, 0, l, seq)
		done()
	})
}

// rcStore is a posted write's landing (rcWrite): at once, or after the
// reorder hazard's delay.
func (n *NIC) rcStore(a mem.Addr, data []byte, sp *sparsePayload, at, l, seq uint64) {
	if d := n.reorderDelay(a); d > 0 {
		buf := append(make([]byte, 0, len(data)), data...) // non-nil as data is: an empty payload is zeros (Packet.DataAt)
		n.e.After(d, func() {
			if sp != nil { // a sparse payload is not changed after it is sent
				n.storeSparse(a, sp, l)
			} else {
				n.storeDataAt(a, bufOrNil(buf, data), at, l)
			}
			n.landedAt(a, seq)
		})
	} else {
		if sp != nil {
			n.storeSparse(a, sp, l)
		} else {
			n.storeDataAt(a, data, at, l)
		}
		n.landedAt(a, seq)
	}
}

// rcLanding is rcWrite of one packet's payload of m, landed where the
// message says (no scatter list), as an event of its own instead of three
// closures: a write or send at the target (done: rcMaybeDone) or a read
// response at the initiator (read: nothing more, readIssued completed it). Landings are
// reused once they ran; they were half of a GPUrdma run's allocations.
type rcLanding struct {
	n    *NIC
	pk   *Packet // retired once landed (recycle.go)
	m    *rcIn
	a    mem.Addr
	data []byte
	at   uint64 // where data starts (Packet.DataAt)
	l    uint64
	seq  uint64
	read bool
}

// rcLand is rcWrite(a, pk.Data, pk.Len, done) with done the packet's
// completion of m: the fabric buffer returned, m's pending count, then
// rcMaybeDone (nothing if read: readIssued). Same events, same times. The
// packet is not used after this call but retired when its payload has
// landed, as a Portals put's is, so that a message whose every packet
// landed this way gives its array back (recycle.go).
func (n *NIC) rcLand(pk *Packet, a mem.Addr, m *rcIn, read bool) {
	data, at, l := pk.Data, pk.DataAt, pk.Len
	v := n.vs()
	v.wseq++
	var w *rcLanding
	if k := len(v.lands); k > 0 {
		w, v.lands[k-1] = v.lands[k-1], nil
		v.lands = v.lands[:k-1]
	} else {
		w = new(rcLanding)
	}
	*w = rcLanding{n: n, pk: pk, m: m, a: a, data: data, at: at, l: l, seq: v.wseq, read: read}
	n.dmaWriteH(a, l, w)
}

// Handle is the landing's posted write becoming visible (dmaWriteTo's
// event).
func (w *rcLanding) Handle(uint64) {
	n, m, data, pk := w.n, w.m, w.data, w.pk
	n.dmaEnd(1)
	n.rcStore(w.a, data, pk.sparse, w.at, w.l, w.seq)
	pk.sparse = nil
	n.retire(pk)
	read := w.read
	*w = rcLanding{}
	v := n.vs()
	v.lands = append(v.lands, w)
	n.fab.PutBuf(data)
	if !read { // (a read completed when its last write was issued: readIssued)
		m.pending--
		n.rcMaybeDone(m)
	}
}

// landedAt records that write seq reached memory at a and reports, with a
// checker, a write that landed after a later one (it was overtaken).
func (n *NIC) landedAt(a mem.Addr, seq uint64) {
	v := n.vs()
	if seq > v.landed {
		v.landed = seq
		return
	}
	if c := n.mem.Checker(); c != nil {
		c.Report(mem.Hazard{At: n.e.Now(), Agent: n.name + " → GPU (peer-to-peer write)", Addr: a,
			What: "payload landed after a later write (a flag) was already visible",
			Fix:  "validate received contents (known values or a CRC) before use (gnn.p2p_write_reorder)"})
	}
}

func bufOrNil(buf, data []byte) []byte {
	if data == nil {
		return nil
	}
	return buf
}

// denseData is pk's payload as one buffer of pk.Len bytes from its first
// (nil when payload-free): a scatter list cuts it by offsets in the
// message. A flow-model message carrying only its trailing bytes
// (Packet.DataAt) is spread over a zeroed buffer, and its own is given back.
func (n *NIC) denseData(pk *Packet) []byte {
	n.materialize(pk)
	if pk.Data == nil || pk.DataAt == 0 {
		return pk.Data
	}
	b := n.fab.GetBuf(int(pk.Len))
	clear(b[:pk.DataAt]) // (a packet-sized pool buffer is not cleared)
	copy(b[pk.DataAt:], pk.Data)
	n.fab.PutBuf(pk.Data)
	pk.Data, pk.DataAt = b, 0
	return b
}
