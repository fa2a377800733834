package gpu

import (
	"slices"
	"sort"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// L2-uncacheable pages and the stale-line check (the GIO slides, the
// GIO fix). In dGPU mode the NIC's writes land in GPU memory without
// probing the write-back L2, so an L2 line filled before them keeps
// returning the old bytes. Pages marked with SetUncached bypass the L1
// and the L2: loads read memory and stores reach it after the memory
// latency, like system-scope atomics. With a checker attached to the
// memory, an L2 hit whose clean bytes differ from memory is reported.

// SetUncached maps [a, a+n) L2-uncacheable (GIO's NIC-visible pages).
// The ranges are kept sorted by start and disjoint (overlapping or
// touching ones merged), so a lookup is a binary search: GIO marks a CQ
// and a QP's rings per (context, PE), thousands of ranges per GPU at a
// few hundred nodes.
func (g *GPU) SetUncached(a mem.Addr, n uint64) {
	lo, hi := a, a+mem.Addr(n)
	if lo >= hi {
		return
	}
	// The first range that ends at or after lo and the first that starts
	// after hi: every range between them overlaps or touches [lo, hi).
	i := sort.Search(len(g.uncached), func(i int) bool { return g.uncached[i][1] >= lo })
	j := sort.Search(len(g.uncached), func(j int) bool { return g.uncached[j][0] > hi })
	if i < j {
		lo, hi = min(lo, g.uncached[i][0]), max(hi, g.uncached[j-1][1])
	}
	g.uncached = slices.Replace(g.uncached, i, j, [2]mem.Addr{lo, hi})
	g.uncachedGen++
	if g.uncachedMemo != nil {
		*g.uncachedMemo = uncachedMemo{}
	}
}

// The memo of Uncached: direct-mapped tables of pages and of lines whose
// answer is the same for every address in them (wholly inside one range
// or wholly outside all), entry = page<<2 | 2 | uncached (line<<2 for a
// line). A work-group alternates between a few pages (its QP's ring, its
// CQ, its data), and with thousands of ranges each binary search was a
// dozen cache misses (4-5 % of a 256-node GIO run). A QP's rings and CQ
// are not whole pages (each reservation ends with a guard line), so the
// pages they share with their neighbours' are answered per line.
const (
	uncachedMemoSize  = 64
	uncachedPage      = 12 // log2 of the memo's page size
	uncachedLinesSize = 256
)

type uncachedMemo struct {
	pages [uncachedMemoSize]uint64
	lines [uncachedLinesSize]uint64
}

// Uncached reports whether a lies in an L2-uncacheable page.
func (g *GPU) Uncached(a mem.Addr) bool {
	pg := uint64(a) >> uncachedPage
	m := g.uncachedMemo
	if m == nil {
		m = new(uncachedMemo)
		g.uncachedMemo = m
	}
	e := &m.pages[pg%uncachedMemoSize]
	if *e>>2 == pg && *e&2 != 0 {
		return *e&1 != 0
	}
	ln := uint64(a) / mem.LineSize
	le := &m.lines[ln%uncachedLinesSize]
	if *le>>2 == ln && *le&2 != 0 {
		return *le&1 != 0
	}
	u := g.uncached
	i := sort.Search(len(u), func(i int) bool { return u[i][1] > a })
	in := i < len(u) && a >= u[i][0]
	// Memoise the page, or else the line, when every address in it
	// answers the same.
	same := func(lo, hi mem.Addr) bool {
		if in {
			return u[i][0] <= lo && hi <= u[i][1]
		}
		return (i == 0 || u[i-1][1] <= lo) && (i == len(u) || hi <= u[i][0])
	}
	bit := uint64(0)
	if in {
		bit = 1
	}
	switch {
	case same(mem.Addr(pg<<uncachedPage), mem.Addr((pg+1)<<uncachedPage)):
		*e = pg<<2 | 2 | bit
	case same(mem.Addr(ln*mem.LineSize), mem.Addr((ln+1)*mem.LineSize)):
		*le = ln<<2 | 2 | bit
	}
	return in
}

// checkStale reports an L2 hit on line l whose clean bytes differ from
// memory: another agent (the NIC) wrote memory under the line.
func (w *WG) checkStale(l mem.Addr, cl *cline, off mem.Addr) {
	c := w.g.mem.Checker()
	if c == nil || cl == nil {
		return
	}
	var cur [mem.LineSize]byte
	w.g.mem.Read(l, cur[:])
	for i := off; i < off+8 && i < mem.LineSize; i++ {
		if cl.dirty&(1<<i) == 0 && cl.data[i] != cur[i] {
			c.Report(mem.Hazard{At: w.Now(), Agent: w.Name(), Addr: l + off,
				What: "load hit a stale L2 line (the NIC wrote memory without probing the L2)",
				Fix:  "map NIC-visible pages L2-uncacheable (GIO) or invalidate the L2 with a system-scope acquire"})
			return
		}
	}
}

// ucSpans is a work-group's memo of Uncached: the last few spans it
// reached, each a maximal range of addresses with one answer (an
// L2-uncacheable range, or the gap between two), replaced round-robin.
// A GIO put's device stores go to its QP's WQE slots, which the GPU's
// line memo (a few hundred lines for 8 work-groups × 8 QPs × 64 slots)
// kept evicting, so that most of them were a binary search over
// thousands of ranges (2-3 % of a 64-node GIO allreduce's profile); a
// work-group's own spans are few (its QPs' rings, its CQs, its flags).
type ucSpans struct {
	gen  uint32 // GPU.uncachedGen when filled
	next uint8
	s    [4]ucSpan
}

// ucSpan is one span [lo, hi) and its answer; hi == 0 is unset.
type ucSpan struct {
	lo, hi mem.Addr
	in     bool
}

// uncached is g.Uncached(a) for the work-group's own accesses, through
// its span memo.
func (w *WG) uncached(a mem.Addr) bool {
	g := w.g
	if g.uncached == nil {
		return false
	}
	m := &w.uc
	if m.gen != g.uncachedGen {
		*m = ucSpans{gen: g.uncachedGen}
	}
	for i := range m.s {
		if sp := &m.s[i]; a >= sp.lo && a < sp.hi {
			return sp.in
		}
	}
	lo, hi, in := g.uncachedSpan(a)
	m.s[m.next] = ucSpan{lo: lo, hi: hi, in: in}
	m.next = (m.next + 1) % uint8(len(m.s))
	return in
}

// uncachedSpan returns the span of a: the L2-uncacheable range holding
// it (in), or the gap between the ranges around it, [lo, hi).
func (g *GPU) uncachedSpan(a mem.Addr) (lo, hi mem.Addr, in bool) {
	u := g.uncached
	i := sort.Search(len(u), func(i int) bool { return u[i][1] > a })
	if i < len(u) && a >= u[i][0] {
		return u[i][0], u[i][1], true
	}
	hi = ^mem.Addr(0)
	if i > 0 {
		lo = u[i-1][1]
	}
	if i < len(u) {
		hi = u[i][0]
	}
	return lo, hi, false
}
