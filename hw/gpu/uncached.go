package gpu

import (
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
func (g *GPU) SetUncached(a mem.Addr, n uint64) {
	g.uncached = append(g.uncached, [2]mem.Addr{a, a + mem.Addr(n)})
}

// Uncached reports whether a lies in an L2-uncacheable page.
func (g *GPU) Uncached(a mem.Addr) bool {
	for _, r := range g.uncached {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
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
