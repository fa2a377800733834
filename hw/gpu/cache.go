package gpu

import (
	"math/bits"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// cache holds line copies: what a non-coherent cache returns until it is
// invalidated. Eviction is FIFO.
type cache struct {
	lines map[mem.Addr]*cline
	order []mem.Addr
	cap   int
}

type cline struct {
	data  [mem.LineSize]byte
	dirty uint64 // one bit per byte written since the fill: GPU caches write back byte masks
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

func newCache(capacity int) *cache {
	return &cache{lines: map[mem.Addr]*cline{}, cap: capacity}
}

func (c *cache) get(l mem.Addr) *cline { return c.lines[l] }

// fill inserts a line copied from src, evicting the oldest line when full.
// An evicted dirty line is written to wb (may be nil for write-through
// caches).
func (c *cache) fill(l mem.Addr, src *mem.Memory, wb *mem.Memory) *cline {
	if len(c.lines) >= c.cap && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if ol := c.lines[old]; ol != nil && ol.dirty != 0 && wb != nil {
			ol.flush(old, wb)
		}
		delete(c.lines, old)
	}
	cl := &cline{}
	src.Read(l, cl.data[:])
	c.lines[l] = cl
	c.order = append(c.order, l)
	return cl
}

func (c *cache) clear() {
	clear(c.lines)
	c.order = c.order[:0]
}

// writeBack writes dirty lines to m and returns how many there were.
func (c *cache) writeBack(m *mem.Memory) int {
	n := 0
	for _, l := range c.order {
		if cl := c.lines[l]; cl != nil && cl.dirty != 0 {
			cl.flush(l, m)
			n++
		}
	}
	return n
}
