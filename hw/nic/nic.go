package nic

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

const (
	pcieUp   = pcie.Up
	pcieDown = pcie.Down
)

// doorbellSize is the MMIO doorbell write (the new ring tail) without
// InlineCmd.
const doorbellSize unit.Bytes = 8

// NIC is one node's network interface. Create it with New, which attaches
// it to the fabric at index id. All methods run inside the engine's
// goroutine; only the ones taking a *sim.Proc block, and only that process.
type NIC struct {
	// The fields every packet, trigger and command of a run reads come
	// first, together: at a thousand nodes a NIC is cold again at each of
	// its engine's windows, and its hot fields were spread over most of
	// its 25 cache lines (the Spec, XTQ's state and the names between
	// them).
	e    *sim.Engine
	id   int
	mem  *mem.Memory
	link *pcie.Link
	fab  *net.Fabric
	// c2c is the chip-to-chip link between the root complex the NIC
	// hangs on and the GPU's memory (UseC2C); nil elsewhere.
	c2c           *pcie.Link
	v             *verbs // verbs front end (verbs*.go), made on first use
	maxPayload    unit.Bytes
	flowPiece     unit.Bytes // flow model: the link's packet payload (UseFlows); 0 in the packet model
	lastIssue     sim.Time   // when the last command began on the NIC (issue)
	lastLanded    sim.Time   // when the last incoming put's or atomic's bytes were all visible
	nextMsg       uint64
	rxStalled     bool // a sPIN context refused a packet (packet buffer full)
	eagerPayloads bool // copy payloads out of memory at send, never as snapshots (tests compare the two)
	// poisonRetired: tests overwrite retired packets and message records
	// and never reuse them (always in a build with the nicpoison tag).
	poisonRetired bool
	stats         Stats
	// sends holds the packets whose payload DMA is under way, as the
	// events that hand them to the fabric: DMA reads complete in issue
	// order, so only the first is in the engine's queue (sim.Chain).
	sends sim.Chain
	in    map[uint64]*inMsg    // target messages by (source, msg id)
	out   map[uint64]*outMsg   // initiator messages awaiting an ack or a reply
	early map[uint64][]*Packet // payload packets that overtook their header
	pts   []*pt
	// xin is XTQ's hold buffer at the ingress (xtq_hold.go), which every
	// arriving packet checks.
	xin xtqIngress

	inFree   sim.Time // inbound engine (parse + match) busy until
	upVis    sim.Time // latest posted DMA write visibility (writes stay ordered)
	trigFree sim.Time // triggered-op evaluation unit busy until
	trigSeq  uint64
	dmaOut   int // outstanding DMA requests

	// ctrlFree pools payload-free control payloads (ctrlbuf.go).
	ctrlFree sim.FreeList[*ctrlBuf]
	// Packet arrays of messages whose every packet was retired here, by
	// packet count (recycle.go).
	pktFree [][][]Packet
	// Message records whose last use is over, for reuse (recycle.go):
	// issue records (an ack retired here, or an unacknowledged put
	// landed here), and the target's records of completed puts.
	issuedFree sim.FreeList[*issuedMsg]
	inMsgFree  sim.FreeList[*inMsg]
	cmdFree    sim.FreeList[*hostCmd] // host commands done with, for reuse (hostcmd.go)
	opFree     sim.FreeList[*issueOp] // issue actions done with, for reuse (hostcmd.go)

	tn gputn

	spec Spec

	// attached are the invariant checks of engines attached to the NIC
	// (sPIN), run with its own (AttachInvariants).
	attached []func(now sim.Time) []sim.Violation
	name     string
	track    string
	// localMsg numbers the puts LocalPut delivered.
	localMsg uint64
	meSeq    uint64
	outFree  sim.FreeList[*outMsg] // acknowledged sends' records, for reuse (onAck)
	// tagFree holds, for each of Spec.ReadTags read tags, when it is free
	// again; empty when reads are unbounded.
	tagFree readTags
	rxHeld  []*Packet // packets waiting behind the refused one, in arrival order

	deferred deferredCmds           // GDS commands posted but not yet activated (deferred.go)
	ctwFree  sim.FreeList[*ctWrite] // CT write-backs landed, for reuse (portals.go)

	xtq xtqState

	// Every counting event and event queue made, for the end-of-run
	// invariant check (invariant.go).
	cts []*CT
	eqs []*EQ
}

// Stats are a NIC's counters.
type Stats struct {
	Commands         uint64 // commands executed (host, triggered, GPU-TN, deferred)
	PacketsTx        uint64
	PacketsRx        uint64
	BytesTx          uint64 // payload bytes sent
	BytesRx          uint64 // payload bytes received
	Matches          uint64 // header packets matched on a priority or overflow list
	Unexpected       uint64 // messages that matched the overflow list
	Drops            uint64 // messages dropped (no match, PT disabled, full EQ under flow control)
	EQDrops          uint64 // events lost to a full EQ
	TriggeredFired   uint64 // Portals triggered ops issued (§2.7)
	TrigFIFOMax      int    // GPU-TN trigger FIFO max occupancy (entries)
	TrigEntriesMax   int    // GPU-TN max simultaneously live trigger entries
	TrigFires        uint64 // GPU-TN ops issued
	TrigStalls       uint64 // GPU-TN FIFO stalls for lack of a free entry
	TrigRegWaits     uint64 // GPU-TN registrations that waited for a free entry
	TagReuseWarnings uint64 // GPU-TN registrations while a live entry for the tag had an op
	DMAFIFOMax       int    // max outstanding DMA requests (reads, posted writes)
	Overtaken        uint64 // payload packets that arrived before their header (held)
}

// New returns a NIC for node id and attaches it to fab at index id.
// maxPayload is the largest packet payload (the link's Payload). The spec
// must be valid (Spec.Validate); New panics otherwise, naming the NIC.
func New(e *sim.Engine, id int, name string, spec Spec, m *mem.Memory, link *pcie.Link, fab *net.Fabric, maxPayload unit.Bytes) *NIC {
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("%s: invalid spec: %v", name, err))
	}
	if maxPayload < 8 {
		panic(fmt.Sprintf("%s: max payload %v: must be ≥ 8B", name, maxPayload))
	}
	n := &NIC{e: e, id: id, name: name, track: name + ".nic", spec: spec, mem: m, link: link, fab: fab,
		maxPayload: maxPayload, out: map[uint64]*outMsg{}, in: map[uint64]*inMsg{}, early: map[uint64][]*Packet{},
		poisonRetired: poisonBuild}
	n.tn.memlist = spec.TrigLookup == "memlist"
	fab.Attach(id, n)
	return n
}

// ID returns the node id (fabric endpoint index).
func (n *NIC) ID() int { return n.id }

// Name returns the NIC's name.
func (n *NIC) Name() string { return n.name }

// Spec returns the NIC's parameters.
func (n *NIC) Spec() Spec { return n.spec }

// BlueFlame is Spec().VerbsBlueFlame without copying the spec (read per
// doorbell).
func (n *NIC) BlueFlame() bool { return n.spec.VerbsBlueFlame }

// Memory returns the node memory the NIC DMAs to and from.
func (n *NIC) Memory() *mem.Memory { return n.mem }

// Stats returns a copy of the counters.
func (n *NIC) Stats() Stats { return n.stats }

// LastIssue returns when the NIC last began a command of its own queue
// (a put, get or atomic; not a CT update): the end of the command's post
// on the initiator — the host's build and doorbell, the NIC's fetch of the
// command and its command latency.
func (n *NIC) LastIssue() sim.Time { return n.lastIssue }

// LastLanded returns when the last message that reached the NIC as a
// target (a put, a gather put or an atomic) had all its bytes visible in
// memory, before any event of it was written.
func (n *NIC) LastLanded() sim.Time { return n.lastLanded }

func (n *NIC) dmaBegin(k int) {
	n.dmaOut += k
	n.stats.DMAFIFOMax = max(n.stats.DMAFIFOMax, n.dmaOut)
}

func (n *NIC) dmaEnd(k int) { n.dmaOut -= k }

// dmaRead issues a DMA read of [a, a+l) now, split into MaxReadReq
// requests, and returns when the data is on the NIC. Reads of GPU memory
// pay the P2P penalty. The requests count as outstanding until then; the
// caller must call dmaEnd(k) at done.
func (n *NIC) dmaRead(a mem.Addr, l uint64) (done sim.Time, k int) {
	now := n.e.Now()
	if l == 0 {
		return now, 0
	}
	p2p := n.mem.PoolOf(a) == mem.GPU
	var ppb *PPB
	if p2p && n.v != nil {
		ppb = n.v.ppb
	}
	if n.spec.ReadTags > 0 {
		done, k = n.readTagged(now, l, p2p, ppb)
	} else {
		done, k = n.link.ReadSplit(pcieUp, n.ppbGate(ppb, now), unit.Bytes(l), n.link.MaxReadReq(), p2p)
	}
	if p2p && n.c2c != nil {
		done = pcie.Behind(n.link, n.c2c, now, done, unit.Bytes(l))
	}
	n.dmaBegin(k)
	return done, k
}

// readTagged issues the read of l bytes as maximum-read-request pieces,
// each when one of the NIC's ReadTags tags is free (in request order: the
// DMA engine's queue), and returns when the last data has arrived. A tag
// is busy from its request's issue to its completion, so the read rate is
// at most tags × request size / round trip: the bound that makes reads of
// GPU memory, whose round trip is longer, slower than the link.
func (n *NIC) readTagged(now sim.Time, l uint64, p2p bool, ppb *PPB) (done sim.Time, k int) {
	if len(n.tagFree.t) != n.spec.ReadTags {
		n.tagFree = readTags{t: make([]sim.Time, n.spec.ReadTags)}
	}
	maxReq := uint64(n.link.MaxReadReq())
	done = now
	for off := uint64(0); off < l; off += maxReq {
		c := min(maxReq, l-off)
		t := n.ppbGate(ppb, max(now, n.tagFree.earliest()))
		d := n.link.ReadRequest(pcieUp, t, unit.Bytes(c), p2p)
		n.tagFree.replace(d)
		done = max(done, d)
		k++
	}
	return done, k
}

// ppbGate returns when a read of GPU memory through ppb (nil: none)
// issued at t goes out: a request that would reach the PPB (o + L after
// issue) while a flush is in progress there is served after the flush,
// which holds it, and its tag, that much longer.
func (n *NIC) ppbGate(ppb *PPB, t sim.Time) sim.Time {
	if ppb == nil || len(ppb.arrivals) == 0 {
		return t
	}
	a := t + n.link.ReachLatency()
	return t + (ppb.gate(a) - a)
}

// readTags are the times the NIC's read tags are free again, a multiset
// of which readTagged takes the earliest and puts back when that tag is
// next free. They are kept sorted in a ring, t[head] the earliest: reads
// issued in order mostly finish in order, so the new time is usually the
// latest and takes the earliest's slot, which becomes the ring's last. The
// min-heap it replaces sifted each new time down through every level (2.9 %
// of a 64-node GNN_GIO run's instructions, docs/speed.md); the earliest
// time, all readTagged reads, is the same in both.
type readTags struct {
	t    []sim.Time
	head int
}

// earliest is the earliest time a tag is free.
func (r *readTags) earliest() sim.Time { return r.t[r.head] }

// replace takes the earliest time out and puts d in, in order.
func (r *readTags) replace(d sim.Time) {
	n := len(r.t)
	i := r.head // the last slot once head moves on
	if r.head++; r.head == n {
		r.head = 0
	}
	for range n - 1 {
		p := i - 1
		if p < 0 {
			p = n - 1
		}
		if r.t[p] <= d {
			break
		}
		r.t[i] = r.t[p]
		i = p
	}
	r.t[i] = d
}

// dmaWrite issues a posted DMA write of l bytes now and calls fn when it is
// visible in memory. Visibility is kept in issue order.
func (n *NIC) dmaWrite(l uint64, fn func()) {
	n.e.At(n.postWrite(l, false, true), func() { n.dmaEnd(1); fn() })
}

// dmaWriteTo is dmaWrite of data bound for address a: a write into GPU
// memory beyond NVLink-C2C crosses that link too (UseC2C).
func (n *NIC) dmaWriteTo(a mem.Addr, l uint64, fn func()) {
	n.e.At(n.postWrite(l, n.farMem(a), n.hostMem(a)), func() { n.dmaEnd(1); fn() })
}

// dmaWriteH is dmaWrite of data bound for address a with an event handler
// instead of a closure; h must call dmaEnd(1).
func (n *NIC) dmaWriteH(a mem.Addr, l uint64, h sim.Handler) {
	n.e.AtH(n.postWrite(l, n.farMem(a), n.hostMem(a)), h, 0)
}

// UseC2C puts the GPU's memory beyond the chip-to-chip link l
// (NVLink-C2C) from the NIC's PCIe root complex: DMA reads and writes of
// GPU-pool addresses cross PCIe and then l, sharing l's byte servers
// with the CPU's and GPU's own crossings. In the flow model a message's
// write still streams while it is on the wire; l adds its latency and
// its serialisation there too.
func (n *NIC) UseC2C(l *pcie.Link) { n.c2c = l }

// farMem reports whether a lies beyond NVLink-C2C from the NIC.
func (n *NIC) farMem(a mem.Addr) bool { return n.c2c != nil && n.mem.PoolOf(a) == mem.GPU }

// hostMem reports whether a lies in host memory (not the GPU's): a write
// there crosses the PCIe switch to the root complex, one into GPU memory
// turns around in it.
func (n *NIC) hostMem(a mem.Addr) bool { return n.mem.PoolOf(a) != mem.GPU }

// postWrite issues a posted DMA write of l bytes now and returns when it
// is visible in memory (in issue order); far writes cross C2C after
// PCIe, host-bound ones the PCIe switch (pcie.switch_latency).
func (n *NIC) postWrite(l uint64, far, host bool) sim.Time {
	// In the flow model a whole message arrives at once; its write streamed
	// while the message was on the wire (UseFlows).
	_, vis := n.link.PostedWrite(pcieUp, n.e.Now()-n.ingestLead(unit.Bytes(l)), unit.Bytes(l))
	if host {
		vis += n.link.HostWriteLatency()
	}
	if far {
		_, vis = n.c2c.PostedWrite(pcie.Down, vis-n.c2cLead(l), unit.Bytes(l))
	}
	vis = max(vis, n.upVis, n.e.Now())
	n.upVis = vis
	n.dmaBegin(1)
	return vis
}

// afterWrites calls fn once every posted write issued so far is visible.
func (n *NIC) afterWrites(fn func()) { n.e.At(max(n.e.Now(), n.upVis), fn) }

// setFlag writes 1 to the 8-byte word at a by a posted DMA write.
func (n *NIC) setFlag(a mem.Addr) {
	if a == 0 {
		return
	}
	n.e.At(n.postWrite(8, false, n.hostMem(a)), func() { n.dmaEnd(1); n.mem.Store64(a, 1) })
}

// storeData makes data (nil: payload-free source, read as zeros) visible
// at [a, a+l) and wakes watchers.
func (n *NIC) storeData(a mem.Addr, data []byte, l uint64) { n.storeDataAt(a, data, 0, l) }

// storeDataAt is storeData of a payload whose bytes data start at byte at
// (Packet.DataAt): zeros before, as one write.
func (n *NIC) storeDataAt(a mem.Addr, data []byte, at, l uint64) {
	if l == 0 {
		return
	}
	if data != nil && len(data) == 0 && at >= l {
		// The empty payload at its end: zeros throughout (a payload-free
		// read through GIO's PPB, ppbPayload). Where there is nothing to
		// write them into, they only touch; else written as a buffer of
		// zeros would be (receive slots, control words).
		if !n.mem.HasData(a, int(l)) {
			n.mem.Touch(a, int(l))
			return
		}
		z := n.fab.GetBuf(int(l))
		clear(z)
		n.mem.Write(a, z)
		n.fab.PutBuf(z)
		return
	}
	if data != nil && at > 0 {
		n.mem.WriteAfterZeros(a, int(l), int(min(at, l)), data[:l-min(at, l)])
		return
	}
	if data != nil {
		n.mem.Write(a, data[:l]) // also keeps control words of payload-free buffers
		return
	}
	if b := n.mem.Bytes(a, int(l)); b != nil {
		clear(b)
	}
	n.mem.Touch(a, int(l))
}

// storeSparse is storeData of a sparse flow-model payload (gatherPieces):
// the l bytes at a are written as the whole payload would write them.
func (n *NIC) storeSparse(a mem.Addr, sp *sparsePayload, l uint64) {
	if l > 0 {
		n.mem.WriteRuns(a, int(l), sp.offs, sp.lens, sp.bytes)
	}
}

func (n *NIC) span(what string, start, end sim.Time) {
	if n.e.Tracer() != nil {
		n.e.Span(n.track, what, start, end)
	}
}

// spanOp records prefix+op from start to now, building the name only when
// tracing.
func (n *NIC) spanOp(prefix, op string, start sim.Time) {
	if n.e.Tracer() != nil {
		n.e.Span(n.track, prefix+op, start, n.e.Now())
	}
}

// Doorbell posts cmd from a host thread p: a posted MMIO write of the
// doorbell over the NIC's PCIe link (p sleeps until its side is done),
// then at visibility a DMA read of the CmdSize descriptor (skipped with
// InlineCmd), CmdLatency, and execution.
func (n *NIC) Doorbell(p *sim.Proc, cmd Command) {
	n.check(cmd)
	n.hostPostOp(p, "cmd", true, n.issueOpOf(cmd))
}

// Execute runs cmd as a command already on the NIC (triggered op, GDS
// activation): CmdLatency from now, no doorbell, no fetch. It never blocks.
func (n *NIC) Execute(cmd Command) {
	n.check(cmd)
	n.e.AtH(n.e.Now()+n.spec.CmdLatency, n.issueOpOf(cmd), 0)
}

// check panics on a malformed command (a bug in the layer above).
func (n *NIC) check(c Command) {
	bad := func(why string) { panic(fmt.Sprintf("%s: bad %v command: %s", n.name, c.Op, why)) }
	switch c.Op {
	case CmdCTInc, CmdCTSet:
		if c.CT == nil {
			bad("nil CT")
		}
		return
	case CmdPut, CmdGet, CmdAtomic, CmdFetchAtomic, CmdSwap:
	default:
		bad("unknown op")
	}
	if c.MD == nil {
		bad("nil MD")
	}
	if c.LocalOffset+c.Length > c.MD.Length || c.LocalOffset+c.Length < c.LocalOffset {
		bad(fmt.Sprintf("[%d, +%d) outside MD length %d", c.LocalOffset, c.Length, c.MD.Length))
	}
	if c.Target < 0 {
		bad(fmt.Sprintf("target %d", c.Target))
	}
	switch c.Op {
	case CmdAtomic, CmdFetchAtomic, CmdSwap:
		if c.AtomicType > Float64 || c.AtomicOp > CSwap {
			bad("atomic op/type out of range")
		}
		if c.Length%uint64(c.AtomicType.Size()) != 0 {
			bad(fmt.Sprintf("length %d not a multiple of the %d-byte element", c.Length, c.AtomicType.Size()))
		}
		if c.Op == CmdSwap && c.AtomicOp != Swap && c.AtomicOp != CSwap {
			bad("swap needs AtomicOp Swap or CSwap")
		}
		if c.Op != CmdAtomic {
			if c.ResultMD == nil {
				bad("nil ResultMD")
			}
			if c.ResultOffset+c.Length > c.ResultMD.Length {
				bad("result outside ResultMD")
			}
		}
	}
}
