package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Entry status values (the dissertation's ComP-Net chapter). failed is this
// simulator's: the network reported the operation failed.
const (
	statusFree     = 0
	statusPosted   = 1
	statusComplete = 2
	statusFailed   = 3
)

// Entry flags.
const (
	flagBlocking = 1 << 0
	flagInline   = 1 << 1
)

// entrySize is one queue entry [DOC].
const entrySize = 64

// queue is one work-group's ring of Q entries, its shared read index
// (own line) and one result word per slot (own lines: the NIC writes
// them).
type queue struct {
	idx     int
	q       uint64
	ring    mem.Addr
	readIdx mem.Addr
	results mem.Addr
	// status is the array of per-slot completion words in GPU memory when
	// the entries live in host memory (ROC_SHMEM's reverse offload);
	// 0 when the status is the entry's word 0.
	status mem.Addr
	owner  *service
	// ctrl: the ring keeps only its used lines' bytes (allocRing), each
	// slot's marked at its first claim.
	ctrl bool

	// producer state (the work-group's LDS)
	w, lr uint64
	done  []bool // slot known FREE or COMPLETE by the producer

	// consumer state (the service thread's private read index)
	rd uint64

	// stamps are the phase boundaries of each slot's blocking call, for
	// the decomposition (bookkeeping, not simulated memory), by slot, made
	// at the slot's first stamp. Why a map: a row for every slot of the
	// ring was 135 KB per GPU of halo3d's device-shmem runs (a ring per
	// work-group, whose blocking calls are one quiet an exchange); a slot
	// keeps its row from lap to lap, as the ring's array did.
	stamps map[uint64]*[NumPhases + 1]sim.Time
}

// stamp records that the blocking call in slot seq reached boundary i.
func (q *queue) stamp(seq uint64, i int, t sim.Time) {
	if q.stamps == nil {
		q.stamps = make(map[uint64]*[NumPhases + 1]sim.Time)
	}
	row := q.stamps[seq%q.q]
	if row == nil {
		row = new([NumPhases + 1]sim.Time)
		q.stamps[seq%q.q] = row
	}
	row[i] = t
}

// claimFirst marks the line of slot w, claimed by the producer, as
// control words on the ring's first lap (allocRing's payload-free rings),
// before anything is written to it.
func (q *queue) claimFirst(m *mem.Memory) {
	if q.ctrl && q.w < q.q {
		m.MarkControl(q.slot(q.w), entrySize)
	}
}

func (q *queue) slot(i uint64) mem.Addr   { return q.ring + mem.Addr(i%q.q)*entrySize }
func (q *queue) result(i uint64) mem.Addr { return q.results + mem.Addr(i%q.q)*8 }

// stat is where the producer reads slot i's completion: the entry's word
// 0, or its word in the GPU-memory status array.
func (q *queue) stat(i uint64) mem.Addr {
	if q.status == 0 {
		return q.slot(i)
	}
	return q.status + mem.Addr(i%q.q)*8
}

// entry is a decoded queue entry. Word layout (little-endian, §1.2):
// 0 status|op<<32|flags<<48, 1 PE|len<<32, 2 dst, 3 src or inline data,
// 4 compare value, 5 ctx id, 6 sequence number (this simulator's use of
// the reserved bytes: a consumer recognises an entry of an earlier lap).
type entry struct {
	status uint32
	op     Op
	flags  uint16
	pe     int
	len    uint64
	dst    mem.Addr
	src    uint64
	cond   uint64
	ctx    uint64
	seq    uint64
}

func (e entry) blocking() bool { return e.flags&flagBlocking != 0 }

// entryLoads is how many loads a consumer issues to read an entry in
// place after the poll that saw its status: one per field of the entry
// layout that its op uses — the op code, the flags and the context id
// always; the PE, the length, the destination and the source (or inline
// data, or an atomic's operand) for a data or atomic op; the compare
// value for a compare-swap. Through a coherent cache they hit the line
// the poll brought in. Across PCIe each is an uncached load, and x86
// performs uncached (UC) loads one at a time, in program order and
// never speculatively (Intel SDM vol. 3A §11.3); the documents' gem5
// out-of-order core issues such strictly ordered loads only from the
// head of its reorder buffer (src/cpu/o3/lsq_unit.cc, LSQUnit::read),
// so each field costs its own round trip.
func entryLoads(op Op) int {
	n := 3 // op code, flags, context id
	switch {
	case op == OpFence || op == OpQuiet:
	case op == OpCSwap:
		n += 5 // PE, length, destination, new value, compare value
	default:
		n += 4 // PE, length, destination, source or inline data or operand
	}
	return n
}

// entryOp is the op code of the entry at slot as memory holds it: what
// the consumer's first field load after the poll reads.
func entryOp(m *mem.Memory, slot mem.Addr) Op { return Op(uint16(m.Load64(slot) >> 32)) }

func encode(r *Request, ctx int, seq uint64) [7]uint64 {
	flags := uint64(0)
	if r.Blocking {
		flags |= flagBlocking
	}
	src := uint64(r.Src)
	if r.Op == OpP || r.Op.atomic() {
		flags |= flagInline // data smaller than 8 bytes travels in the entry
		src = r.Value
	}
	if r.Op == OpGet {
		src = uint64(r.Src)
	}
	return [7]uint64{statusPosted | uint64(r.Op)<<32 | flags<<48, uint64(uint32(r.PE)) | r.Len<<32,
		uint64(r.Dst), src, r.Cond, uint64(ctx), seq}
}

func decode(w [8]uint64) entry {
	return entry{status: uint32(w[0]), op: Op(uint16(w[0] >> 32)), flags: uint16(w[0] >> 48),
		pe: int(int32(uint32(w[1]))), len: w[1] >> 32, dst: mem.Addr(w[2]), src: w[3], cond: w[4], ctx: w[5], seq: w[6]}
}

// producer is how a work-group reaches its queue's memory in one backend:
// plain stores, the release and acquire of the publish scope, loads, and
// a free look at the coherent value (to sleep through unchanged polls).
type producer interface {
	store(wg *gpu.WG, a mem.Addr, v uint64)
	fill(wg *gpu.WG, slot mem.Addr, words [7]uint64) // words 1..6 of an entry
	release(wg *gpu.WG)
	acquire(wg *gpu.WG)
	load(wg *gpu.WG, a mem.Addr) uint64
	peek(a mem.Addr) uint64
}

// qchan is a work-group's channel: the producer protocol of
// the dissertation's ComP-Net chapter.
type qchan struct {
	b  *queueBackend
	q  *queue
	wg *gpu.WG
}

func (c *qchan) Close() {}

// Submit runs steps 1–5 of the producer protocol on the leader
// work-item.
func (c *qchan) Submit(r *Request) error {
	b, q, wg, p := c.b, c.q, c.wg, c.b.prod
	start := wg.Now()
	wg.Scalar(b.spec.ProducerInstr)
	c.reserve()
	s := q.w % q.q
	slot := q.slot(q.w)
	words := encode(r, q.idx, q.w)
	if q.status != 0 {
		// The slot's status word in GPU memory back to POSTED before the
		// entry is published (ROC_SHMEM resets it after each completion).
		p.store(wg, q.stat(q.w), statusPosted)
	}
	p.fill(wg, slot, words) // 2: fill …
	p.release(wg)           // … and release at the publish scope
	p.store(wg, slot, words[0])
	p.release(wg) // 3: post
	if r.Blocking {
		q.stamp(q.w, PhasePost, start)
		q.stamp(q.w, PhasePickup, wg.Now())
	}
	q.done[s] = false
	if q.owner != nil {
		q.owner.nudge()
	}
	seq := q.w
	q.w++ // 4
	if !r.Blocking {
		return nil
	}
	if err := c.complete(); err != nil {
		return err
	}
	q.stamp(seq, NumPhases, wg.Now())
	st := &b.dev.stats
	ts := q.stamps[seq%q.q] // stamped above
	for i := range NumPhases {
		st.Phases[i] += ts[i+1] - ts[i]
	}
	st.Phased++
	if r.Op.fetches() {
		r.Result = p.load(wg, q.result(seq))
	}
	return nil
}

// reserve is step 1: a slot is free when the ring does not look full and
// the slot is not still POSTED from the previous lap (a pending blocking
// entry the consumer already skipped, §1.4 step 4).
func (c *qchan) reserve() {
	q, wg, p := c.q, c.wg, c.b.prod
	for {
		if q.w-q.lr >= q.q {
			q.lr = p.load(wg, q.readIdx) // 1b: refresh the stale read index
			if q.w-q.lr >= q.q {
				c.b.dev.stats.RingFull++
				lr := q.lr
				c.waitWhile(q.readIdx, "a free slot (ring full)", func(v uint64) bool { return v == lr })
				p.acquire(wg)
				continue
			}
		}
		s := q.w % q.q
		if q.w < q.q || q.done[s] {
			q.claimFirst(wg.Mem())
			return
		}
		slot := q.stat(q.w)
		st := p.load(wg, slot)
		if uint32(st) != statusPosted {
			q.done[s] = true
			return
		}
		c.waitWhile(slot, "a slot still POSTED from the previous lap", posted)
		p.acquire(wg)
	}
}

// complete is step 5: poll the status of every entry in [localReadIdx,
// writeIdx) not yet seen complete, acquire after each pass, until all are
// COMPLETE.
func (c *qchan) complete() error {
	q, wg, p := c.q, c.wg, c.b.prod
	var failed bool
	for {
		var first uint64
		pending := false
		for i := q.lr; i < q.w; i++ {
			s := i % q.q
			if q.done[s] {
				continue
			}
			st := uint32(p.load(wg, q.stat(i)))
			if st == statusComplete || st == statusFailed {
				q.done[s] = true
				failed = failed || st == statusFailed
				continue
			}
			if !pending {
				first, pending = i, true
			}
		}
		p.acquire(wg)
		if !pending {
			break
		}
		c.waitWhile(q.stat(first), "completion of its queue entries", posted)
	}
	if failed {
		return fmt.Errorf("%w: queue %d", ErrFailed, q.idx)
	}
	return nil
}

func posted(v uint64) bool { return uint32(v) == statusPosted }

// waitWhile sleeps while the word at a, as the coherence point holds it,
// satisfies cond: the polls in between would all see no change. It never
// misses a change made during the work-group's last load.
func (c *qchan) waitWhile(a mem.Addr, what string, cond func(uint64) bool) {
	m := c.wg.Mem()
	for cond(c.b.prod.peek(a)) {
		c.wg.Wait(m.Watch(a), what)
	}
}
