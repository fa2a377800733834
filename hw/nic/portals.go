package nic

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CT is a Portals counting event: a {success, failure} pair held on the
// NIC. Create it with NIC.NewCT. Its Signal is notified on every change a
// host or GPU can see, so an agent waits with p.WaitUntil(ct.Signal(), ...);
// the cost of a host poll (an MMIO read) is charged by the caller, not
// here.
//
// The NIC's own counts change at once when it counts (a REPLY or a
// target's delivery when the payload's last write is issued): its
// triggered ops compare with them (the DMA reads of an op they fire do not
// pass the NIC's earlier posted writes, PCI Express ordering). What an observer outside the NIC sees (Get, Success,
// Failure, Wait, Signal; the write-back to memory, Mirror) changes no
// earlier than every posted write the NIC issued before the change, as a
// full event does (NIC.postEvent): the write-back is a posted write on the
// same ordered path, and a read of the counter (an MMIO read) completes
// behind the NIC's earlier posted writes (a read completion does not pass
// a posted write). So a count, like an event, is never seen before the
// data it counts, nor before the data of an operation the NIC completed
// before it (Portals 4: a counting event's change means the operation's
// data is in place).
type CT struct {
	n       *NIC
	success uint64 // the NIC's counts (triggered ops)
	failure uint64
	// seenSucc and seenFail are the counts as observers see them; seenGen
	// is the change they show (gen counts the changes), so that a change
	// shown late never overwrites a later one.
	seenSucc, seenFail uint64
	gen, seenGen       uint64
	sig                sim.Signal
	armed              []armedOp // sorted by (threshold, seq)
	mirror             mem.Addr  // where the NIC writes the counts back (0: nowhere)
}

// Mirror makes the NIC write the counting event back to memory at a (16
// bytes: success, then failure) with a posted DMA write at every change,
// as Portals implementations keep counting events where the library
// reads them with an ordinary load (PtlCTGet) instead of a read across
// PCIe. The writes become visible in order.
func (c *CT) Mirror(a mem.Addr) {
	c.mirror = a
	c.writeBack()
}

func (c *CT) writeBack() {
	if c.mirror == 0 || c.n == nil {
		return
	}
	n := c.n
	// As dmaWrite(16, fn) schedules it (the same engine call), through a
	// reused handler instead of two closures: a GHN helper's context
	// counts every acknowledged put, a write-back each.
	vis := n.postWrite(16, false, true)
	w, ok := n.ctwFree.Get()
	if !ok {
		w = &ctWrite{n: n}
	}
	w.ct, w.gen = c, c.gen
	w.a, w.succ, w.fail = c.mirror, c.success, c.failure
	n.e.AtH(vis, w, 0)
}

// ctWrite is a CT write-back in flight: it lands at its visibility, where
// observers see the change (CT.show).
type ctWrite struct {
	n          *NIC
	ct         *CT
	gen        uint64
	a          mem.Addr
	succ, fail uint64
}

// Handle implements sim.Handler: the posted write is visible.
func (w *ctWrite) Handle(uint64) {
	n := w.n
	n.dmaEnd(1)
	n.mem.Store64(w.a, w.succ)
	n.mem.Store64(w.a+8, w.fail)
	w.ct.show(w.gen, w.succ, w.fail)
	w.ct = nil
	n.ctwFree.Put(w)
}

type armedOp struct {
	cmd       Command
	threshold uint64
	seq       uint64
}

// NewCT allocates a counting event at {0, 0}.
func (n *NIC) NewCT() *CT {
	c := &CT{n: n}
	n.cts = append(n.cts, c)
	return c
}

// Get returns the success and failure counts as a host sees them now.
func (c *CT) Get() (success, failure uint64) { return c.seenSucc, c.seenFail }

// Success returns the success count as a host sees it now.
func (c *CT) Success() uint64 { return c.seenSucc }

// Failure returns the failure count as a host sees it now.
func (c *CT) Failure() uint64 { return c.seenFail }

// Signal returns the signal notified whenever the counts observers see
// change (Get).
func (c *CT) Signal() *sim.Signal { return &c.sig }

// Armed returns the number of triggered ops waiting on the CT.
func (c *CT) Armed() int { return len(c.armed) }

// Wait blocks p until success ≥ test or failure > 0 (Portals CTWait),
// costing no NIC time. It returns the counts seen.
func (c *CT) Wait(p *sim.Proc, test uint64) (success, failure uint64) {
	p.WaitUntil(&c.sig, "ct ≥ "+fmt.Sprint(test), func() bool { return c.seenSucc >= test || c.seenFail > 0 })
	return c.seenSucc, c.seenFail
}

// Inc adds v to the success count now, as the NIC does (an event count, a
// CmdCTInc), and fires the triggered ops whose threshold is reached.
func (c *CT) Inc(v uint64) {
	c.success += v
	c.changed()
	if c.n != nil {
		c.n.checkTriggered(c)
	}
}

// Set sets the success count now (CmdCTSet) and fires reached triggered ops.
func (c *CT) Set(v uint64) {
	c.success = v
	c.changed()
	if c.n != nil {
		c.n.checkTriggered(c)
	}
}

// IncFailure adds v to the failure count now. Failures never fire
// triggered ops.
func (c *CT) IncFailure(v uint64) {
	c.failure += v
	c.changed()
}

// changed publishes a change of the NIC's counts to observers: by the
// write-back's landing where the CT is mirrored, else once every posted
// write the NIC issued so far is visible (a read of the counter completes
// behind them).
func (c *CT) changed() {
	c.gen++
	n := c.n
	switch {
	case c.mirror != 0 && n != nil:
		c.writeBack()
	case n == nil || n.upVis <= n.e.Now():
		c.show(c.gen, c.success, c.failure)
	default:
		g, s, f := c.gen, c.success, c.failure
		n.e.At(n.upVis, func() { c.show(g, s, f) })
	}
}

// show makes change g (counts s, f) what observers see, unless they see a
// later one already.
func (c *CT) show(g, s, f uint64) {
	if g <= c.seenGen {
		return
	}
	c.seenGen, c.seenSucc, c.seenFail = g, s, f
	c.sig.Notify()
}

func (c *CT) count(bytes bool, mlength uint64, fail FailType) {
	if c == nil {
		return
	}
	switch {
	case fail != FailOK:
		c.IncFailure(1)
	case bytes:
		c.Inc(mlength)
	default:
		c.Inc(1)
	}
}

// EQ is a Portals event queue: a ring of full events in host memory that
// the NIC fills by posted DMA writes of Spec.EventSize bytes. Create it with
// NIC.NewEQ. When the ring is full a new event is lost (counted in
// Dropped and Stats.EQDrops); on a flow-controlled PT the NIC instead
// disables the PT before delivering a message it could not report (§2.6).
type EQ struct {
	size     int
	ring     mem.Addr // optional ring address, touched on each event (pollers wake)
	events   []Event  // FIFO of visible events
	head     int
	reserved int // events in flight (DMA write issued, not visible yet)
	dropped  uint64
	sig      sim.Signal
	written  uint64
	mem      *mem.Memory
	evSize   int
}

// NewEQ allocates an event queue of size events (≤ 0: Spec.EQSize). ring,
// if non-zero, is the address of the ring in host memory (size ×
// EventSize bytes); its slot is touched when an event lands so memory
// watchers wake. Events themselves are read with Get.
func (n *NIC) NewEQ(size int, ring mem.Addr) *EQ {
	if size <= 0 {
		size = n.spec.EQSize
	}
	q := &EQ{size: size, ring: ring, mem: n.mem, evSize: int(n.spec.EventSize)}
	n.eqs = append(n.eqs, q)
	return q
}

// Get pops the oldest visible event (Portals EQGet); false when empty.
func (q *EQ) Get() (Event, bool) {
	if q.head == len(q.events) {
		return Event{}, false
	}
	ev := q.events[q.head]
	q.events[q.head] = Event{}
	q.head++
	if q.head == len(q.events) {
		q.events, q.head = q.events[:0], 0
	}
	return ev, true
}

// Wait blocks p until an event is visible and pops it (Portals EQWait).
func (q *EQ) Wait(p *sim.Proc) Event {
	p.WaitUntil(&q.sig, "eq event", func() bool { return q.Len() > 0 })
	ev, _ := q.Get()
	return ev
}

// Len returns the number of visible, unconsumed events.
func (q *EQ) Len() int { return len(q.events) - q.head }

// Size returns the capacity.
func (q *EQ) Size() int { return q.size }

// Dropped returns the number of events lost to a full queue.
func (q *EQ) Dropped() uint64 { return q.dropped }

// Signal returns the signal notified when an event becomes visible.
func (q *EQ) Signal() *sim.Signal { return &q.sig }

func (q *EQ) full() bool { return q.Len()+q.reserved >= q.size }

// push makes ev visible now; it reports false when the ring was full.
func (q *EQ) push(ev Event) bool {
	if q.Len() >= q.size {
		q.dropped++
		return false
	}
	q.events = append(q.events, ev)
	if q.ring != 0 && q.mem != nil {
		q.mem.Touch(q.ring+mem.Addr((q.written%uint64(q.size))*uint64(q.evSize)), q.evSize)
	}
	q.written++
	q.sig.Notify()
	return true
}

// postEvent writes ev to q by a posted DMA write issued now. The write
// follows every posted write the NIC issued before it on the same ordered
// path (the PCI Express Base Specification's ordering rules do not let a
// posted write pass an earlier one), so it is visible (and time-stamped)
// no earlier than they are, and the writes after it follow it in turn: a
// completion issued right behind the payload it reports is seen after the
// payload, and no event passes data the NIC wrote before it.
func (n *NIC) postEvent(q *EQ, ev Event) {
	if q != nil {
		n.postEventTo(q, ev)
	}
}

// postEventTo is postEvent to a queue. (Apart, so that the event, which
// the write's closure keeps, is moved to the heap only when there is a
// queue: most puts post to none.)
func (n *NIC) postEventTo(q *EQ, ev Event) {
	_, vis := n.link.PostedWrite(pcieUp, n.e.Now(), n.spec.EventSize)
	vis = max(vis, n.upVis)
	n.upVis = vis
	n.landEvent(q, ev, vis)
}

// landEvent reserves ev's slot in q now and pushes it, time-stamped, when
// its write is visible at vis (a full queue then drops it, as a real EQ
// overflows).
func (n *NIC) landEvent(q *EQ, ev Event, vis sim.Time) {
	q.reserved++
	n.dmaBegin(1)
	n.e.At(vis, func() {
		n.dmaEnd(1)
		q.reserved--
		ev.Time = n.e.Now()
		if !q.push(ev) {
			n.stats.EQDrops++
		}
	})
}

// pt is one portal table entry.
type pt struct {
	eq      *EQ
	flowCtl bool
	enabled bool
	prio    []*MEntry
	over    []*MEntry
	unexp   []*unexpRec
}

// unexpRec is a header record on a PT's unexpected list (§2.2).
type unexpRec struct {
	src       int
	hdr       *Header
	mlength   uint64
	start     mem.Addr // where the data went in the overflow buffer
	done      bool     // the message's completion packet has landed
	pendingME *MEntry  // matched by an append before completion
}

// PTAlloc allocates a portal table entry reporting to eq (may be nil) and
// returns its index (0, 1, … in allocation order). With flowCtl the PT is
// disabled when a message cannot be delivered (§2.6).
func (n *NIC) PTAlloc(eq *EQ, flowCtl bool) int {
	n.pts = append(n.pts, &pt{eq: eq, flowCtl: flowCtl, enabled: true})
	return len(n.pts) - 1
}

// PTEnable re-enables a PT after flow control disabled it.
func (n *NIC) PTEnable(idx int) { n.pt(idx).enabled = true }

// PTDisable disables a PT: later messages are dropped with PT_DISABLED.
func (n *NIC) PTDisable(idx int) { n.pt(idx).enabled = false }

// PTEnabled reports whether a PT accepts messages.
func (n *NIC) PTEnabled(idx int) bool { return n.pt(idx).enabled }

// Unexpected returns the number of header records on a PT's unexpected list.
func (n *NIC) Unexpected(idx int) int { return len(n.pt(idx).unexp) }

func (n *NIC) pt(idx int) *pt {
	if idx < 0 || idx >= len(n.pts) {
		panic(fmt.Sprintf("%s: portal table index %d not allocated (have %d)", n.name, idx, len(n.pts)))
	}
	return n.pts[idx]
}

// MEAppend appends me to a PT list and returns its handle. It takes effect
// immediately (the host software and MMIO cost of an append is the
// caller's to charge). Appending to the Priority list first searches the
// PT's unexpected list in arrival order: each matching header yields a
// PUT_OVERFLOW (GET_OVERFLOW, ATOMIC_OVERFLOW) event whose Start is where
// the data sits in the overflow buffer, counted on me.CT when
// MEEventCTOverflow is set; a USE_ONCE entry consumes only the first match
// and is then never linked (no AUTO_UNLINK event). If the matched message is
// still arriving, the event is posted when its completion packet lands.
func (n *NIC) MEAppend(idx int, me ME, list List) *MEntry {
	p := n.pt(idx)
	n.meSeq++
	m := &MEntry{me: me, pt: idx, list: list, seq: n.meSeq, linked: true}
	if list == Priority {
		for i := 0; i < len(p.unexp); {
			r := p.unexp[i]
			if !n.admits(m, r.src, r.hdr) {
				i++
				continue
			}
			p.unexp = append(p.unexp[:i], p.unexp[i+1:]...)
			if r.done {
				n.overflowEvent(m, r)
			} else {
				r.pendingME = m
			}
			if me.Options&MEUseOnce != 0 {
				m.linked = false
				return m
			}
		}
		p.prio = append(p.prio, m)
	} else {
		p.over = append(p.over, m)
	}
	return m
}

// overflowEvent posts the *_OVERFLOW event of an appended ME that matched
// unexpected record r.
func (n *NIC) overflowEvent(m *MEntry, r *unexpRec) {
	typ := EventPutOverflow
	switch r.hdr.Op {
	case CmdGet:
		typ = EventGetOverflow
	case CmdAtomic, CmdFetchAtomic, CmdSwap:
		typ = EventAtomicOverflow
	}
	o := m.me.Options
	if o&(MEEventDisable|MEEventSuccessDisable) == 0 {
		n.postEvent(n.pts[m.pt].eq, n.targetEvent(typ, m, r.src, r.hdr, r.mlength, r.start, FailOK))
	}
	if o&MEEventCTOverflow != 0 {
		m.me.CT.count(o&MEEventCTBytes != 0, r.mlength, FailOK)
	}
}

func (n *NIC) targetEvent(typ EventType, m *MEntry, src int, h *Header, mlength uint64, start mem.Addr, fail FailType) Event {
	ev := Event{Type: typ, Initiator: src, PT: h.PT, MatchBits: h.MatchBits, RLength: h.Length, MLength: mlength,
		RemoteOffset: h.RemoteOffset, Start: start, HdrData: h.HdrData, NIFail: fail,
		AtomicOp: h.AtomicOp, AtomicType: h.AtomicType}
	if m != nil {
		ev.UserPtr = m.me.UserPtr
	}
	return ev
}

// MEUnlink removes an entry from its list; it reports false when the entry
// was already unlinked. A message already bound to it still completes.
// No event is posted.
func (n *NIC) MEUnlink(m *MEntry) bool {
	if !m.linked {
		return false
	}
	n.unlink(m)
	return true
}

func (n *NIC) unlink(m *MEntry) {
	m.linked = false
	p := n.pts[m.pt]
	l := &p.prio
	if m.list == Overflow {
		l = &p.over
	}
	for i, x := range *l {
		if x == m {
			*l = append((*l)[:i], (*l)[i+1:]...)
			return
		}
	}
	panic(fmt.Sprintf("%s: ME %d on PT %d marked linked but not on its list", n.name, m.seq, m.pt))
}

// admits reports whether entry m matches a header from src (§2.2): match
// bits under the ignore mask, source filter, op permission, and for
// NO_TRUNCATE that the message fits at the entry's offset.
func (n *NIC) admits(m *MEntry, src int, h *Header) bool {
	me := &m.me
	if (h.MatchBits^me.MatchBits)&^me.IgnoreBits != 0 {
		return false
	}
	if me.MatchID != AnyID && me.MatchID != src {
		return false
	}
	switch h.Op {
	case CmdPut, CmdAtomic:
		if me.Options&MEOpPut == 0 {
			return false
		}
	case CmdGet:
		if me.Options&MEOpGet == 0 {
			return false
		}
	case CmdFetchAtomic, CmdSwap:
		if me.Options&(MEOpPut|MEOpGet) != MEOpPut|MEOpGet {
			return false
		}
	}
	if me.Options&MENoTruncate != 0 {
		off := h.RemoteOffset
		if me.Options&MEManageLocal != 0 {
			off = m.offset
		}
		if off > me.Length || h.Length > me.Length-off {
			return false
		}
	}
	return true
}
