package verbs

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
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
	return &PostRing{q: q, wg: wg, ws: ws}
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
	switch *ph {
	case 0:
		*ph = 1
		if q.pool == mem.GPU {
			// The calibrated cost includes the store's own L1 access.
			g := wg.GPU().Spec()
			wg.Sleep(max(0, c-g.Cycles(g.L1Cycles)))
		} else {
			wg.Sleep(c)
		}
		return false
	default:
		if q.pool == mem.GPU {
			if !wg.TryStore64(a, v) {
				return false
			}
			*ph = 0
			return true
		}
		q.postHost(wg, a, v) // the thread does not wait for the link
		*ph = 0
		return true
	}
}

// bell writes the MMIO doorbell (ring's last part): BlueFlame's 64 B
// write with the one new WQE, or the producer index; the caller then
// waits out its issue (SleepUntil already called here).
func (q *QP) bell(wg *gpu.WG) {
	n := q.node
	pi, nq, e := q.pi, q.nq, n.e
	if n.nic.Spec().VerbsBlueFlame && q.pi-q.rung == 1 {
		var b [nic.WQESize]byte
		for i, v := range q.sh((q.pi - 1) % uint64(q.depth)) {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		w := nic.DecodeWQE(b[:])
		sf, vis := n.gpuLink.PostedWrite(pcie.Up, wg.Now(), nic.WQESize)
		e.At(vis, func() { nq.BlueFlameFrom(e.Now(), pi, w) })
		wg.SleepUntil(sf)
		return
	}
	sf, vis := n.gpuLink.PostedWrite(pcie.Up, wg.Now(), 8)
	e.At(vis, func() { nq.DoorbellFrom(e.Now(), pi) })
	wg.SleepUntil(sf)
}
