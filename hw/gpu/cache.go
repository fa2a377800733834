package gpu

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// cache holds line copies: what a non-coherent cache returns until it is
// invalidated. Eviction is FIFO.
type cache struct {
	// An L1 (small) keeps its first few lines in few, in fill order, with
	// lines and order empty: a polling work-group's L1 holds a line or
	// two between acquires, and at a thousand nodes the map's table and
	// the order's array, outside this struct, were two cache misses per
	// acquire (its invalidation) and per fill. A fill that finds few full
	// (or its line already there) moves them to lines and order first;
	// clear makes the cache small again. The lines, their order and what
	// every operation returns are the same either way.
	small bool
	nfew  int
	few   [4]lineEnt
	lines lineMap
	order []mem.Addr
	cap   int
	// dirtied lists the lines made dirty since the last writeBack, so a
	// system release visits those, not every line of a 16 K-line L2.
	dirtied []dirtyRef
	seq     uint64 // fills so far: a line's position in order
	// free holds copies that left the cache and that nothing refers to
	// any more, for the next fills: a GPU-TN work-group's polls fill a
	// line after every acquire (which clears the L1).
	free sim.FreeList[*cline]
}

type cline struct {
	data   [mem.LineSize]byte
	dirty  uint64 // one bit per byte written since the fill: GPU caches write back byte masks
	seq    uint64 // fill number (the order writeBack flushes in)
	listed bool   // in dirtied
	loads  uint32 // pending loads that read the copy when their latency ends (wgPhases.ldLine)
	// stored marks, one bit per byte, what the CU's stores wrote into an
	// L1 copy since its fill: memory's data, arriving later at a pending
	// load's sample point (WG.resample), is older than those bytes.
	stored uint64
	free   bool // in the cache's free list
	// skipper is the work-group whose pending load of this copy skipped
	// its end (WG.skipLoadEnd): a store into the copy before that end
	// would change what the load returns, so it nudges the work-group.
	skipper *sim.Proc
	// pend is the deferred sample point of the pending poll load that
	// filled the copy (sample.go): memory's data the copy takes when it is
	// first read after the point (GPU.settled).
	pend *sample
}

// release offers cl, which has left the cache, for reuse unless a pending
// load or the dirty list still refers to it.
func (c *cache) release(cl *cline) {
	if cl.loads == 0 && !cl.listed && !cl.free {
		cl.free = true
		c.free.Put(cl)
	}
}

// dirtyRef names a line copy in dirtied; a copy evicted or dropped since
// is no longer lines[l] and is skipped.
type dirtyRef struct {
	l  mem.Addr
	cl *cline
}

// write marks the bytes mask << off of line l's copy cl dirty (the
// caller has written them into cl.data).
func (c *cache) write(l mem.Addr, cl *cline, off mem.Addr, mask uint64) {
	cl.dirty |= mask << off
	if cl.listed {
		return
	}
	cl.listed = true
	if len(c.dirtied) >= 2*c.cap+64 {
		c.compact() // copies evicted without a release in between
	}
	c.dirtied = append(c.dirtied, dirtyRef{l, cl})
}

// compact drops the entries of dirtied whose copy has left the cache or
// is clean again, so the list stays within the cache's size.
func (c *cache) compact() {
	keep := c.dirtied[:0]
	for _, d := range c.dirtied {
		if c.get(d.l) == d.cl && d.cl.dirty != 0 {
			keep = append(keep, d)
		} else {
			d.cl.listed = false
		}
	}
	clear(c.dirtied[len(keep):])
	c.dirtied = keep
}

// flush writes the dirty bytes of the line at l to m and cleans it. Only
// written bytes go back, so data another agent (or bulk traffic) put in the
// rest of the line survives.
func (cl *cline) flush(l mem.Addr, m *mem.Memory) {
	for d := cl.dirty; d != 0; {
		lo := bits.TrailingZeros64(d)
		hi := lo + bits.TrailingZeros64(^(d >> lo))
		m.Write(l+mem.Addr(lo), cl.data[lo:hi])
		if hi == 64 {
			break
		}
		d &^= (uint64(1)<<hi - 1)
	}
	cl.dirty = 0
}

// l1Fill returns the work-group's CU's L1 for a fill, made on the first.
func (w *WG) l1Fill() *cache {
	cu := w.cu
	if cu.l1 == nil {
		cu.l1 = newCache(w.g.spec.L1Lines)
		cu.l1.small = true
	}
	return cu.l1
}

func newCache(capacity int) *cache {
	return &cache{cap: capacity}
}

// get returns l's copy, or nil; nil on a nil cache (an L1 never filled).
func (c *cache) get(l mem.Addr) *cline {
	if c == nil {
		return nil
	}
	for i := range c.nfew {
		if c.few[i].l == l {
			return c.few[i].cl
		}
	}
	return c.lines.get(l)
}

// spill moves the lines kept in few to lines and order, in fill order.
func (c *cache) spill() {
	for i := range c.nfew {
		e := &c.few[i]
		c.lines.put(e.l, e.cl)
		c.order = append(c.order, e.l)
		*e = lineEnt{}
	}
	c.nfew = 0
}

// fill inserts a line copied from src, evicting the oldest line when full.
// An evicted dirty line is written to wb (may be nil for write-through
// caches).
func (c *cache) fill(l mem.Addr, src *mem.Memory, wb *mem.Memory) *cline {
	if c.small && len(c.order) == 0 && c.nfew < min(len(c.few), c.cap) && c.get(l) == nil {
		// No eviction (fewer lines than the capacity), a new line: kept in few.
		cl := c.newLine()
		src.Read(l, cl.data[:])
		c.few[c.nfew] = lineEnt{l, cl}
		c.nfew++
		return cl
	}
	if c.nfew > 0 {
		c.spill()
	}
	if c.lines.n >= c.cap && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		ol := c.lines.get(old)
		if ol != nil && ol.dirty != 0 && wb != nil {
			ol.flush(old, wb)
		}
		c.lines.del(old)
		if ol != nil {
			c.release(ol)
		}
	}
	cl := c.newLine()
	src.Read(l, cl.data[:])
	c.lines.put(l, cl)
	c.order = append(c.order, l)
	return cl
}

// newLine returns an empty copy with the next fill number, recycled when
// one is free.
func (c *cache) newLine() *cline {
	c.seq++
	cl, ok := c.free.Get()
	if ok {
		*cl = cline{seq: c.seq}
	} else {
		cl = &cline{seq: c.seq}
	}
	return cl
}

// clear drops every line; a nil cache (an L1 never filled) holds none.
func (c *cache) clear() {
	if c == nil {
		return
	}
	for i := range c.nfew {
		c.release(c.few[i].cl)
		c.few[i] = lineEnt{}
	}
	c.nfew = 0
	if len(c.order) == 0 {
		c.dirtied = c.dirtied[:0]
		return // (lines is empty too: every line is in order)
	}
	if len(c.order) <= 16 {
		// Every line is in order (a dropped line's address may be there
		// twice, hence release's check): looking the few lines of a
		// polling work-group's L1 up is cheaper than ranging over the map.
		for _, l := range c.order {
			if cl := c.lines.get(l); cl != nil {
				c.release(cl)
			}
		}
	} else {
		for _, e := range c.lines.ents {
			if e.cl != nil {
				c.release(e.cl)
			}
		}
	}
	c.lines.reset(c.order)
	c.order = c.order[:0]
	c.dirtied = c.dirtied[:0]
}

// writeBack writes dirty lines to m, in fill order, and returns how many
// there were.
func (c *cache) writeBack(m *mem.Memory) int {
	live := c.dirtied[:0]
	for _, d := range c.dirtied {
		d.cl.listed = false
		if c.get(d.l) == d.cl && d.cl.dirty != 0 {
			live = append(live, d)
		}
	}
	slices.SortFunc(live, func(a, b dirtyRef) int { return cmp.Compare(a.cl.seq, b.cl.seq) })
	for _, d := range live {
		d.cl.flush(d.l, m)
	}
	n := len(live)
	clear(c.dirtied)
	c.dirtied = c.dirtied[:0]
	return n
}

// lineMap is a cache's index from line to copy: open addressing with
// linear probing and backward-shift deletion. It replaced a Go map, whose
// lookup (a work-group's load or store, every CP poll through the L2's
// copies) was 5 % of a device-shmem run. Line 0 is never in it (no node
// memory is at address 0): ents[i].l == 0 marks a free slot. Each line
// sits beside its copy in one slot (16 bytes, four to a cache line): at a
// thousand nodes a polling work-group's L1 map is out of the host's caches
// at every acquire, and separate key and value arrays made each lookup two
// misses instead of one.
type lineMap struct {
	ents []lineEnt
	n    int
}

// lineEnt is one slot of a lineMap.
type lineEnt struct {
	l  mem.Addr
	cl *cline
}

// slot returns where l's probe starts.
func (x *lineMap) slot(l mem.Addr) int {
	return int((uint64(l) >> 6 * 0x9E3779B97F4A7C15) >> (64 - bits.Len(uint(len(x.ents)-1))))
}

// get returns l's copy, or nil.
func (x *lineMap) get(l mem.Addr) *cline {
	if x.n == 0 {
		return nil
	}
	m := len(x.ents) - 1
	for i := x.slot(l); ; i = (i + 1) & m {
		switch e := &x.ents[i]; e.l {
		case l:
			return e.cl
		case 0:
			return nil
		}
	}
}

// put sets l's copy to cl.
func (x *lineMap) put(l mem.Addr, cl *cline) {
	if 2*(x.n+1) > len(x.ents) {
		x.grow()
	}
	m := len(x.ents) - 1
	i := x.slot(l)
	for x.ents[i].l != 0 && x.ents[i].l != l {
		i = (i + 1) & m
	}
	if x.ents[i].l == 0 {
		x.n++
	}
	x.ents[i] = lineEnt{l, cl}
}

// grow doubles the table (16 entries at first) and re-inserts.
func (x *lineMap) grow() {
	old := x.ents
	x.ents, x.n = make([]lineEnt, max(16, 2*len(old))), 0
	for _, e := range old {
		if e.l != 0 {
			x.put(e.l, e.cl)
		}
	}
}

// del removes l, shifting back the entries of its probe run behind it.
func (x *lineMap) del(l mem.Addr) {
	if x.n == 0 {
		return
	}
	m := len(x.ents) - 1
	i := x.slot(l)
	for x.ents[i].l != l {
		if x.ents[i].l == 0 {
			return
		}
		i = (i + 1) & m
	}
	for j := (i + 1) & m; x.ents[j].l != 0; j = (j + 1) & m {
		// The entry at j may move to the hole at i if its probe start
		// is not in (i, j] (cyclically).
		if h := x.slot(x.ents[j].l); (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.ents[i] = x.ents[j]
			i = j
		}
	}
	x.ents[i] = lineEnt{}
	x.n--
}

// reset empties the map. lines holds every line in it (perhaps more):
// when they are few against the table, each is deleted, so an L2 copy
// table that once grew large is not cleared whole at every acquire.
func (x *lineMap) reset(lines []mem.Addr) {
	if x.n == 0 {
		return
	}
	if 8*len(lines) < len(x.ents) {
		for _, l := range lines {
			x.del(l)
		}
		if x.n == 0 {
			return
		}
	}
	clear(x.ents)
	x.n = 0
}
