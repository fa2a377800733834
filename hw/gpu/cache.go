package gpu

import "github.com/gpunetsim/gpunetsim/hw/mem"

// cache holds line copies: what a non-coherent cache returns until it is
// invalidated. Eviction is FIFO.
type cache struct {
	lines map[mem.Addr]*cline
	order []mem.Addr
	cap   int
}

type cline struct {
	data  [mem.LineSize]byte
	dirty bool
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
		if ol := c.lines[old]; ol != nil && ol.dirty && wb != nil {
			wb.Write(old, ol.data[:])
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
		if cl := c.lines[l]; cl != nil && cl.dirty {
			m.Write(l, cl.data[:])
			cl.dirty = false
			n++
		}
	}
	return n
}
