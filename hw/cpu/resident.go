package cpu

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Host cache residency of streaming compute (Thread.ComputeOn). A host
// reduction or copy over data its CPU touched recently, and no other agent
// wrote since, runs at the rate of the cache level that still holds it, not
// at the DRAM-miss rate: the documents' simulator's host is gem5 Ruby's
// CorePair organisation (two cores per L2, a private L1D each, a
// mostly-exclusive L3 at the directory; cpu.cache.*), with 16 outstanding
// requests per core and no prefetcher.
//
// The CPU keeps the ranges its streaming computations touched, oldest
// first, each with the core that touched it (or teamCore for a region
// spread over a team). A range is held by the highest level whose capacity
// the range and everything touched after it fit in, counting only what
// shares that level: the core's own ranges for its L1D, its L2 group's for
// the L2, everything for the L3 plus all L2s (mostly exclusive: the L3
// holds L2 victims). Another core's L2 serves at L3 latency (a probe of a
// peer cache is charged as an L3 hit). A write to memory by any agent
// (Memory.Touch: NIC DMA, GPU stores, watched words) removes the written
// lines, as a coherent write invalidates cached copies — whatever the
// CPU's own stores write through Bytes stays. A range is never split by
// level: one that does not fit whole is charged at the level below
// (conservative).

// teamCore is the core of a range touched by a multi-threaded region: its
// shares sit in several cores' caches, so no single core's L1D or L2 holds
// it; it is served from the L3 at best.
const teamCore = -1

// maxResident bounds the ranges kept; the oldest beyond it are dropped (as
// evicted).
const maxResident = 1024

// span is one touched range and the core that touched it, linked into the
// age order (prev older, next newer; none: -1).
type span struct {
	lo, hi     mem.Addr
	core       int
	prev, next int32
}

// residency is the ranges a CPU's caches hold. The ranges are disjoint;
// they are kept in age order (a list through the spans, oldest at head)
// for the capacity rules, and in address order (byAddr) so that a write by
// another agent — one per landed packet, against up to maxResident ranges
// at a thousand nodes — finds the few ranges it cuts by binary search
// instead of rebuilding the whole list.
type residency struct {
	l1, l2, llc uint64 // L1D per core, L2 per group, L3 plus every L2
	l2Cores     int
	limit       int // ranges kept at most (maxResident)
	spans       []span
	free        []int32  // unused entries of spans
	head, tail  int32    // oldest and newest (-1: none)
	byAddr      []int32  // the ranges by address (entries in spans; small, as a touch moves up to maxResident of them)
	bytes       uint64   // sum of the ranges' lengths
	lo, hi      mem.Addr // bounding box of the ranges (empty: lo == hi), checked by every write
	hint        int      // above's last answer
}

func newResidency(spec Spec) *residency {
	c := spec.Cache
	groups := uint64((spec.Cores + max(c.L2Cores, 1) - 1) / max(c.L2Cores, 1))
	return &residency{l1: uint64(c.L1DSize), l2: uint64(c.L2Size), llc: uint64(c.L3Size) + groups*uint64(c.L2Size),
		l2Cores: max(c.L2Cores, 1), limit: maxResident, head: -1, tail: -1}
}

// group returns the L2 group of core k (teamCore: none).
func (r *residency) group(k int) int {
	if k < 0 {
		return -1
	}
	return k / r.l2Cores
}

// rebound recomputes the bounding box after the index changed.
func (r *residency) rebound() {
	if n := len(r.byAddr); n > 0 {
		r.lo, r.hi = r.spans[r.byAddr[0]].lo, r.spans[r.byAddr[n-1]].hi
	} else {
		r.lo, r.hi = 0, 0
	}
}

// invalidate removes [a, a+n) from every span: another agent wrote it.
func (r *residency) invalidate(a mem.Addr, n int) {
	if n <= 0 || r.lo == r.hi || a >= r.hi || a+mem.Addr(n) <= r.lo {
		return
	}
	r.cut(mem.Line(a), mem.Line(a+mem.Addr(n)+mem.LineSize-1))
}

// above returns the index in byAddr of the first range ending after a.
// The previous answer is tried first (checked, never trusted): the packets
// of a message land one after another in the same gap between ranges, and
// each probe of the binary search is two dependent loads, cache misses at
// a thousand nodes.
func (r *residency) above(a mem.Addr) int {
	if h := r.hint; h <= len(r.byAddr) && (h == 0 || r.spans[r.byAddr[h-1]].hi <= a) &&
		(h == len(r.byAddr) || r.spans[r.byAddr[h]].hi > a) {
		return h
	}
	i, j := 0, len(r.byAddr)
	for i < j {
		h := int(uint(i+j) >> 1)
		if r.spans[r.byAddr[h]].hi <= a {
			i = h + 1
		} else {
			j = h
		}
	}
	r.hint = i
	return i
}

// newSpan returns a free entry holding [lo, hi) of core, unlinked.
func (r *residency) newSpan(lo, hi mem.Addr, core int) int32 {
	s := span{lo: lo, hi: hi, core: core, prev: -1, next: -1}
	if n := len(r.free); n > 0 {
		k := r.free[n-1]
		r.free = r.free[:n-1]
		r.spans[k] = s
		return k
	}
	r.spans = append(r.spans, s)
	return int32(len(r.spans) - 1)
}

// linkAfter puts k right after p in age order (p = -1: at the head; r.tail
// appends k as the newest).
func (r *residency) linkAfter(p, k int32) {
	r.spans[k].prev = p
	if p < 0 {
		r.spans[k].next = r.head
		if r.head >= 0 {
			r.spans[r.head].prev = k
		}
		r.head = k
	} else {
		n := r.spans[p].next
		r.spans[k].next = n
		r.spans[p].next = k
		if n >= 0 {
			r.spans[n].prev = k
		}
	}
	if r.spans[k].next < 0 {
		r.tail = k
	}
}

// unlink takes k out of the age order and frees it (byAddr is the
// caller's).
func (r *residency) unlink(k int32) {
	s := &r.spans[k]
	if s.prev >= 0 {
		r.spans[s.prev].next = s.next
	} else {
		r.head = s.next
	}
	if s.next >= 0 {
		r.spans[s.next].prev = s.prev
	} else {
		r.tail = s.prev
	}
	r.bytes -= uint64(s.hi - s.lo)
	r.free = append(r.free, k)
}

// cut removes [lo, hi) from the spans, keeping their order: a range cut in
// two leaves its lower piece, then its upper, where it was in age order.
func (r *residency) cut(lo, hi mem.Addr) {
	i := r.above(lo)
	j := i
	for j < len(r.byAddr) && r.spans[r.byAddr[j]].lo < hi {
		j++
	}
	if i == j {
		return
	}
	if k := r.byAddr[i]; j == i+1 && r.spans[k].lo < lo && r.spans[k].hi > hi {
		// Inside one range: split it.
		s := &r.spans[k]
		up := s.hi
		s.hi = lo
		r.bytes -= uint64(hi - lo)
		u := r.newSpan(hi, up, r.spans[k].core)
		r.linkAfter(k, u)
		r.byAddr = append(r.byAddr, 0)
		copy(r.byAddr[i+2:], r.byAddr[i+1:])
		r.byAddr[i+1] = u
		return
	}
	w := i
	for _, k := range r.byAddr[i:j] {
		s := &r.spans[k]
		switch {
		case s.lo < lo: // the first range: keep its lower piece
			r.bytes -= uint64(s.hi - lo)
			s.hi = lo
		case s.hi > hi: // the last range: keep its upper piece
			r.bytes -= uint64(hi - s.lo)
			s.lo = hi
		default:
			r.unlink(k)
			continue
		}
		r.byAddr[w] = k
		w++
	}
	r.byAddr = append(r.byAddr[:w], r.byAddr[j:]...)
	r.rebound()
}

// touch records that core touched [lo, hi) (whole lines), newest.
func (r *residency) touch(core int, lo, hi mem.Addr) {
	lo, hi = mem.Line(lo), mem.Line(hi+mem.LineSize-1)
	if hi <= lo {
		return
	}
	r.cut(lo, hi)
	k := r.newSpan(lo, hi, core)
	r.linkAfter(r.tail, k)
	r.bytes += uint64(hi - lo)
	i := r.above(lo)
	r.byAddr = append(r.byAddr, 0)
	copy(r.byAddr[i+1:], r.byAddr[i:])
	r.byAddr[i] = k
	// Drop the oldest spans the caches can no longer hold.
	for len(r.byAddr) > 1 && (r.bytes > r.llc || len(r.byAddr) > r.limit) {
		h := r.head
		i := r.above(r.spans[h].lo)
		r.byAddr = append(r.byAddr[:i], r.byAddr[i+1:]...)
		r.unlink(h)
	}
	r.rebound()
}

// levels adds to b, per level, the bytes of [lo, hi) a streaming access
// by core finds there (lines no span holds: DRAM).
func (r *residency) levels(core int, lo, hi mem.Addr, b *[nLevels]uint64) {
	if hi <= lo {
		return
	}
	// The bytes of [lo, hi) some range holds, from the address index: the
	// walk in age order below (newest first, as the capacity rules count)
	// stops once it has found them all, and is skipped when there are
	// none (a packet's fresh receive slot).
	held := uint64(0)
	if lo < r.hi && hi > r.lo {
		for _, k := range r.byAddr[r.above(lo):] {
			s := &r.spans[k]
			if s.lo >= hi {
				break
			}
			held += uint64(min(s.hi, hi) - max(s.lo, lo))
		}
	}
	found := uint64(0)
	if held > 0 {
		var own, grp, all uint64 // bytes touched after the span: by core, by its L2 group, by anyone
		g := r.group(core)
		for k := r.tail; k >= 0 && found < held; k = r.spans[k].prev {
			s := &r.spans[k]
			n := uint64(s.hi - s.lo)
			if ov := min(s.hi, hi) - max(s.lo, lo); s.hi > lo && s.lo < hi && ov > 0 {
				lv := DRAM
				switch {
				case core >= 0 && s.core == core && own+n <= r.l1:
					lv = L1
				case g >= 0 && r.group(s.core) == g && grp+n <= r.l2:
					lv = L2
				case all+n <= r.llc:
					lv = L3
				}
				b[lv] += uint64(ov)
				found += uint64(ov)
			}
			all += n
			if s.core == core && core >= 0 {
				own += n
			}
			if g >= 0 && r.group(s.core) == g {
				grp += n
			}
		}
	}
	b[DRAM] += uint64(hi-lo) - found
}

// Access is one range a host computation streams (mem.Access).
type Access = mem.Access

// mix is the share of a region's bytes each level serves.
type mix struct {
	frac [nLevels]float64
	on   bool // false: everything from DRAM (Compute)
}

// levelLatency returns the load-to-use latency of a line served by level l.
func (s Spec) levelLatency(l Level) sim.Duration {
	c := s.Cache
	switch l {
	case L1:
		return s.Freq.Cycles(float64(c.L1DLatency))
	case L2:
		return s.Freq.Cycles(float64(c.L2Latency))
	case L3:
		return s.Freq.Cycles(float64(c.L3Latency)) + c.L3Path
	}
	return s.MissLatency()
}

// regionMix looks up where the bytes of acc are for a region run by core
// with threads threads, then records them as touched. A write to a range
// an earlier read of the same region covers finds its lines in the L1D
// (the read just brought them).
func (c *CPU) regionMix(core, threads int, acc []Access) (mix, uint64) {
	r := c.res
	if threads > 1 {
		core = teamCore
	}
	var b [nLevels]uint64
	for i, a := range acc {
		lo, hi := a.Addr, a.Addr+mem.Addr(a.Len)
		if a.Write {
			covered := uint64(0)
			for _, p := range acc[:i] {
				if plo, phi := max(lo, p.Addr), min(hi, p.Addr+mem.Addr(p.Len)); !p.Write && phi > plo {
					covered += uint64(phi - plo)
				}
			}
			covered = min(covered, a.Len)
			b[L1] += covered
			if covered == a.Len {
				continue
			}
		}
		r.levels(core, lo, hi, &b)
	}
	var total uint64
	for _, a := range acc {
		total += a.Len
		if a.Len > 0 {
			r.touch(core, a.Addr, a.Addr+mem.Addr(a.Len))
		}
	}
	var sum uint64
	for _, n := range b {
		sum += n
	}
	m := mix{on: true}
	if sum == 0 {
		return m, total
	}
	for l, n := range b {
		m.frac[l] = float64(n) / float64(sum)
	}
	return m, total
}

// ComputeOn is Compute over the ranges acc (each read or written once; a
// read-modify-write lists the range read, then written): the region moves
// their summed lengths, and each level of the host's caches serves the
// share of the bytes it holds (see the residency comment above), the rest
// coming from DRAM as in Compute. The ranges are then held by the caches
// of the calling thread's core (threads = 1) or of the team.
func (t *Thread) ComputeOn(threads int, acc ...Access) {
	if threads < 1 {
		panic(fmt.Sprintf("cpu: %s computes with %d threads", t.track, threads))
	}
	m, total := t.cpu.regionMix(t.core.id, threads, acc)
	t.mix = m
	t.Compute(total, threads)
	t.mix = mix{}
}

// BeginComputeOn starts ComputeOn(threads, acc...) as steps.
func (t *Thread) BeginComputeOn(threads int, acc ...Access) {
	if threads < 1 {
		panic(fmt.Sprintf("cpu: %s computes with %d threads", t.track, threads))
	}
	m, total := t.cpu.regionMix(t.core.id, threads, acc)
	if total > 0 {
		t.mix = m // tryCompute clears it
	}
	t.BeginCompute(total, threads)
}
