package nic

// Receiver-not-ready (RNR) NAKs and retries (InfiniBand RC). A send or a
// write with immediate that finds no receive WQE posted is not an error
// at the responder: it answers with an RNR NAK, stops accepting the QP's
// later messages, and waits for the retransmission. The requester, on the
// NAK, waits nic.verbs_rnr_timer and goes back to the NAKed WQE: it
// abandons the WQEs it sent after it (the responder drops them) and
// re-executes them in order. After nic.verbs_rnr_retry retries (7: no
// limit) the WQE completes with WCRNRRetryExc and the QP enters the
// error state, flushing the rest.
//
// Ordering at the responder: a QP's messages are taken in order, so while
// one waits for its receive WQE the QP's later messages are held, and
// released in order once it has one (or dropped with it on an RNR NAK).
// Messages carry their WQE index (PSN) and the requester's go-back
// generation; a message of an older generation than the retransmission
// is a stale copy and is dropped.

// rnrState is a QP's RNR bookkeeping at both ends.
type rnrState struct {
	gen     uint64 // requester: go-back generation (messages carry it)
	tries   int    // requester: retries of WQE triedAt
	triedAt uint64

	wait   bool      // responder: an RNR NAK is out; only its retransmission is taken
	psn    uint64    // responder: the NAKed message's PSN
	minGen uint64    // responder: messages of older generations are stale
	busy   *rcIn     // responder: the message waiting for its receive WQE
	held   []*Packet // responder: first packets of the QP's later messages
}

// rcAdmit decides what happens to the first packet of a new message for
// QP q at the responder: taken now, held behind a message waiting for its
// receive WQE, or dropped (a stale copy, or sent after an RNR NAK).
func (n *NIC) rcAdmit(q *QP, pk *Packet) (take bool) {
	if q == nil {
		return true
	}
	h, r := pk.Hdr.RC, &q.rnr
	switch {
	case h.Gen < r.minGen || r.wait && h.PSN != r.psn:
		n.rcDrop(pk)
		return false
	case r.busy != nil:
		r.held = append(r.held, pk)
		return false
	}
	r.wait = false
	return true
}

// rcDrop discards a message whose first packet is pk, and its other
// packets as they arrive.
func (n *NIC) rcDrop(pk *Packet) {
	v := n.vs()
	key := msgKey(pk.Src, pk.Msg)
	rest := n.packets(pk.Hdr.Length) - 1
	for _, e := range v.early[key] {
		n.fab.PutBuf(e.Data)
		rest--
	}
	delete(v.early, key)
	n.fab.PutBuf(pk.Data)
	if rest > 0 {
		if v.dropped == nil {
			v.dropped = map[uint64]int{}
		}
		v.dropped[key] = rest
	}
}

// rcDropped consumes pk if it belongs to a dropped message.
func (n *NIC) rcDropped(pk *Packet) bool {
	v := n.vs()
	key := msgKey(pk.Src, pk.Msg)
	rest, ok := v.dropped[key]
	if !ok {
		return false
	}
	n.fab.PutBuf(pk.Data)
	if rest--; rest == 0 {
		delete(v.dropped, key)
	} else {
		v.dropped[key] = rest
	}
	return true
}

// rcRecvResolved ends m's wait for a receive WQE at the responder: the
// held messages are taken in order, or, on an RNR NAK, dropped.
func (n *NIC) rcRecvResolved(m *rcIn) {
	q := m.qp
	if q == nil || q.rnr.busy != m {
		return
	}
	r := &q.rnr
	r.busy = nil
	held := r.held
	r.held = nil
	if m.rnr {
		r.wait, r.psn, r.minGen = true, m.hdr.PSN, m.hdr.Gen+1
		for _, pk := range held {
			n.rcDrop(pk)
		}
		return
	}
	for _, pk := range held {
		n.rcDeliver(pk)
	}
}

// rnrNak handles an RNR NAK for the initiator message m: a retry after the
// RNR timer, or, with the retries used up, the WQE's failure.
func (n *NIC) rnrNak(m *rcIn) {
	q, v := m.qp, n.vs()
	v.stats.RNRNaks++
	r := &q.rnr
	if r.triedAt != m.idx {
		r.triedAt, r.tries = m.idx, 0
	}
	r.tries++
	if lim := n.spec.VerbsRNRRetry; lim == 7 || r.tries <= lim {
		v.stats.RNRRetries++
		n.e.After(n.spec.VerbsRNRTimer, func() { n.goBack(q, m.idx) })
		return
	}
	n.complete(q, m.idx, m.w, WCRNRRetryExc, 0) // the QP enters the error state: the WQEs gone back to are flushed
	n.goBack(q, m.idx+1)
}

// goBack rewinds q's requester to WQE p: the messages of WQEs from p on
// that are in flight are abandoned (the responder drops them) and the
// WQEs are executed again, in a new generation.
func (n *NIC) goBack(q *QP, p uint64) {
	v := n.vs()
	q.rnr.gen++
	for k, m := range v.in {
		if k&(1<<63) != 0 && m.qp == q && m.idx >= p {
			v.inDel(k)
		}
	}
	for idx := range q.finished {
		if idx >= p {
			delete(q.finished, idx)
		}
	}
	q.next = min(q.next, p)
	n.schedule(q)
}
