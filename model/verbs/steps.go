package verbs

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// PostRing is Post of each of its WQEs followed by Ring, as a sim.Stepper
// for a work-group's coroutine to lend its process to (sim.Proc.RunSteps):
// a post writes eight fields, each a store cost and the store (three
// waits), and the ring a doorbell record, the fence and the doorbell;
// as coroutine code each wait is two switches. The steps do what Post and
// Ring do, one wait per call: the same events at the same times. The
// caller checks that the WQEs fit the send queue first (Post's error).
type PostRing struct {
	q      *QP
	wg     *gpu.WG
	ws     []nic.WQE
	w      nic.WQE // the WQE being written (a copy, as Post takes it)
	k      int     // its index in ws
	i      int     // its next field
	v      uint64
	s      uint64
	base   mem.Addr
	start  sim.Time
	pc, ph uint8
}

const (
	prWQE      = iota // start WQE k (or ring)
	prField           // the next field of WQE k
	prStore           // a field's store
	prRing            // the doorbell record
	prDBR             // its store
	prFence           // the fence's cost
	prRelease         // the system release
	prHostRead        // host-memory rings: the read that flushes the posted writes
	prBell            // the MMIO doorbell
	prBellDone        // its issue is over
	prDone
)

// NewPostRing returns the steps of posting ws on q and ringing once.
func (q *QP) NewPostRing(wg *gpu.WG, ws []nic.WQE) *PostRing {
	r := new(PostRing)
	q.InitPostRing(r, wg, ws)
	return r
}

// InitPostRing makes r the steps of posting ws on q and ringing once, as
// NewPostRing returns them: for a caller that reuses its PostRing once
// the steps finished (nothing keeps r after its Step returned true).
func (q *QP) InitPostRing(r *PostRing, wg *gpu.WG, ws []nic.WQE) {
	*r = PostRing{q: q, wg: wg, ws: ws}
}

// Step implements sim.Stepper.
func (r *PostRing) Step(p *sim.Proc) bool {
	q, wg := r.q, r.wg
	spec := q.node.spec
	for !p.Waited() {
		switch r.pc {
		case prWQE:
			if r.k == len(r.ws) {
				r.pc = prRing
				continue
			}
			r.start = wg.Now()
			r.w = r.ws[r.k]
			r.w.QPN = q.nq.Num
			r.s = q.pi % uint64(q.depth)
			r.base = q.slot(q.pi)
			r.i = 0
			r.pc = prField
		case prField:
			if r.i == nic.WQEWords {
				q.pi++
				q.stats.Posts++
				q.stats.WQETime += wg.Now() - r.start
				r.k++
				r.pc = prWQE
				continue
			}
			r.v = r.w.Word(r.i)
			if spec.WQEReuse && !dynamic(r.i) && q.sh(r.s)[r.i] == r.v {
				r.i++
				continue
			}
			r.pc = prStore
		case prStore:
			if !q.tryStore(wg, r.base+mem.Addr(8*r.i), r.v, spec.FieldStore, &r.ph) {
				continue
			}
			q.sh(r.s)[r.i] = r.v
			q.stats.Fields++
			r.i++
			r.pc = prField
		case prRing:
			if q.rung == q.pi {
				r.pc = prDone
				continue
			}
			r.start = wg.Now()
			r.pc = prDBR
		case prDBR:
			if q.tryStore(wg, q.dbr, q.pi, spec.DBRecord, &r.ph) {
				r.pc = prFence
			}
		case prFence:
			wg.Sleep(spec.Fence)
			r.pc = prRelease
		case prRelease:
			if wg.TryRelease(gpu.System) {
				r.pc = prHostRead
			}
		case prHostRead:
			r.pc = prBell
			if q.pool == mem.Host {
				wg.SleepUntil(flushRead(q, wg))
			}
		case prBell:
			r.pc = prBellDone
			q.bell(wg)
		case prBellDone:
			q.rung = q.pi
			q.stats.Doorbells++
			q.stats.DoorbellTime += wg.Now() - r.start
			r.pc = prDone
		default:
			return true
		}
	}
	return false
}

// tryStore is store in steps (ph: the caller's phase word, 0 at the
// start): false while it waits, true once it is over with no wait pending.
func (q *QP) tryStore(wg *gpu.WG, a mem.Addr, v uint64, c sim.Duration, ph *uint8) bool {
	if q.pool == mem.GPU {
		// The calibrated cost includes the store's own L1 access.
		return wg.TryStoreAfter(max(0, c-q.l1Time(wg)), a, v)
	}
	switch *ph {
	case 0:
		*ph = 1
		wg.Sleep(c)
		return false
	default:
		q.postHost(wg, a, v) // the thread does not wait for the link
		*ph = 0
		return true
	}
}

// bell writes the MMIO doorbell (ring's last part): BlueFlame's 64 B
// write with the one new WQE, or the producer index, by Ring's route
// (mmio: on a GH200 on over the NIC's PCIe link too); the caller then
// waits out its issue (SleepUntil already called here).
func (q *QP) bell(wg *gpu.WG) {
	n := q.node
	pi, nq, e := q.pi, q.nq, n.e
	if n.nic.BlueFlame() && q.pi-q.rung == 1 {
		// BlueFlame: one new WQE travels inside the MMIO write (64 B).
		var b [nic.WQESize]byte
		for i, v := range q.sh((q.pi - 1) % uint64(q.depth)) {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		w := nic.DecodeWQE(b[:])
		sf, vis := n.mmio(wg.Now(), nic.WQESize)
		e.At(vis, func() { nq.BlueFlameFrom(e.Now(), pi, w) })
		wg.SleepUntil(sf)
		return
	}
	sf, vis := n.mmio(wg.Now(), 8)
	e.AtH(vis, (*qpBell)(q), pi)
	wg.SleepUntil(sf)
}

// qpBell is a QP as the event at which its MMIO doorbell of producer
// index pi (the argument) reaches the NIC's link: a handler on the QP,
// not a closure per doorbell.
type qpBell QP

// Handle enters the doorbell into the NIC's link.
func (b *qpBell) Handle(pi uint64) { q := (*QP)(b); q.nq.DoorbellFrom(q.node.e.Now(), pi) }

// FieldsRing is GIO's device post after the slot's claim as a sim.Stepper:
// PostFields(w, dynamic), a system release and RingUnfenced, the same
// waits in the same order (a field's store cost and its store, the
// release, the doorbell record and the MMIO doorbell). Start it with
// Start; the zero value is ready for reuse.
type FieldsRing struct {
	q      *QP
	wg     *gpu.WG
	w      nic.WQE
	dyn    []int
	i      int // the next field
	s      uint64
	base   mem.Addr
	start  sim.Time
	pc, ph uint8
}

const (
	frField   = iota // the next field
	frStore          // a field's store
	frRelease        // the system release
	frRing           // the doorbell record
	frDBR            // its store
	frBell           // the MMIO doorbell's issue is over
	frDone
)

// Start begins posting w on q from wg, storing the dynamic words and any
// other word that differs from the slot's template (PostFields). It fails,
// naming the QP, when the send queue is full.
func (r *FieldsRing) Start(q *QP, wg *gpu.WG, w nic.WQE, dynamic []int) error {
	if q.Outstanding() >= uint64(q.depth) {
		return q.errFull()
	}
	w.QPN = q.nq.Num
	*r = FieldsRing{q: q, wg: wg, w: w, dyn: dynamic, s: q.pi % uint64(q.depth), base: q.slot(q.pi), start: wg.Now()}
	return nil
}

// Step implements sim.Stepper.
func (r *FieldsRing) Step(p *sim.Proc) bool {
	q, wg := r.q, r.wg
	spec := q.node.spec
	for !p.Waited() {
		switch r.pc {
		case frField:
			if r.i == nic.WQEWords {
				q.pi++
				q.stats.Posts++
				q.stats.WQETime += wg.Now() - r.start
				r.pc = frRelease
				continue
			}
			v := r.w.Word(r.i)
			isDyn := false
			for _, d := range r.dyn {
				isDyn = isDyn || d == r.i
			}
			if !isDyn && q.sh(r.s)[r.i] == v {
				r.i++
				continue
			}
			r.pc = frStore
		case frStore:
			v := r.w.Word(r.i)
			if !q.tryStore(wg, r.base+mem.Addr(8*r.i), v, spec.FieldStore, &r.ph) {
				continue
			}
			q.sh(r.s)[r.i] = v
			q.stats.Fields++
			r.i++
			r.pc = frField
		case frRelease:
			if wg.TryRelease(gpu.System) {
				r.pc = frRing
			}
		case frRing:
			if q.rung == q.pi {
				r.pc = frDone
				continue
			}
			r.start = wg.Now()
			r.pc = frDBR
		case frDBR:
			if !q.tryStore(wg, q.dbr, q.pi, spec.DBRecord, &r.ph) {
				continue
			}
			// RingUnfenced: the system release above is the fence.
			r.pc = frBell
			q.bell(wg)
		case frBell:
			q.rung = q.pi
			q.stats.Doorbells++
			q.stats.DoorbellTime += wg.Now() - r.start
			r.pc = frDone
		default:
			return true
		}
	}
	return false
}

// CQWait is CQ.WaitQP of a GPU-memory CQ as a sim.Stepper: polls (the L1
// invalidate when polls invalidate, the CQE slot's load) and, when a load
// finds no CQE, the closed-form idle until the first load that sees it,
// the same waits as the blocking loop. Start it with Start.
type CQWait struct {
	c     *CQ
	q     *QP
	wg    *gpu.WG
	keep  uint64
	start sim.Time
	t1    sim.Time // the idle loop's start
	poll  sim.Time // the poll's start (its trace span)
	load  sim.Time // the load's start (its trace span)
	n     sim.Duration
	k     uint64 // the slot polled
	pc    uint8
	seen  bool // the load saw a valid CQE
	bad   nic.CQE
	ok    bool
	read  func() // the load's read at its sample point, made once
	// inv is the invalidate's end when it is a mark (the load's issue
	// there: gpu.WG.AtomicLoadAtMark); InvEvents keeps it an event (tests
	// compare the two; Start keeps it).
	inv       sim.Mark
	InvEvents bool
}

const (
	cwMore    = iota // another poll?
	cwInv            // the poll's L1 invalidate
	cwLoad           // its load
	cwIdle           // the closed-form idle: wait for the CQE's write
	cwIdleTo         // then for the end of the first load that sees it
	cwIdleEnd        // did it see it?
	cwGot            // consume the CQE
	cwDone
)

// Steppable reports whether c's waits have a step form (a GPU-memory CQ).
func (c *CQ) Steppable() bool { return c.pool == mem.GPU }

// Start begins waiting until q has at most keep WQEs outstanding
// (WaitQP); c must be Steppable.
func (w *CQWait) Start(c *CQ, q *QP, wg *gpu.WG, keep uint64) {
	read, ev := w.read, w.InvEvents
	*w = CQWait{c: c, q: q, wg: wg, keep: keep, start: wg.Now(), ok: true, read: read, InvEvents: ev}
	if w.read == nil {
		w.read = func() { _, w.seen = w.c.cqeAt(w.k) }
	}
}

// Result returns the first error CQE seen, if any, once the steps are over.
func (w *CQWait) Result() (bad nic.CQE, ok bool) { return w.bad, w.ok }

// Step implements sim.Stepper.
func (w *CQWait) Step(p *sim.Proc) bool {
	c, wg := w.c, w.wg
	for !p.Waited() {
		switch w.pc {
		case cwMore:
			if w.q.Outstanding() <= w.keep {
				w.q.stats.PollTime += wg.Now() - w.start
				w.pc = cwDone
				continue
			}
			w.k, w.poll, w.load = c.ci, wg.Now(), wg.Now()
			c.Loads++
			w.pc = cwLoad
			if c.node.spec.PollInvalidate {
				// The invalidate's end only issues the load: a mark
				// where the load's time does not depend on when it
				// issues.
				if !w.InvEvents && wg.AtomicLoadAtMark(&w.inv, w.q.l1InvTime(wg), c.nq.SlotAddr(w.k)) {
					continue // (cwLoad goes on at the sample point)
				}
				w.pc = cwInv
				wg.Sleep(w.q.l1InvTime(wg))
			}
		case cwInv:
			w.pc = cwLoad
		case cwLoad:
			if !wg.TryAtomicLoad(c.nq.SlotAddr(w.k), w.read) {
				continue
			}
			c.traceLoad(wg, w.load)
			w.pc = cwGot
			if !w.seen {
				w.pc = cwIdle
			}
		case cwIdle:
			wg.PollStart()
			w.t1 = wg.Now()
			w.pc = cwIdleTo
			if _, ok := c.cqeAt(w.k); !ok {
				wg.Wait(c.node.mem.Watch(c.nq.SlotAddr(w.k)), "CQE")
			}
		case cwIdleTo:
			per, sample := c.loopTimes(wg, 0)
			w.n = 1 + loadsBefore(wg.Now()-w.t1, sample, per)
			c.Loads += uint64(w.n)
			w.pc = cwIdleEnd
			wg.SleepUntil(w.t1 + w.n*per)
		case cwIdleEnd:
			if wg.Engine().Tracer() != nil {
				per, _ := c.loopTimes(wg, 0)
				for i := range w.n {
					wg.Engine().Span(wg.Name(), traceGPULoad, w.t1+i*per, w.t1+(i+1)*per)
				}
			}
			w.pc = cwGot
			if _, ok := c.cqeAt(w.k); !ok {
				w.pc = cwIdle
			}
		case cwGot:
			// (Poll reads the CQE once its loop is over, a wait later.)
			e, _ := c.cqeAt(w.k)
			c.consume(e)
			wg.Engine().Span(wg.Name(), tracePoll, w.poll, wg.Now())
			w.q.stats.Polls++
			if e.Status != nic.WCSuccess && w.ok {
				w.bad, w.ok = e, false
			}
			w.pc = cwMore
		default:
			return true
		}
	}
	return false
}
