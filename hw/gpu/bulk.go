package gpu

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The L2 model of bulk traffic (the GIO slides). Address-carrying
// bulk accesses (StreamLines, LoadLanes) pass every 64 B line through the
// L2 tag model: a line the L2 holds is served at the L2 hit latency and
// takes no memory bandwidth; a missing line fills the L2 (LRU victim) and
// takes a line of the memory server, the L2 lookup and the memory latency
// past it (Spec.MissLatency). Lines of
// L2-uncacheable pages (SetUncached, GIO's NIC-visible heap) neither hit
// nor fill: every access is a memory access. So compute that reuses data
// in the L2 is faster on cacheable pages than on uncacheable ones, and
// how much depends on the reuse the access pattern has, not on a
// constant. Stream, which carries no addresses, stays a pure bandwidth
// charge (no reuse is known).

// bulkLines classifies the distinct lines an access touches: how many
// are served by the L2 and how many go to memory, updating the tag model.
type bulkLines struct {
	hits, misses uint64
	far          uint64 // of the misses, lines in host memory beyond NVLink-C2C
}

// line passes line l through the L2 (or past it, uncached).
func (b *bulkLines) line(g *GPU, l mem.Addr) {
	if g.uncached != nil && g.Uncached(l) {
		b.miss(g, l)
		g.stats.Uncached++
		g.stats.BulkMisses++
		g.stats.BulkUncached++
		return
	}
	hit := false
	if g.tags != nil {
		hit = g.touch(l, CU)
	} else if g.l2 != nil {
		hit = g.l2.get(l) != nil
	}
	if hit {
		b.hits++
		g.stats.BulkHits++
	} else {
		b.miss(g, l)
		g.stats.BulkMisses++
	}
}

// miss counts line l going to memory: the HBM, or host memory beyond
// the C2C link.
func (b *bulkLines) miss(g *GPU, l mem.Addr) {
	b.misses++
	if g.c2c != nil && g.host != nil && g.mem.PoolOf(l) == mem.Host {
		b.far++
	}
}

// done is when the access of work-group w completes if issued at now:
// the memory server's time for the missing lines, the CU's L1–L2 path
// for every line (hits and misses alike cross it), and the latency of
// the slowest class touched (memory when any line missed, else the L2
// hit).
func (b *bulkLines) done(w *WG, now sim.Time) sim.Time {
	g := w.g
	if b.hits+b.misses == 0 {
		return now
	}
	port := now
	if p := w.cu.port; p != nil {
		port = p.Reserve(now, (b.hits+b.misses)*mem.LineSize)
	}
	if b.misses == 0 {
		return max(port, now+g.spec.Cycles(g.spec.L2Cycles))
	}
	done := max(now+g.missLat, port)
	if near := b.misses - b.far; near > 0 {
		done = max(done, g.dram.Reserve(now, near*mem.LineSize))
	}
	if b.far > 0 {
		done = max(done, g.hostBulk(now, b.far*mem.LineSize))
	}
	return done
}

// StreamLines moves n bytes of bulk array traffic at [a, a+n): every line
// goes through the L2 tag model (streaming work-groups evict other lines,
// the dissertation's ComP-Net chapter); lines the L2 holds are served at the L2 latency
// without memory bandwidth, the others (and every line of an
// L2-uncacheable page) through the memory server.
func (w *WG) StreamLines(a mem.Addr, n uint64) {
	if n == 0 {
		return
	}
	var b bulkLines
	for l := mem.Line(a); l < a+mem.Addr(n); l += mem.LineSize {
		b.line(w.g, l)
	}
	w.SleepUntil(b.done(w, w.Now()))
}

// Range is a bulk byte range [Addr, Addr+Bytes).
type Range struct {
	Addr  mem.Addr
	Bytes uint64
}

// StreamRanges is StreamLines for several independent ranges whose loads
// the work-group issues together (their addresses are all known): the
// lines of every range go through the L2 model and the access completes
// with the slowest, so independent loads overlap their latencies.
func (w *WG) StreamRanges(rs ...Range) {
	var b bulkLines
	for _, r := range rs {
		for l := mem.Line(r.Addr); l < r.Addr+mem.Addr(r.Bytes); l += mem.LineSize {
			b.line(w.g, l)
		}
	}
	w.SleepUntil(b.done(w, w.Now()))
}

// LoadLanes is one vector gather of a wavefront: lane i reads the 8-byte
// word at addrs[i] into out[i] (len(out) ≥ len(addrs)). The lanes issue
// together and coalesce by line; each distinct line goes through the L2
// model of StreamLines, and the instruction completes when its slowest
// line has arrived. Values come from the same places Load64 reads them
// (the CU's L1 copy, the dGPU L2 copy, or memory; memory directly for
// L2-uncacheable pages), so a gather is as stale as the loads it stands
// for.
func (w *WG) LoadLanes(addrs []mem.Addr, out []uint64) {
	if len(addrs) == 0 {
		return
	}
	var b bulkLines
	seen := make(map[mem.Addr]bool, len(addrs))
	for i, a := range addrs {
		l := mem.Line(a)
		out[i] = w.peek(a)
		if !seen[l] {
			seen[l] = true
			b.line(w.g, l)
		}
	}
	w.SleepUntil(max(b.done(w, w.Now()), w.Now()+w.g.spec.Cycles(w.g.spec.L1Cycles)))
}

// peek returns the word a plain load of a would return now, filling the
// functional caches as that load would, without its time.
func (w *WG) peek(a mem.Addr) uint64 {
	g := w.g
	if g.uncached != nil && g.Uncached(a) {
		return g.mem.Load64(a)
	}
	l := mem.Line(a)
	off := a - l
	if cl := w.cu.l1.get(l); cl != nil {
		return binary.LittleEndian.Uint64(g.settled(cl).data[off:])
	}
	if !g.l2Copy(a) {
		return g.mem.Load64(a)
	}
	if g.l2.get(l) == nil {
		g.l2.fill(l, g.mem, g.mem)
	}
	return binary.LittleEndian.Uint64(g.l2.get(l).data[off:])
}

// AtomicAdd64 is a device-scope atomic add of v to the word at a,
// performed at the L2 (dGPU: in the line's L2 copy, which stays dirty
// until a system release; APU: in memory) or, for an L2-uncacheable page,
// at memory after the memory latency. It returns the old value. Pollers
// of the word are woken. Other agents (the NIC) must not update the same
// word concurrently through memory: the L2 is not probed (the dissertation
// §5.3).
func (w *WG) AtomicAdd64(a mem.Addr, v uint64) uint64 {
	g := w.g
	lat := g.missLat
	if !(g.uncached != nil && g.Uncached(a)) && (g.l2 != nil || g.memSide(a)) && g.tags != nil && g.touch(mem.Line(a), CU) {
		lat = g.spec.Cycles(g.spec.L2Cycles)
	} else {
		lat = g.farLoad(a, lat) // an atomic at host memory beyond NVLink-C2C: a round trip
	}
	w.Sleep(lat)
	w.mustHaveBlocked("AtomicAdd64")
	return w.addAt(a, v)
}

// PollDevice spins on the word at a with device-scope acquires (an L1
// invalidate, then a load through the L2) until cond holds, and returns
// its value: the consumer side of device-scope flags and counters that
// work-groups of the same GPU update (AtomicAdd64). Iterations that would
// see no change are not simulated one by one: the work-group sleeps until
// the word changes at the coherence point.
func (w *WG) PollDevice(a mem.Addr, what string, cond func(uint64) bool) uint64 {
	for {
		w.Acquire(Device)
		v := w.Load64(a)
		if cond(v) {
			return v
		}
		for !cond(w.g.CoherentLoad64(a)) {
			w.Wait(w.g.mem.Watch(a), what)
		}
	}
}

// AtomicAddLanes is one vector atomic instruction of a wavefront: lane i
// adds v to the word at addrs[i] at device scope (AtomicAdd64's effect).
// The lanes issue together; the instruction completes after the slowest
// lane (the L2 latency when every line hits, the L2 lookup and the memory
// latency past it when one misses or lies in an L2-uncacheable page).
func (w *WG) AtomicAddLanes(addrs []mem.Addr, v uint64) {
	if len(addrs) == 0 {
		return
	}
	g := w.g
	lat := g.spec.Cycles(g.spec.L2Cycles)
	missed, miss := false, sim.Duration(0) // the slowest lane past the L2
	for _, a := range addrs {
		if (g.uncached != nil && g.Uncached(a)) || (g.l2 == nil && !g.memSide(a)) || !(g.tags != nil && g.touch(mem.Line(a), CU)) {
			missed, miss = true, max(miss, g.farLoad(a, g.missLat))
		}
	}
	if missed {
		lat = miss
	}
	w.Sleep(lat)
	w.mustHaveBlocked("AtomicAddLanes")
	for _, a := range addrs {
		w.addAt(a, v)
	}
}

// addAt applies a device-scope atomic add at the coherence point without
// its time.
func (w *WG) addAt(a mem.Addr, v uint64) uint64 {
	g := w.g
	if (g.uncached != nil && g.Uncached(a)) || !g.l2Copy(a) {
		old := g.mem.Load64(a)
		g.mem.Store64(a, old+v)
		return old
	}
	l := mem.Line(a)
	cl := g.l2.get(l)
	if cl == nil {
		cl = g.l2.fill(l, g.mem, g.mem)
	}
	off := a - l
	old := binary.LittleEndian.Uint64(cl.data[off:])
	binary.LittleEndian.PutUint64(cl.data[off:], old+v)
	g.l2.write(l, cl, off, 0xff)
	if c := w.cu.l1.get(l); c != nil {
		binary.LittleEndian.PutUint64(c.data[off:], old+v)
	}
	g.mem.Touch(a, 8) // wake pollers: the new value is at the coherence point
	return old
}
