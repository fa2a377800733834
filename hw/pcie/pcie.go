package pcie

import (
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Dir is a direction on the link.
type Dir uint8

// Directions: Up is device → root complex (e.g. a NIC DMA write to host
// memory, or a GPU store to host memory); Down is root complex → device (an
// MMIO doorbell write, or the data of a NIC DMA read of host memory).
const (
	Up Dir = iota
	Down
)

type side struct {
	free      sim.Time // byte server idle from
	lastIssue sim.Time // last transaction issue, for the gap g
	txns      uint64
	bytes     uint64
}

// Link is one full-duplex attachment.
type Link struct {
	spec    Spec
	perByte float64
	sides   [2]side
}

// New returns a link with spec s.
func New(s Spec) *Link { return &Link{spec: s, perByte: s.Bandwidth.PerByte()} }

// Spec returns the link's parameters.
func (l *Link) Spec() Spec { return l.spec }

func (l *Link) issue(d Dir, now sim.Time) sim.Time {
	s := &l.sides[d]
	t := now
	if s.txns > 0 {
		t = max(t, s.lastIssue+l.spec.Gap)
	}
	s.lastIssue = t
	s.txns++
	return t
}

func (l *Link) stream(d Dir, t sim.Time, n unit.Bytes, penalty float64) sim.Time {
	s := &l.sides[d]
	start := max(t, s.free)
	s.free = start.Add(sim.FromPicoseconds(float64(n) * l.perByte / penalty))
	s.bytes += uint64(n)
	return s.free
}

// PostedWrite issues a posted write of n bytes in direction d at now. The
// requester is free at senderFree (o + n·G, respecting g and the byte
// server); the data is visible at the destination at visible (L later).
// Posted writes in one direction stay ordered.
func (l *Link) PostedWrite(d Dir, now sim.Time, n unit.Bytes) (senderFree, visible sim.Time) {
	t := l.issue(d, now) + l.spec.Overhead
	senderFree = l.stream(d, t, n, 1)
	return senderFree, senderFree + l.spec.Latency
}

// Read issues a non-posted read of n bytes whose request travels in
// direction req (the data returns the other way) and returns when the data
// has arrived: 2L + o + n·G plus queueing. p2p applies the peer-to-peer
// read penalty (NIC reads of GPU memory).
func (l *Link) Read(req Dir, now sim.Time, n unit.Bytes, p2p bool) sim.Time {
	t := l.issue(req, now) + l.spec.Overhead + l.spec.Latency
	penalty := 1.0
	if p2p {
		penalty = l.spec.P2PReadPenalty
	}
	done := l.stream(1-req, t, n, penalty)
	return done + l.spec.Latency
}

// Atomic is a read round trip plus the atomic at the memory side (mem).
func (l *Link) Atomic(req Dir, now sim.Time, n unit.Bytes, mem sim.Duration) sim.Time {
	return l.Read(req, now, n, false) + mem
}

// Stats returns transactions and bytes per direction.
func (l *Link) Stats(d Dir) (txns, bytes uint64) { return l.sides[d].txns, l.sides[d].bytes }
