package pcie

import (
	"fmt"

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
	// readIssue is when the last request of a split read (ReadSplit) is
	// issued: a requester paces its read requests by the gap g among
	// themselves, but only the first of a split takes a turn on the
	// direction's issue clock (lastIssue), since a read request is one
	// header TLP and PCIe lets posted writes pass non-posted requests.
	readIssue sim.Time
	readTxns  uint64 // split-read requests issued, for the first one's gap
	txns      uint64
	bytes     uint64
	busy      sim.Duration // summed serialisation times, for the invariant check
}

// Link is one full-duplex attachment.
type Link struct {
	spec    Spec
	perByte float64
	sides   [2]side
	// The last serialisation time computed, by size and penalty: a DMA
	// engine moves the same request size over and over, and the float
	// product and rounding were a tenth of a packet-level run's work.
	memoN       unit.Bytes
	memoPenalty float64
	memoD       sim.Duration
	// onChip, when set, makes the link a directory attachment (NewOnChip).
	onChip *onChip
	// c2c marks a chip-to-chip link (NewC2C).
	c2c bool
}

// New returns a link with spec s.
func New(s Spec) *Link { return &Link{spec: s, perByte: s.Bandwidth.PerByte()} }

// ChipToChip reports whether l is a CPU-GPU chip-to-chip link (NewC2C):
// a GPU's MMIO store to a NIC behind PCIe then crosses that PCIe link too.
func (l *Link) ChipToChip() bool { return l.c2c }

// Spec returns the link's parameters.
func (l *Link) Spec() Spec { return l.spec }

// MaxReadReq is Spec().MaxReadReq without copying the spec (a NIC reads
// it per request).
func (l *Link) MaxReadReq() unit.Bytes { return l.spec.MaxReadReq }

// ReachLatency is o + L: how long after its issue a request reaches the
// other end (Spec's Overhead plus Latency, without copying the spec).
func (l *Link) ReachLatency() sim.Duration { return l.spec.Overhead + l.spec.Latency }

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
	ser := l.serialization(n, penalty)
	s.free = start.Add(ser)
	s.bytes += uint64(n)
	s.busy = s.busy.Add(ser)
	return s.free
}

// Invariants checks, at the end of a run, each direction of the link: its
// byte server never serialised two transactions at once (their summed
// times fit before it went idle). agent names the link in violations.
func (l *Link) Invariants(agent string, now sim.Time) []sim.Violation {
	var out []sim.Violation
	for d := range l.sides {
		s := &l.sides[d]
		if s.busy > s.free {
			out = append(out, sim.Violation{Agent: agent, At: now, What: fmt.Sprintf("direction %d serialised %d bytes in %v, more than the %v its byte server was open: transactions overlapped", d, s.bytes, s.busy, s.free)})
		}
	}
	return out
}

// serialization returns the byte server's time for n bytes at the link's
// bandwidth divided by penalty, remembering the last answer.
func (l *Link) serialization(n unit.Bytes, penalty float64) sim.Duration {
	if n != l.memoN || penalty != l.memoPenalty {
		l.memoN, l.memoPenalty = n, penalty
		l.memoD = sim.FromPicoseconds(float64(n) * l.perByte / penalty)
	}
	return l.memoD
}

// PostedWrite issues a posted write of n bytes in direction d at now. The
// requester is free at senderFree (o + n·G, respecting g and the byte
// server); the data is visible at the destination at visible (L later).
// Posted writes in one direction stay ordered.
func (l *Link) PostedWrite(d Dir, now sim.Time, n unit.Bytes) (senderFree, visible sim.Time) {
	if l.onChip != nil {
		return l.postedOnChip(d, now, n)
	}
	t := l.issue(d, now) + l.spec.Overhead
	senderFree = l.stream(d, t, n, 1)
	return senderFree, senderFree + l.spec.Latency
}

// Read issues a non-posted read of n bytes whose request travels in
// direction req (the data returns the other way) and returns when the data
// has arrived: 2L + o + n·G plus queueing. p2p applies the peer-to-peer
// read penalty (NIC reads of GPU memory).
func (l *Link) Read(req Dir, now sim.Time, n unit.Bytes, p2p bool) sim.Time {
	if l.onChip != nil {
		return l.readOnChip(req, now, n)
	}
	t := l.issue(req, now) + l.spec.Overhead + l.spec.Latency
	penalty := 1.0
	if p2p {
		penalty = l.spec.P2PReadPenalty
		t += l.spec.P2PReadLatency
	} else {
		t += l.spec.SwitchLatency
	}
	done := l.stream(1-req, t, n, penalty)
	return done + l.spec.Latency + l.hostHop(p2p)
}

// hostHop is the return crossing of the PCIe switch for a transaction
// between a device and the host (none for a peer-to-peer one).
func (l *Link) hostHop(p2p bool) sim.Duration {
	if p2p {
		return 0
	}
	return l.spec.SwitchLatency
}

// HostWriteLatency is the extra one-way latency of a posted write between
// a device and host memory: the PCIe switch between them (Spec.SwitchLatency).
// Callers add it to a host-bound write's visibility; a peer-to-peer write
// (a GPU's doorbell to the NIC, the NIC's write into GPU memory) does not
// pay it.
func (l *Link) HostWriteLatency() sim.Duration {
	if l.onChip != nil {
		return 0
	}
	return l.spec.SwitchLatency
}

// ReadSampled is Read that also returns when the target read the data:
// the request's arrival there (o + L after issue, plus the peer-to-peer
// latency), before the completion travels back. A poller that reads a word
// across the link sees the value the word held then, not at the
// completion's arrival.
func (l *Link) ReadSampled(req Dir, now sim.Time, n unit.Bytes, p2p bool) (sampled, done sim.Time) {
	if l.onChip != nil {
		done = l.readOnChip(req, now, n)
		if req == Down {
			return done - l.onChip.mmio, done
		}
		return now + l.onChip.access, done
	}
	t := l.issue(req, now) + l.spec.Overhead + l.spec.Latency
	penalty := 1.0
	if p2p {
		penalty = l.spec.P2PReadPenalty
		t += l.spec.P2PReadLatency
	} else {
		t += l.spec.SwitchLatency
	}
	return t, l.stream(1-req, t, n, penalty) + l.spec.Latency + l.hostHop(p2p)
}

// ReadRequest issues one read request of n bytes (at most a maximum read
// request) at t, which may lie after other transactions the link has
// already taken: the request of a requester that waited for a free tag.
// Its header-only TLP does not hold up the request direction (no gap is
// charged there); its data takes the return direction's byte server.
// It returns when the data has arrived.
func (l *Link) ReadRequest(req Dir, t sim.Time, n unit.Bytes, p2p bool) sim.Time {
	s := &l.sides[req]
	s.txns++
	t += l.spec.Overhead + l.spec.Latency
	penalty := 1.0
	if p2p {
		penalty = l.spec.P2PReadPenalty
		t += l.spec.P2PReadLatency
	} else {
		t += l.spec.SwitchLatency
	}
	return l.stream(1-req, t, n, penalty) + l.spec.Latency + l.hostHop(p2p)
}

// ReadSplit issues a read of n bytes at now as requests of at most maxReq
// bytes each, as that many Read calls in address order would, except that
// only the first takes a turn on the direction's issue clock: the rest
// follow it a gap apart and posted writes pass them (a read request is one
// header TLP, and PCIe ordering lets posted writes pass non-posted
// requests). It returns when the last data has arrived and how many requests it took
// (none for n = 0, which returns now). A NIC's DMA reads a packet as eight
// or so requests; one loop over local copies of the two sides' state keeps
// that from being a tenth of a packet-level run.
func (l *Link) ReadSplit(req Dir, now sim.Time, n, maxReq unit.Bytes, p2p bool) (done sim.Time, k int) {
	if n == 0 {
		return now, 0
	}
	if l.onChip != nil {
		// One coherent access per request, their data streaming back to
		// back at the memory's rate.
		k = int((n + maxReq - 1) / maxReq)
		l.sides[req].txns += uint64(k)
		return l.stream(1-req, now+l.onChip.access, n, 1), k
	}
	penalty := 1.0
	if p2p {
		penalty = l.spec.P2PReadPenalty
	}
	full := l.serialization(maxReq, penalty)
	issuer, data := &l.sides[req], &l.sides[1-req]
	lead := l.spec.Overhead + l.spec.Latency
	if p2p {
		lead += l.spec.P2PReadLatency
	} else {
		lead += l.spec.SwitchLatency
	}
	// The first request takes its turn on the direction (as Read's does);
	// the rest follow it, and the requester's earlier split reads, a gap
	// g apart without holding up the direction's other transactions.
	first := l.issue(req, now)
	if issuer.readTxns > 0 {
		first = max(first, issuer.readIssue+l.spec.Gap)
	}
	last, free, busy := first, data.free, data.busy
	for off := unit.Bytes(0); off < n; off += maxReq {
		c, d := maxReq, full
		if n-off < maxReq {
			c = n - off
			d = l.serialization(c, penalty)
		}
		t := first
		if k > 0 {
			t = last + l.spec.Gap
		}
		last = t
		free = max(t+lead, free).Add(d) // stream: the data's byte server
		busy = busy.Add(d)
		data.bytes += uint64(c)
		k++
	}
	issuer.readIssue, data.free, data.busy = last, free, busy
	issuer.readTxns += uint64(k)
	issuer.txns += uint64(k - 1) // the first was counted by issue
	return free + l.spec.Latency + l.hostHop(p2p), k
}

// Atomic is a read round trip plus the atomic at the memory side (mem).
func (l *Link) Atomic(req Dir, now sim.Time, n unit.Bytes, mem sim.Duration) sim.Time {
	return l.Read(req, now, n, false) + mem
}

// Stats returns transactions and bytes per direction.
func (l *Link) Stats(d Dir) (txns, bytes uint64) { return l.sides[d].txns, l.sides[d].bytes }
