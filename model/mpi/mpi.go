package mpi

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/peer"
	"github.com/gpunetsim/gpunetsim/model/cost"
)

// Wildcards for Irecv.
const (
	AnySource = -1
	AnyTag    = -1
)

const (
	ctxMPI   = 1
	rndvFlag = uint64(1) << 63
	// longFlag marks the header data of a long-eager message (the length
	// and cookie as for rendezvous); longBit is the match bit that steers
	// an unexpected long message to the header-only overflow entry instead
	// of a short receive block (Open MPI's MTL_PORTALS4_LONG_MSG).
	longFlag   = uint64(1) << 62
	longBit    = uint64(1) << 63
	lenBits    = 40
	cookieMask = (uint64(1) << 22) - 1 // header data bits 40–61, below the two flags
	srcMask    = (uint64(1) << 24) - 1
	tagMask    = (uint64(1) << 24) - 1
)

func matchBits(src, tag int) uint64 {
	return uint64(ctxMPI)<<48 | (uint64(src)&srcMask)<<24 | uint64(tag)&tagMask
}

// Comm is one rank's MPI endpoint, driven by one host thread.
type Comm struct {
	t        *cpu.Thread
	nic      *nic.NIC
	mem      *mem.Memory
	spec     Spec
	sw       cost.Spec
	rank     int
	size     int
	eq       *nic.EQ
	ptMPI    int
	ptRndv   int
	cookie   uint64
	overflow int // live overflow buffers
	// longME is the header-only overflow entry for long-eager messages.
	longME *nic.MEntry
	stats  Stats
	call   call // the step-form call in progress (steps.go)

	// The intra-node copy path (ipc.go); nil without it.
	peer *peer.Port
	ipc  *IPC
	// The intra-node shared-memory path (shm.go); nil without it.
	shm      *IPC
	shmCell  mem.Addr
	finished int // requests completed outside the event queue, not yet seen by progress
}

// Stats counts protocol activity of one rank.
type Stats struct {
	EagerSends, RndvSends, Unexpected, Events, Polls uint64
	// LongSends counts long-eager sends; LongGets those whose receive was
	// not posted when the data arrived, so the receiver got it.
	LongSends, LongGets uint64
	IPCCopies           uint64 // rendezvous receives moved by a copy engine (ipc.go)
	SHMCopies           uint64 // rendezvous receives copied from the sender's buffer by the core (shm.go)
}

// Request is a nonblocking send or receive.
type Request struct {
	send   bool
	done   bool
	long   bool // a long-eager send: done on the ack, or on the get
	buf    mem.Addr
	length uint64
	got    uint64 // bytes received
	src    int    // matched source (receives)
	entry  *nic.MEntry
	md     nic.MD // what the NIC sends from (a send) or gets into (a rendezvous receive)
}

// Done reports whether the request completed.
func (r *Request) Done() bool { return r.done }

// Len returns the received length of a completed receive.
func (r *Request) Len() uint64 { return r.got }

// Source returns the matched source of a completed receive.
func (r *Request) Source() int { return r.src }

type overflowTag struct{}

// Init sets up rank's MPI state on its NIC: the MPI and rendezvous portal
// tables, the event queue, and the overflow buffers. The node IDs of the
// fabric are the ranks.
func Init(t *cpu.Thread, n *nic.NIC, rank, size int, spec Spec, sw cost.Spec) (*Comm, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if rank < 0 || rank >= size || size > int(srcMask) {
		return nil, fmt.Errorf("mpi: rank %d of %d: out of range", rank, size)
	}
	m := t.CPU().Mem()
	ring := m.AllocData(mem.Host, uint64(n.Spec().EQSize)*uint64(n.Spec().EventSize), "mpi.eq")
	c := &Comm{t: t, nic: n, mem: m, spec: spec, sw: sw, rank: rank, size: size}
	c.eq = n.NewEQ(n.Spec().EQSize, ring)
	c.ptMPI = n.PTAlloc(c.eq, false)
	c.ptRndv = n.PTAlloc(c.eq, false)
	for range spec.OverflowBufs {
		c.appendOverflow()
	}
	if spec.LongProtocol == LongEager {
		// A long message that finds no posted receive is truncated to
		// nothing here: the unexpected list keeps its header, and the
		// receive gets the data from the sender's exposed buffer.
		c.longME = n.MEAppend(c.ptMPI, nic.ME{Length: 0, MatchID: nic.AnyID, MatchBits: longBit, IgnoreBits: ^longBit,
			Options: nic.MEOpPut, UserPtr: overflowTag{}}, nic.Overflow)
	}
	return c, nil
}

// Rank returns the caller's rank.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.size }

// Stats returns protocol counters.
func (c *Comm) Stats() Stats { return c.stats }

func (c *Comm) appendOverflow() {
	size := uint64(c.spec.OverflowBufLen)
	buf := c.mem.Alloc(mem.Host, size, "mpi.overflow")
	// Short messages only (the long bit clear).
	c.nic.MEAppend(c.ptMPI, nic.ME{Start: buf, Length: size, MatchID: nic.AnyID, IgnoreBits: ^longBit,
		Options: nic.MEOpPut | nic.MEManageLocal, MinFree: uint64(c.spec.EagerMax), UserPtr: overflowTag{}}, nic.Overflow)
	c.overflow++
}

func (c *Comm) checkPeer(peer int, wildcard bool) error {
	if (wildcard && peer == AnySource) || (peer >= 0 && peer < c.size) {
		return nil
	}
	return fmt.Errorf("mpi: rank %d out of range [0, %d)", peer, c.size)
}

// Isend starts sending n bytes at buf to rank dst with tag.
func (c *Comm) Isend(buf mem.Addr, n uint64, dst, tag int) (*Request, error) {
	if err := c.checkSend(dst, tag); err != nil {
		return nil, err
	}
	r := &Request{send: true, buf: buf, length: n}
	defer c.t.Span("MPI_Isend", c.t.Now())
	c.t.Instr(c.sw.MPIMatch)
	cmd := c.sendCommand(r, dst, tag)
	c.t.Instr(c.sw.PortalsPost)
	if c.shmReaches(dst) {
		if cmd.Length > 0 {
			c.t.ComputeOn(1, c.shmCopyIn(r, cmd.Length)...)
		}
		c.shmDeliver(r, cmd, dst)
		return r, nil
	}
	c.nic.Doorbell(c.t.Proc, cmd)
	return r, nil
}

// checkSend checks Isend's destination and tag.
func (c *Comm) checkSend(dst, tag int) error {
	if err := c.checkPeer(dst, false); err != nil {
		return err
	}
	if tag < 0 || uint64(tag) > tagMask {
		return fmt.Errorf("mpi: tag %d out of range [0, %d]", tag, tagMask)
	}
	return nil
}

// sendCommand makes send r's put: the whole message when short; above
// mpi.eager_max under the long-eager protocol the whole message with an ack
// request, r's buffer exposed for a get in case the receive is not posted;
// under rendezvous the zero-byte header, r's buffer exposed for the
// receiver's get.
func (c *Comm) sendCommand(r *Request, dst, tag int) nic.Command {
	buf, n := r.buf, r.length
	r.md = nic.MD{Start: buf, Length: n, EQ: c.eq}
	cmd := nic.Command{Op: nic.CmdPut, MD: &r.md, Length: n, Target: dst, PT: c.ptMPI,
		MatchBits: matchBits(c.rank, tag), Ack: nic.NoAckReq, UserPtr: r, HdrData: n}
	if n <= uint64(c.spec.EagerMax) {
		c.stats.EagerSends++
		return cmd
	}
	c.cookie = (c.cookie + 1) & cookieMask
	bits := uint64(c.rank)<<32 | c.cookie
	r.entry = c.nic.MEAppend(c.ptRndv, nic.ME{Start: buf, Length: n, MatchID: dst, MatchBits: bits,
		Options: nic.MEOpGet | nic.MEUseOnce, UserPtr: r}, nic.Priority)
	if c.spec.LongProtocol == LongEager && !c.ipcReaches(r, dst) && !c.shmReaches(dst) {
		// Open MPI's ompi_mtl_portals4_long_isend: one PtlPut of the whole
		// message with PTL_ACK_REQ; the SEND event is not what completes it.
		cmd.MatchBits |= longBit
		cmd.Ack = nic.AckReq
		cmd.HdrData = longFlag | c.cookie<<lenBits | n
		r.md.Options = nic.MDEventSendDisable
		r.long = true
		c.stats.LongSends++
		return cmd
	}
	cmd.Length = 0
	cmd.HdrData = rndvFlag | c.cookie<<lenBits | n
	r.md = nic.MD{Start: buf, Length: 0, Options: nic.MDEventSendDisable}
	c.stats.RndvSends++
	c.exposeIPC(r, dst)
	return cmd
}

// acked takes in the ack of long-eager send r: the receiver took all of
// it (its receive was posted), so the exposed buffer goes and the send is
// done; otherwise the receiver will get the data and the GET event
// completes the send (Open MPI's ompi_mtl_portals4_isend_callback).
func (c *Comm) acked(r *Request, ev nic.Event) {
	if !r.long || r.done {
		return
	}
	if ev.MLength >= r.length {
		c.nic.MEUnlink(r.entry)
		r.done = true
	}
}

// Irecv starts receiving up to n bytes into buf from src (or AnySource) with
// tag (or AnyTag).
func (c *Comm) Irecv(buf mem.Addr, n uint64, src, tag int) (*Request, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return nil, err
	}
	r := &Request{buf: buf, length: n}
	defer c.t.Span("MPI_Irecv", c.t.Now())
	c.t.Instr(c.sw.MPIMatch)
	me := c.recvME(r, src, tag)
	c.t.Instr(c.sw.PortalsPost)
	r.entry = c.nic.MEAppend(c.ptMPI, me, nic.Priority)
	return r, nil
}

// checkRecv checks Irecv's source and tag (wildcards allowed).
func (c *Comm) checkRecv(src, tag int) error {
	if err := c.checkPeer(src, true); err != nil {
		return err
	}
	if tag != AnyTag && (tag < 0 || uint64(tag) > tagMask) {
		return fmt.Errorf("mpi: tag %d out of range [0, %d]", tag, tagMask)
	}
	return nil
}

// recvME makes receive r's match entry for src and tag (wildcards become
// ignore bits).
func (c *Comm) recvME(r *Request, src, tag int) nic.ME {
	// A receive takes short and long messages alike.
	me := nic.ME{Start: r.buf, Length: r.length, MatchID: nic.AnyID, IgnoreBits: longBit, Options: nic.MEOpPut | nic.MEUseOnce, UserPtr: r}
	s, tg := src, tag
	if src == AnySource {
		s = 0
		me.IgnoreBits |= srcMask << 24
	} else {
		me.MatchID = src
	}
	if tag == AnyTag {
		tg = 0
		me.IgnoreBits |= tagMask
	}
	me.MatchBits = matchBits(s, tg)
	return me
}

// Wait progresses until r completes.
func (c *Comm) Wait(r *Request) { c.Waitall(r) }

// Waitall progresses until every request completes.
func (c *Comm) Waitall(rs ...*Request) {
	defer c.t.Span("MPI_Wait", c.t.Now())
	for {
		pending := false
		for _, r := range rs {
			pending = pending || !r.done
		}
		if !pending {
			return
		}
		c.progressOne()
	}
}

// Test progresses once without blocking and reports whether r completed.
func (c *Comm) Test(r *Request) bool {
	if ev, ok := c.eq.Get(); ok {
		c.handle(ev)
	} else {
		c.stats.Polls++
		c.t.Instr(c.sw.MPIPoll)
	}
	return r.done
}

// eqWaitLabel names a wait on the event queue; once the queue has lost
// events to overflow (a Portals EQ without flow control drops them), it
// says so, since a run that then deadlocks waits for a lost event.
func (c *Comm) eqWaitLabel() string {
	if d := c.eq.Dropped(); d > 0 {
		return fmt.Sprintf("MPI event queue, which lost %d events to overflow: raise nic.eq_size (%d)", d, c.eq.Size())
	}
	return "MPI event queue"
}

// progressOne handles one event, polling the event queue until one arrives.
func (c *Comm) progressOne() {
	ev, ok := c.eq.Get()
	for !ok {
		if c.takeFinished() {
			return
		}
		c.stats.Polls++
		c.t.Instr(c.sw.MPIPoll)
		switch {
		case c.eq.Len() > 0 || c.finished > 0:
			// The event landed (or a copy completed) while the poll ran:
			// no wait, or the wake-up would be lost.
		case c.sw.MPIWait == cost.WaitBlock:
			c.t.Block(c.eq.Signal(), c.eqWaitLabel())
		default:
			c.t.Wait(c.eq.Signal(), c.eqWaitLabel())
		}
		c.t.Sleep(c.t.CPU().Spec().MissLatency()) // the poll that sees the new event misses
		ev, ok = c.eq.Get()
	}
	c.handle(ev)
}

func (c *Comm) handle(ev nic.Event) {
	c.stats.Events++
	c.t.Instr(c.sw.EventDispatch)
	r, _ := ev.UserPtr.(*Request)
	switch ev.Type {
	case nic.EventSend:
		if r != nil && r.send {
			r.done = true
		}
	case nic.EventAck:
		if r != nil && r.send {
			c.acked(r, ev)
		}
	case nic.EventGet:
		if r != nil && r.send {
			r.done = true
		}
	case nic.EventReply:
		if r != nil {
			r.done = true
		}
	case nic.EventPut:
		if r != nil {
			c.matched(r, ev, false)
		}
	case nic.EventPutOverflow:
		if r != nil {
			c.matched(r, ev, true)
		}
	case nic.EventAutoUnlink:
		if _, ok := ev.UserPtr.(overflowTag); ok {
			c.overflow--
			c.appendOverflow()
		}
	}
}

// matched completes a receive whose header has arrived: eager data is in
// place (or in an overflow buffer, then copied); a rendezvous header starts
// the Get.
func (c *Comm) matched(r *Request, ev nic.Event, unexpected bool) {
	if c.matchHeader(r, ev, unexpected) {
		c.t.Instr(c.sw.PortalsPost) // the Get's post, or the copy's submission
		if c.copyIPC(r, ev) {
			return
		}
		if s := c.shmSource(ev); s != nil {
			c.shmCopy(r, s)
			c.t.ComputeOn(1, c.shmCopyAccess(r)...)
			c.shmDone(r, s)
			return
		}
		c.nic.Doorbell(c.t.Proc, c.getCommand(r, ev))
		return
	}
	if unexpected && ev.MLength > 0 && ev.HdrData&longFlag == 0 {
		c.copyUnexpected(r, ev)
		c.t.ComputeOn(1, c.copyAccess(r, ev)...)
	} else if ev.MLength > 0 && c.local(ev) {
		c.t.ComputeOn(1, c.copyOutAccess(r, ev.MLength)...)
	}
	r.done = true
}

// matchHeader takes in receive r's matched header: its source, the
// message's length in r.got (a rendezvous or long header's from its header
// data), checked against r's buffer. It reports whether the receiver must
// get the data (getCommand): a rendezvous header, or a long-eager message
// that arrived before its receive, of which only the header was kept.
func (c *Comm) matchHeader(r *Request, ev nic.Event, unexpected bool) (get bool) {
	r.src = ev.Initiator
	if unexpected {
		c.stats.Unexpected++
	}
	n, full := ev.MLength, ev.RLength
	switch {
	case ev.HdrData&rndvFlag != 0:
		n = ev.HdrData & (uint64(1)<<lenBits - 1)
		full, get = n, true
	case ev.HdrData&longFlag != 0:
		full = ev.HdrData & (uint64(1)<<lenBits - 1)
		if ev.MLength < full {
			n, get = full, true
			c.stats.LongGets++
		}
	}
	if full > r.length {
		panic(fmt.Sprintf("mpi: rank %d: message of %d bytes truncated to %d", c.rank, full, r.length))
	}
	r.got = n
	return get
}

// getCommand is the Get of a rendezvous message's r.got bytes from the
// sender of header ev into r's buffer.
func (c *Comm) getCommand(r *Request, ev nic.Event) nic.Command {
	cookie := (ev.HdrData >> lenBits) & cookieMask
	r.md = nic.MD{Start: r.buf, Length: r.got, EQ: c.eq}
	return nic.Command{Op: nic.CmdGet, MD: &r.md, Length: r.got, Target: ev.Initiator, PT: c.ptRndv,
		MatchBits: uint64(ev.Initiator)<<32 | cookie, UserPtr: r}
}

// copyAccess is the copy of an unexpected message out of its overflow
// buffer into r's, as the ranges the host streams.
func (c *Comm) copyAccess(r *Request, ev nic.Event) []cpu.Access {
	return []cpu.Access{{Addr: ev.Start, Len: ev.MLength}, {Addr: r.buf, Len: ev.MLength, Write: true}}
}

// copyUnexpected copies an unexpected eager message from the overflow
// buffer it landed in to r's buffer (the caller charges the copy).
func (c *Comm) copyUnexpected(r *Request, ev nic.Event) {
	src := c.mem.Bytes(ev.Start, int(ev.MLength))
	if dst := c.mem.Bytes(r.buf, int(ev.MLength)); dst != nil && src != nil {
		copy(dst, src)
	}
	c.mem.Touch(r.buf, int(ev.MLength))
}

// ScheduleStep charges the dispatch of one round of a nonblocking
// collective's schedule (libNBC, sw.nbc_step) on the rank's thread.
func (c *Comm) ScheduleStep() { c.t.Instr(c.sw.NBCStep) }

// Poll handles one pending event, if any, without blocking.
func (c *Comm) Poll() {
	if ev, ok := c.eq.Get(); ok {
		c.handle(ev)
		return
	}
	c.stats.Polls++
	c.t.Instr(c.sw.MPIPoll)
}

// Block waits for and handles one event.
func (c *Comm) Block() {
	defer c.t.Span("MPI progress", c.t.Now())
	c.progressOne()
}
