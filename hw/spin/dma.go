package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// DMA flags of PtlHandlerDMAToHost (the SC'19 paper).
const (
	// NoEvent: the DMA's completion raises no event.
	NoEvent = 1 << iota
)

// DMAEvent is the completion event of a DMA write issued without NoEvent.
// Events are raised in FIFO order: when the write and every earlier write
// are visible in host memory.
type DMAEvent struct {
	Time sim.Time // visible in host memory
	Seq  uint64   // the request's position in the DMA write FIFO (1, 2, …)
	Host mem.Addr
	Len  unit.Bytes
	Tag  any // the issuing handler's tag (HandlerCtx.DMAToHost)
}

// OccSample is one point of the DMA write FIFO occupancy trace.
type OccSample struct {
	Time sim.Time
	Occ  int
}

// dmaReq is one DMA write request in the FIFO.
type dmaReq struct {
	seq   uint64
	host  mem.Addr
	n     unit.Bytes
	data  []byte
	pkt   *packet // the packet-buffer slot it reads from, if any
	event bool
	tag   any
	wake  func() // blocking DMA: run when visible
	hpu   int    // the issuing HPU (its local copy is the source); -1: the packet buffer
	// queued: it holds a slot of its HPU's cluster DMA queue (pulp) until read.
	queued bool
}

// dmaEngine is the DMA write request FIFO towards PCIe: a request enters at
// issue, reads its source from NIC memory, then leaves as TLPs over the
// NIC's PCIe link (each TLP pays the link's gap and TLPHeader of
// overhead); it is visible L later, in FIFO order.
type dmaEngine struct {
	s        *NIC
	seq      uint64
	reading  int        // requests whose NIC-memory read is in progress
	lefts    []sim.Time // leave times of posted requests still counted (non-decreasing)
	head     int
	max      int
	trace    []OccSample
	tracing  bool
	writes   uint64
	events   []DMAEvent
	sig      sim.Signal
	posted   uint64   // requests handed to PCIe
	lastRd   sim.Time // when the previous request's source read ended
	lastLand sim.Time // when the last write became visible
	waiters  []barrier
}

// barrier runs fn once request seq has been handed to PCIe.
type barrier struct {
	seq uint64
	fn  func()
}

// occupancy returns the requests in the FIFO at now: those still reading
// plus the posted ones whose last TLP has not left.
func (d *dmaEngine) occupancy(now sim.Time) int {
	for d.head < len(d.lefts) && d.lefts[d.head] <= now {
		d.head++
	}
	if d.head > 4096 && d.head*2 > len(d.lefts) {
		d.lefts = append(d.lefts[:0], d.lefts[d.head:]...)
		d.head = 0
	}
	return d.reading + len(d.lefts) - d.head
}

func (d *dmaEngine) sample(now sim.Time) {
	occ := d.occupancy(now)
	d.max = max(d.max, occ)
	if d.tracing {
		if k := len(d.trace); k > 0 && d.trace[k-1].Time == now {
			d.trace[k-1].Occ = occ
			return
		}
		d.trace = append(d.trace, OccSample{Time: now, Occ: occ})
	}
}

// enqueue puts r into the FIFO now.
func (d *dmaEngine) enqueue(r *dmaReq) {
	s := d.s
	d.seq++
	r.seq = d.seq
	d.writes++
	d.reading++
	d.sample(s.e.Now())
	var addr uint64
	if r.pkt != nil {
		addr = r.pkt.addr
	}
	// The FIFO hands requests to PCIe in order: one whose read ends early
	// (another cluster's DMA channel on pulp) waits for those before it.
	done := max(s.mem.dmaRead(s.e.Now(), r.hpu, addr, r.n), d.lastRd)
	d.lastRd = done
	s.e.At(done, func() { d.post(r) })
}

// post hands r to PCIe once its source has been read from NIC memory.
func (d *dmaEngine) post(r *dmaReq) {
	s := d.s
	d.reading--
	if r.pkt != nil {
		s.unref(r.pkt)
	}
	if r.queued {
		c := s.accel.Cluster(r.hpu)
		s.dmaQ[c]--
		s.dmaQS[c].Notify()
	}
	mps := s.nic.Link().Spec().MPS
	h := s.spec.TLPHeader
	var left sim.Time
	rem := r.n
	for first := true; first || rem > 0; first = false {
		l := min(rem, mps)
		rem -= l
		wire := ((l+h)*mps + mps + h - 1) / (mps + h) // (l+h) raw bytes at the link's full-TLP rate
		if rem > 0 {
			left = s.nic.PostWrite(wire, func() {})
			continue
		}
		left = s.nic.PostWrite(wire, func() { d.land(r) })
	}
	d.lefts = append(d.lefts, left)
	d.posted = r.seq
	for len(d.waiters) > 0 && d.waiters[0].seq <= d.posted {
		fn := d.waiters[0].fn
		d.waiters = d.waiters[1:]
		fn()
	}
	d.sample(s.e.Now())
}

// land makes r's bytes visible and raises its event.
func (d *dmaEngine) land(r *dmaReq) {
	s := d.s
	d.lastLand = s.e.Now()
	if r.n > 0 && s.onHostWrite != nil {
		s.onHostWrite(s.e.Now(), r.host, r.n)
	}
	if r.n > 0 {
		if r.data != nil {
			s.host.Write(r.host, r.data[:r.n])
		} else {
			s.host.Touch(r.host, int(r.n))
		}
	}
	if r.event {
		d.events = append(d.events, DMAEvent{Time: s.e.Now(), Seq: r.seq, Host: r.host, Len: r.n, Tag: r.tag})
		d.sig.Notify()
	}
	if r.wake != nil {
		r.wake()
	}
}

// afterPosted runs fn once every request enqueued so far is on PCIe.
func (d *dmaEngine) afterPosted(fn func()) {
	if d.posted == d.seq {
		fn()
		return
	}
	d.waiters = append(d.waiters, barrier{seq: d.seq, fn: fn})
}
