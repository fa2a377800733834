package nic

import "github.com/gpunetsim/gpunetsim/sim"

// The XTQ hold buffer (the dissertation's XTQ chapter step 4): the NIC keeps the 64 B command
// copy of every task from the moment its header is parsed until the packet
// is written into the user-mode queue (or the task fails). It has
// nic.xtq_hold_depth slots (8 in the documents). When they are all taken,
// a new task's header is not parsed: it and the rest of its message wait
// at the NIC's ingress, so nothing is lost or overwritten, and the wait
// ends when an enqueue frees a slot.
//
// What waits behind a waiting task header: every later task header (slots
// are granted in arrival order) and every later message from the same
// source (Portals keeps one initiator's messages in order). Packets of
// messages already accepted, messages from other sources, and responses
// (acks, replies: their own virtual channel) keep flowing; a single
// in-order queue would deadlock when the tasks holding the slots still
// have packets behind the waiting header. Link credits, which on a real
// fabric would eventually stop the sender, are not modelled: the waiting
// packets sit at the ingress, unbounded.

// xtqIngress is the ingress state of the hold buffer.
type xtqIngress struct {
	holding  int                 // slots taken
	backlog  []*Packet           // packets waiting at the ingress, in arrival order
	waitMsg  map[uint64]sim.Time // messages whose header waits, since when
	waitSrc  map[int]int         // waiting headers per source
	tasks    int                 // waiting task headers
	draining bool
	again    bool // a slot freed while draining
}

// isTaskHeader reports whether pk is the header packet of an XTQ message.
func isTaskHeader(pk *Packet) bool {
	return pk.Kind == KindRequest && pk.Index == 0 && pk.Hdr != nil && pk.Hdr.Task != nil && pk.Hdr.Task.Xtq
}

// xtqWaits queues pk at the ingress when it must wait for a hold slot, or
// behind a packet that does; it reports whether it did.
func (n *NIC) xtqWaits(pk *Packet) bool {
	x := &n.xin
	if pk.Kind != KindRequest {
		return false // responses have their own virtual channel
	}
	key := msgKey(pk.Src, pk.Msg)
	_, waiting := x.waitMsg[key]
	header, task := pk.Index == 0, isTaskHeader(pk)
	full := x.holding >= n.spec.XtqHoldDepth
	switch {
	case waiting: // a later packet of a message whose header waits
	case header && x.waitSrc[pk.Src] > 0: // behind its source's waiting message
	case task && (x.tasks > 0 || full): // slots go to task headers in arrival order
	default:
		return false
	}
	x.backlog = append(x.backlog, pk)
	n.xtq.stats.MaxBacklog = max(n.xtq.stats.MaxBacklog, len(x.backlog))
	if header && !waiting {
		if x.waitMsg == nil {
			x.waitMsg, x.waitSrc = map[uint64]sim.Time{}, map[int]int{}
		}
		x.waitMsg[key] = n.e.Now()
		x.waitSrc[pk.Src]++
		if task {
			x.tasks++
		}
	}
	return true
}

// xtqHold gives task message m a hold slot (the ingress let its header
// through only if one was free).
func (n *NIC) xtqHold(m *inMsg) {
	x := &n.xin
	m.hold = true
	x.holding++
	n.xtq.stats.MaxHeld = max(n.xtq.stats.MaxHeld, x.holding)
}

// xtqRelease frees m's hold slot and lets waiting packets in.
func (n *NIC) xtqRelease(m *inMsg) {
	if !m.hold {
		return
	}
	m.hold = false
	n.xin.holding--
	n.xtqDrain()
}

// xtqDrain offers the waiting packets to the ingress again, in arrival
// order, until a pass lets nothing new through.
func (n *NIC) xtqDrain() {
	x := &n.xin
	if x.draining {
		x.again = true
		return
	}
	x.draining = true
	defer func() { x.draining = false }()
	for again := true; again; {
		x.again = false
		old, since := x.backlog, x.waitMsg
		x.backlog, x.waitMsg, x.waitSrc, x.tasks = nil, nil, nil, 0
		for _, pk := range old {
			if n.xtqWaits(pk) {
				if t, ok := since[msgKey(pk.Src, pk.Msg)]; ok && pk.Index == 0 {
					x.waitMsg[msgKey(pk.Src, pk.Msg)] = t // keep the first wait's start
				}
				continue
			}
			if t, ok := since[msgKey(pk.Src, pk.Msg)]; ok && pk.Index == 0 {
				n.xtq.stats.IngressWaits++
				n.xtq.stats.IngressWaitTime += n.e.Now() - t
			}
			n.ingress(pk)
		}
		again = x.again
	}
}
