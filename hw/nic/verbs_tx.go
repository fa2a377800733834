package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The HCA's send side. Packet ordering forces one QP's WQEs to be
// processed serially (fetch, payload read, hand to the wire), so a QP is
// served by at most one of Spec.VerbsEngines processing engines at a time;
// different QPs run on different engines in parallel and share the PCIe
// link and the wire. An engine takes one WQE of a QP, then the QP goes to
// the back of the run queue, so busy QPs share the engines round-robin.

// schedule queues q for an engine when it has unprocessed WQEs.
func (n *NIC) schedule(q *QP) {
	v := n.vs()
	if !q.queued && !q.active && q.next < q.posted && !n.windowFull(q) {
		q.queued = true
		if v.runqAt == len(v.runq) { // empty: reuse the array from its start
			v.runq, v.runqAt = v.runq[:0], 0
		}
		v.runq = append(v.runq, q)
	}
	n.dispatch()
}

// windowFull reports whether q has Spec.VerbsQPInflight WQEs in flight
// (started and not retired): the QP's next WQE waits for an
// acknowledgement, so one QP's pipelined rate is at most that many
// messages per round trip, below the wire for small messages.
func (n *NIC) windowFull(q *QP) bool {
	w := n.spec.VerbsQPInflight
	return w > 0 && q.next-q.retired >= uint64(w)
}

// dispatch starts queued QPs on free engines.
func (n *NIC) dispatch() {
	v := n.vs()
	for v.busy < n.spec.VerbsEngines && v.runqAt < len(v.runq) {
		q := v.runq[v.runqAt]
		v.runq[v.runqAt] = nil
		v.runqAt++
		if v.runqAt >= 16 && 2*v.runqAt >= len(v.runq) {
			// The queue need not empty for a long time (more QPs with
			// work than engines): move the waiting ones to the front, or
			// the array grows by an entry per WQE.
			k := copy(v.runq, v.runq[v.runqAt:])
			clear(v.runq[k:])
			v.runq, v.runqAt = v.runq[:k], 0
		}
		q.queued, q.active = false, true
		v.busy++
		v.stats.EnginesMax = max(v.stats.EnginesMax, uint64(v.busy))
		n.processNext(q)
	}
}

// release frees q's engine after its WQE was handed on.
func (n *NIC) release(q *QP) {
	v := n.vs()
	q.active = false
	v.busy--
	n.schedule(q)
}

// processNext runs q's next WQE, fetching a batch of WQEs by DMA first
// when it is not on the NIC yet. A batch is every posted WQE up to one
// maximum read request, without wrapping the ring.
func (n *NIC) processNext(q *QP) {
	idx := q.next
	if k := idx - q.cacheAt; idx >= q.cacheAt && k < uint64(len(q.cache)) {
		n.execWQE(q, idx, q.cache[k])
		return
	}
	ents := uint64(q.cfg.SQEntries)
	batch := max(1, uint64(n.link.MaxReadReq())/WQESize)
	cnt := min(q.posted-idx, batch, ents-idx%ents)
	a := q.cfg.SQ + mem.Addr(idx%ents*WQESize)
	done, k := n.dmaRead(a, cnt*WQESize)
	q.stats.Fetches++
	n.vs().stats.Fetches++
	q.fetch = wqeFetch{idx: idx, cnt: cnt, a: a, k: k, gen: q.rnr.gen}
	n.e.AtH(done, (*qpFetched)(q), 0)
}

// wqeFetch is a QP's WQE batch read in flight (one at a time: the QP's
// engine waits for it).
type wqeFetch struct {
	idx, cnt uint64
	a        mem.Addr
	k        int
	gen      uint64
}

// qpFetched is a QP as the event that ends its WQE batch read (q.fetch):
// a handler on the QP instead of a closure per fetch.
type qpFetched QP

// Handle decodes the fetched WQEs and executes the first.
func (h *qpFetched) Handle(uint64) {
	q := (*QP)(h)
	n, f := q.n, q.fetch
	n.dmaEnd(f.k)
	if f.gen != q.rnr.gen { // a go-back meanwhile: start over from the new position
		n.release(q)
		return
	}
	// The NIC sees memory as it is now: WQE bytes still in a GPU
	// cache, or not yet written, are misread.
	v := n.vs()
	if need := int(f.cnt * WQESize); cap(v.wqeBuf) < need {
		v.wqeBuf = make([]byte, need)
	}
	buf := v.wqeBuf[:f.cnt*WQESize] // (vread reads into it; the WQEs are decoded copies)
	n.vread(f.a, buf)
	q.cache = q.cache[:0]
	for i := range f.cnt {
		q.cache = append(q.cache, DecodeWQE(buf[i*WQESize:]))
	}
	q.cacheAt = f.idx
	n.execWQE(q, f.idx, q.cache[0])
}

// execWQE validates and starts WQE idx of q; the engine is released when
// its last packet has been handed to the fabric (or at once on an error).
func (n *NIC) execWQE(q *QP, idx uint64, w WQE) {
	q.next++
	q.stats.WQEs++
	n.vs().stats.WQEs++
	q.exec = wqeExec{idx: idx, w: w, start: n.e.Now(), gen: q.rnr.gen}
	if q.state == QPError {
		q.exec.fail = WCWRFlushErr
	} else {
		q.exec.fail = n.checkLocal(q, w)
	}
	n.e.AtH(n.e.Now()+n.spec.VerbsWQECost, (*qpParsed)(q), 0)
}

// wqeExec is the WQE a QP's engine parses (one at a time: the QP is
// active until its engine is released), and the failure found in it
// (WCSuccess: none).
type wqeExec struct {
	idx   uint64
	w     WQE
	start sim.Time
	gen   uint64
	fail  WCStatus
}

// qpParsed is a QP as the event that ends the parse of its WQE (q.exec),
// Spec.VerbsWQECost after execWQE: a handler on the QP instead of a
// closure per WQE.
type qpParsed QP

// Handle starts the parsed WQE, or completes it with its failure.
func (h *qpParsed) Handle(uint64) {
	q := (*QP)(h)
	n, x := q.n, &q.exec
	idx, w, start, gen := x.idx, x.w, x.start, x.gen
	if x.fail != WCSuccess {
		if gen == q.rnr.gen {
			n.complete(q, idx, w, x.fail, 0)
		}
		n.release(q)
		return
	}
	if gen != q.rnr.gen { // abandoned by a go-back while being parsed
		n.release(q)
		return
	}
	if w.Flags&WQESGL == 0 {
		n.startWQE(q, idx, w, start, nil)
		return
	}
	need := Access(0)
	if w.Op == VRead {
		need = AccessLocalWrite
	}
	n.fetchSGL(w.LocalAddr, w.sgeCount(), need, uint64(w.Length), false,
		func(list []SGE) {
			if gen != q.rnr.gen {
				n.release(q)
				return
			}
			n.startWQE(q, idx, w, start, list)
		},
		func(s WCStatus) {
			if gen == q.rnr.gen {
				n.complete(q, idx, w, s, 0)
			}
			n.release(q)
		})
}

// startWQE sends WQE idx of q (its gather or scatter list, when it has
// one, already fetched and checked); the engine is released when the last
// packet has been handed to the fabric.
func (n *NIC) startWQE(q *QP, idx uint64, w WQE, start sim.Time, list []SGE) {
	v := n.vs()
	n.nextMsg++
	msg := n.nextMsg
	// The initiator record, the request's header and its packets'
	// record are one object (rcIn.out), not four.
	m := n.newRecord()
	*m = rcIn{n: n, qp: q, idx: idx, w: w, start: start, msg: msg, sgl: list}
	v.inSet(outKey(msg), m)
	o := &m.out
	o.rc = RCHeader{Op: w.Op, DstQPN: q.rqpn, RemoteAddr: w.RemoteAddr, RKey: w.RKey, Imm: w.Imm, PSN: idx, Gen: q.rnr.gen}
	o.hdr = Header{Length: uint64(w.Length), RC: &o.rc}
	hdr := &o.hdr
	if w.Op == VAtomic {
		hdr.RC.Operand, hdr.RC.Compare = w.Word(6), w.Word(7)
	}
	if q.fin == nil {
		q.fin = func() { n.release(q) } // made once per QP, not per WQE
	}
	fin := q.fin
	switch {
	case w.Op == VRead || w.Op == VAtomic:
		n.sendPacketsIn(&o.tx, q.remote, KindRCRequest, msg, hdr, 0, FailOK, 0, n.fromBuffer(nil), fin)
	case w.Flags&WQEInline != 0:
		data := make([]byte, w.Length)
		copy(data, w.Inline[:w.Length])
		n.sendPacketsIn(&o.tx, q.remote, KindRCRequest, msg, hdr, uint64(w.Length), FailOK, 0, n.fromBuffer(data), fin)
	case list != nil:
		n.sendPacketsIn(&o.tx, q.remote, KindRCRequest, msg, hdr, uint64(w.Length), FailOK, 0, n.fromSGL(list), fin)
	case v.ppb != nil:
		n.sendPacketsIn(&o.tx, q.remote, KindRCRequest, msg, hdr, uint64(w.Length), FailOK, 0, n.fromMemoryPPB(w.LocalAddr), fin)
	default:
		n.sendPacketsIn(&o.tx, q.remote, KindRCRequest, msg, hdr, uint64(w.Length), FailOK, 0, n.fromMemory(w.LocalAddr), fin)
	}
}

// checkLocal validates a WQE against the QP and its local key.
func (n *NIC) checkLocal(q *QP, w WQE) WCStatus {
	switch {
	case w.Op == VNop || w.Op >= vOpCount || w.QPN != q.Num || q.state != QPReady:
		return WCLocQPOpErr
	case w.Flags&WQEInline != 0 && (w.Length > InlineMax || w.Op == VRead || w.Op == VAtomic):
		return WCLocLenErr
	case w.Op == VAtomic && (w.Length != 4 && w.Length != 8 || w.Imm > AtomicCSwap):
		return WCLocLenErr
	case w.Flags&WQESGL != 0 && (w.Flags&WQEInline != 0 || w.Op == VAtomic):
		return WCLocQPOpErr
	case w.Flags&(WQEInline|WQESGL) != 0:
		return WCSuccess // inline data needs no key; a list's entries are checked when it is fetched
	}
	need := Access(0)
	if w.Op == VRead || w.Op == VAtomic {
		need = AccessLocalWrite
	}
	if w.Length > 0 && !n.vs().mrs[w.LKey].covers(w.LocalAddr, uint64(w.Length), need) {
		return WCLocProtErr
	}
	return WCSuccess
}

// complete records WQE idx's outcome and retires finished WQEs in order,
// writing a CQE for each signalled one (and for every error). Once a WQE
// failed the QP is in the error state and every later WQE is flushed.
func (n *NIC) complete(q *QP, idx uint64, w WQE, s WCStatus, bytes uint32) {
	if n.spec.VerbsQPInflight > 0 {
		defer n.schedule(q) // retiring opens the QP's window
	}
	if idx == q.retired {
		// In order, the common case: retired at once, as the loop below
		// would retire it right after entering it in the map.
		n.retireWQE(q, w.Flags, w.WRID, w.Op, s, bytes)
		if len(q.finished) == 0 {
			return
		}
	} else {
		q.finished[idx] = wqeDone{w: w, status: s, bytes: bytes}
	}
	for {
		d, ok := q.finished[q.retired]
		if !ok {
			return
		}
		delete(q.finished, q.retired)
		n.retireWQE(q, d.w.Flags, d.w.WRID, d.w.Op, d.status, d.bytes)
	}
}

// retireWQE retires q's oldest outstanding WQE (q.retired) with status s:
// its CQE when it is signalled or failed, the QP's error state.
func (n *NIC) retireWQE(q *QP, flags uint8, wrid uint64, op VerbsOp, s WCStatus, bytes uint32) {
	if q.state == QPError {
		s = WCWRFlushErr // everything after the first error is flushed
	}
	if s != WCSuccess {
		q.state = QPError
		q.stats.Errors++
	}
	if flags&WQESignaled != 0 || s != WCSuccess {
		n.writeCQE(q.cfg.SendCQ, CQE{QPN: q.Num, Index: uint32(q.retired), WRID: wrid, ByteLen: bytes,
			Op: op, Status: s})
	}
	q.retired++
}

// writeCQE posts a CQE to c by a 64 B posted DMA write, ordered after the
// data writes issued before it.
func (n *NIC) writeCQE(c *CQ, e CQE) {
	if c.failed || n.overrun(c) {
		c.dropped++
		return
	}
	k := c.produced
	c.produced++
	e.Owner = OwnerFor(k, c.Entries)
	v := n.vs()
	v.stats.CQEs++
	if e.Status != WCSuccess {
		v.stats.ErrorCQEs++
	}
	var w *cqeWrite
	if l := len(v.cqeFree); l > 0 {
		w, v.cqeFree[l-1] = v.cqeFree[l-1], nil
		v.cqeFree = v.cqeFree[:l-1]
	} else {
		w = &cqeWrite{n: n}
	}
	e.Encode(w.b[:])
	w.a = c.SlotAddr(k)
	n.e.AtH(n.postWrite(CQESize, false, n.hostMem(w.a)), w, 0)
}

// cqeWrite is a CQE's posted write as the event of its landing, reused
// (verbs.cqeFree) once it landed instead of a closure and a copy of the
// CQE's bytes per completion.
type cqeWrite struct {
	n *NIC
	a mem.Addr
	b [CQESize]byte
}

// Handle lands the CQE.
func (w *cqeWrite) Handle(uint64) {
	n := w.n
	n.dmaEnd(1)
	n.mem.Write(w.a, w.b[:]) // (copies; a watcher woken here may post another CQE)
	v := n.vs()
	v.cqeFree = append(v.cqeFree, w)
}

// outKey keys an initiator message in verbs.in (target messages use
// msgKey(src, msg) with src < 1<<15; the top bit marks initiator state).
func outKey(msg uint64) uint64 { return 1<<63 | msg }

// span helper for verbs traces.
func (n *NIC) vspan(what string, start sim.Time) { n.spanOp("verbs ", what, start) }

// overrun reports whether the next CQE of c would overwrite one software
// has not consumed; if so it puts c in the error state, moves every QP
// completing into it to the error state and raises the CQ error event.
func (n *NIC) overrun(c *CQ) bool {
	if c.ci == 0 || c.produced-n.mem.Load64(c.ci) < uint64(c.Entries) {
		return false
	}
	v := n.vs()
	c.failed = true
	v.stats.CQOverruns++
	ev := AsyncEvent{Kind: EventCQError, At: n.e.Now(), CQ: c.Num}
	v.qps.each(func(q *QP) {
		if q.cfg.SendCQ == c || q.cfg.RecvCQ == c {
			q.state = QPError
			ev.QPs = append(ev.QPs, q.Num)
		}
	})
	v.async = append(v.async, ev)
	return true
}
