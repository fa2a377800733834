package peer

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Port is one GPU's peer access: the GPU at network endpoint self reaching
// the memories of the other GPUs of its node.
type Port struct {
	e      *sim.Engine
	fab    *net.Fabric
	self   int
	memOf  func(endpoint int) *mem.Memory
	busy   []bool      // per copy engine: serving a copy
	copies []*transfer // copies waiting for an engine, in order
	launch sim.Duration
	stats  Stats
}

// Stats counts a port's peer traffic.
type Stats struct {
	Writes, Reads, Atomics, Copies uint64
	BytesOut, BytesIn              uint64 // payload bytes written to, read from peers
}

// New returns the peer port of the GPU at endpoint self. memOf returns the
// memory of any endpoint of its node; spec gives the copy engines.
func New(e *sim.Engine, fab *net.Fabric, self int, memOf func(int) *mem.Memory, spec net.NodeSpec) *Port {
	return &Port{e: e, fab: fab, self: self, memOf: memOf,
		busy: make([]bool, max(1, spec.CopyEngines)), launch: spec.CopyLaunch}
}

// Reaches reports whether endpoint pe is another GPU of this one's node.
func (p *Port) Reaches(pe int) bool { return p.fab.SameNode(p.self, pe) }

// Self returns the endpoint of the port's own GPU.
func (p *Port) Self() int { return p.self }

// Stats returns the port's counters.
func (p *Port) Stats() Stats { return p.stats }

func (p *Port) check(pe int) {
	if !p.Reaches(pe) {
		panic(fmt.Sprintf("peer: endpoint %d reaching %d: not another GPU of its node", p.self, pe))
	}
}

// Write sends n bytes read from [src, src+n) of this GPU's memory to
// [dst, dst+n) of peer pe's memory (stores), and calls done when the last
// byte has landed. Bytes are read when the transfer starts.
func (p *Port) Write(pe int, dst, src mem.Addr, n uint64, done func()) {
	p.check(pe)
	p.stats.Writes++
	p.stats.BytesOut += n
	op := &transfer{p: p, from: p.self, to: pe, srcMem: p.memOf(p.self), dstMem: p.memOf(pe), src: src, dst: dst, n: n, done: done}
	op.start()
}

// WriteWord stores the low size bytes of v at dst on peer pe (a single
// store carrying its value) and calls done when it has landed.
func (p *Port) WriteWord(pe int, dst mem.Addr, v uint64, size int, done func()) {
	p.check(pe)
	p.stats.Writes++
	p.stats.BytesOut += uint64(size)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	pk := &packet{from: p.self, to: pe, n: unit.Bytes(size), arrive: func() {
		p.memOf(pe).Write(dst, b[:size])
		done()
	}}
	p.fab.Send(pk)
}

// Read fetches n bytes at [src, src+n) of peer pe's memory into
// [dst, dst+n) of this GPU's memory (loads): a request crosses the fabric,
// the data comes back, and done is called when the last byte is here.
func (p *Port) Read(pe int, dst, src mem.Addr, n uint64, done func()) {
	p.check(pe)
	p.stats.Reads++
	p.stats.BytesIn += n
	op := &transfer{p: p, from: pe, to: p.self, srcMem: p.memOf(pe), dstMem: p.memOf(p.self), src: src, dst: dst, n: n, done: done}
	p.fab.Send(&packet{from: p.self, to: pe, n: 0, arrive: op.start})
}

// Atomic applies f to the size-byte (4 or 8) word at a on peer pe when
// the request arrives there, and calls done with the old value when the
// response is back.
func (p *Port) Atomic(pe int, a mem.Addr, size int, f func(old uint64) uint64, done func(old uint64)) {
	p.check(pe)
	p.stats.Atomics++
	m := p.memOf(pe)
	p.fab.Send(&packet{from: p.self, to: pe, n: 16, arrive: func() {
		var b [8]byte
		m.Read(a, b[:size])
		old := binary.LittleEndian.Uint64(b[:])
		binary.LittleEndian.PutUint64(b[:], f(old))
		m.Write(a, b[:size])
		p.fab.Send(&packet{from: pe, to: p.self, n: unit.Bytes(size), arrive: func() { done(old) }})
	}})
}

// Copy has one of the GPU's copy engines move n bytes from [src, src+n)
// of endpoint from's memory to [dst, dst+n) of endpoint to's (one of them
// this GPU, the other a peer of its node). Copies wait in one FIFO for a
// free engine; an engine starts a copy after its launch time and stays
// busy until the copy has landed, when done is called.
func (p *Port) Copy(from, to int, dst, src mem.Addr, n uint64, done func()) {
	peerEnd := from
	if from == p.self {
		peerEnd = to
	}
	p.check(peerEnd)
	p.stats.Copies++
	p.copies = append(p.copies, &transfer{p: p, from: from, to: to, srcMem: p.memOf(from), dstMem: p.memOf(to),
		src: src, dst: dst, n: n, done: done})
	p.dispatchCopies()
}

// dispatchCopies gives queued copies to idle engines, in order.
func (p *Port) dispatchCopies() {
	for k := range p.busy {
		if len(p.copies) == 0 {
			return
		}
		if p.busy[k] {
			continue
		}
		t := p.copies[0]
		p.copies = p.copies[1:]
		p.busy[k] = true
		userDone := t.done
		t.done = func() {
			p.busy[k] = false
			userDone()
			p.dispatchCopies()
		}
		p.e.After(p.launch, t.start)
	}
}

// transfer is a byte range moving from one GPU's memory to another's.
type transfer struct {
	p              *Port
	from, to       int
	srcMem, dstMem *mem.Memory
	src, dst       mem.Addr
	n              uint64
	left           int // packets not yet arrived
	done           func()
}

// start sends the range as packets of at most the fabric's payload (one
// flow in the flow model).
func (t *transfer) start() {
	chunk := uint64(t.p.fab.PacketPayload())
	if t.p.fab.FlowModel() || t.n == 0 {
		chunk = max(t.n, 1)
	}
	var pks []*packet
	for off := uint64(0); off < t.n || (t.n == 0 && off == 0); off += chunk {
		n := min(chunk, t.n-off)
		pk := &packet{from: t.from, to: t.to, n: unit.Bytes(n), tr: t, off: off}
		t.read(pk, off, n)
		pks = append(pks, pk)
		if t.n == 0 {
			break
		}
	}
	t.left = len(pks)
	for _, pk := range pks {
		t.p.fab.Send(pk)
	}
}

// read gives pk the bytes of [src+off, +n) when the transfer starts:
// all of them from a functional source; from a payload-free one only its
// control lines, as runs over their span (none when it has none), so a
// payload-free transfer carries no payload, nor the zeros between flags
// (a staging slot holds the flags of every piece that uses it: with the
// zeros between them a large piece's put held most of the piece).
func (t *transfer) read(pk *packet, off, n uint64) {
	a := t.src + mem.Addr(off)
	if n == 0 {
		return
	}
	if b := t.srcMem.Bytes(a, int(n)); b != nil {
		pk.data = append([]byte(nil), b...)
		return
	}
	if !t.srcMem.HasData(a, int(n)) {
		return
	}
	data, at, span, offs, lens := t.srcMem.ReadControlRuns(a, int(n))
	if data != nil {
		pk.data, pk.dataAt, pk.span, pk.offs, pk.lens = data, uint64(at), uint64(span), offs, lens
	}
}

// land writes a packet's bytes at the destination and ends the transfer
// with its last packet.
func (t *transfer) land(pk *packet) {
	if pk.n > 0 {
		at := t.dst + mem.Addr(pk.off)
		switch {
		case pk.offs != nil:
			t.dstMem.WriteRuns(at+mem.Addr(pk.dataAt), int(pk.span), pk.offs, pk.lens, pk.data)
		case pk.data != nil:
			t.dstMem.Write(at+mem.Addr(pk.dataAt), pk.data)
		}
		t.dstMem.Touch(at, int(pk.n))
	}
	if t.left--; t.left == 0 {
		t.done()
	}
}

// packet is one peer-access packet on the node fabric.
type packet struct {
	from, to int
	n        unit.Bytes
	tr       *transfer
	off      uint64 // where in the transfer the packet's bytes start
	data     []byte // the bytes it carries, from dataAt on (nil: none kept)
	dataAt   uint64
	// A payload-free source's control lines: data holds runs at offs
	// (from dataAt) of lens bytes over span bytes, zeros between.
	span       uint64
	offs, lens []uint64
	arrive     func()
}

func (pk *packet) Route() (src, dst int)    { return pk.from, pk.to }
func (pk *packet) PayloadBytes() unit.Bytes { return pk.n }

// Arrive is called by the fabric when the packet's last bit is in.
func (pk *packet) Arrive() {
	if pk.tr != nil {
		pk.tr.land(pk)
		return
	}
	pk.arrive()
}
