package cpu

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// CacheSpec describes one host core's cache hierarchy and issue ports,
// for executing a memory walk (a datatype pack or unpack, a checkpoint
// creation) address by address (Walk). The miss-handling limits are the
// Spec's: cpu.l1d_misses fill buffers, cpu.l2_misses L2 miss slots shared
// by demand misses and the stream prefetcher (cpu.prefetch,
// cpu.prefetch_depth lines ahead), cpu.line_size, cpu.dram_latency and
// cpu.dram_bandwidth.
type CacheSpec struct {
	L1DSize     unit.Bytes `toml:"l1d_size" doc:"L1 data cache capacity (per core; documents' presets: 64KB, 2-way, 2 cycles, the dissertation's Tables 4.1, 5.1, 6.1; others an i7-4770's)" src:"DEFAULT"`
	L1DWays     int        `toml:"l1d_ways" doc:"L1 data cache associativity" src:"DEFAULT"`
	L1DLatency  int        `toml:"l1d_latency" doc:"L1 data cache load-to-use latency (core cycles)" src:"DEFAULT"`
	L2Size      unit.Bytes `toml:"l2_size" doc:"L2 cache capacity (per L2: shared by cpu.cache.l2_cores cores; documents' presets: 2MB, 8-way, 8 cycles, the dissertation's Tables 4.1, 5.1, 6.1)" src:"DEFAULT"`
	L2Cores     int        `toml:"l2_cores" doc:"cores sharing one L2 (documents' presets: 2, gem5 Ruby's CorePair of the AMD APU model, configs/ruby/GPU_VIPER.py; others 1, a private L2)" src:"DEFAULT"`
	L2Ways      int        `toml:"l2_ways" doc:"L2 associativity" src:"DEFAULT"`
	L2Latency   int        `toml:"l2_latency" doc:"L2 hit latency (core cycles)" src:"DEFAULT"`
	L3Size      unit.Bytes `toml:"l3_size" doc:"last-level cache capacity (shared; documents' presets: 16MB, 16-way, 20 cycles, mostly exclusive, the dissertation's Tables 4.1, 5.1, 6.1)" src:"DEFAULT"`
	L3Ways      int        `toml:"l3_ways" doc:"last-level cache associativity" src:"DEFAULT"`
	L3Latency   int        `toml:"l3_latency" doc:"last-level cache hit latency (core cycles)" src:"DEFAULT"`
	L3Path      sim.Time   `toml:"l3_path" doc:"time to reach the last-level cache beyond its hit latency (documents' presets: 15ns, the L3 sits in the system directory, whose lookup is soc.dir_latency's 30 cycles at 2GHz, configs/ruby/GPU_VIPER.py; others 0: the hit latency is load-to-use)" src:"DEFAULT"`
	IssueWidth  int        `toml:"issue_width" doc:"instructions the core issues per cycle" src:"DEFAULT"`
	LoadPorts   int        `toml:"load_ports" doc:"loads issued per cycle" src:"DEFAULT"`
	StorePorts  int        `toml:"store_ports" doc:"stores issued per cycle" src:"DEFAULT"`
	VectorBytes int        `toml:"vector_bytes" doc:"widest load or store (bytes): a copy moves this much per instruction" src:"DEFAULT"`
	LoadBuffer  int        `toml:"load_buffer" doc:"loads in flight (load buffer entries): a load waits for the one this many earlier to return" src:"DEFAULT"`
	StoreBuffer int        `toml:"store_buffer" doc:"stores not yet committed (store buffer entries): a store waits for the one this many earlier to commit" src:"DEFAULT"`
	Streams     int        `toml:"prefetch_streams" doc:"4 KiB pages the stream prefetcher tracks at once" src:"DEFAULT"`
}

// HaswellCache returns the cache hierarchy of an Intel Haswell desktop
// core (i7-4770): 32 KiB 8-way L1D at 4 cycles, 256 KiB 8-way L2 at 12,
// 8 MiB 16-way L3 at 36; four-wide issue with two load ports and one
// store port of 32 bytes (AVX2), 72 load and 42 store buffer entries, 32
// prefetch streams (Intel 64 and IA-32 Architectures Optimization
// Reference Manual, Haswell microarchitecture; L3 latency as measured by
// 7-cpu.com for the i7-4770).
func HaswellCache() CacheSpec {
	return CacheSpec{L1DSize: 32 * unit.KiB, L1DWays: 8, L1DLatency: 4, L2Size: 256 * unit.KiB, L2Ways: 8, L2Latency: 12,
		L3Size: 8 * unit.MiB, L3Ways: 16, L3Latency: 36, IssueWidth: 4, LoadPorts: 2, StorePorts: 1, VectorBytes: 32,
		LoadBuffer: 72, StoreBuffer: 42, Streams: 32, L2Cores: 1}
}

// CorePairCache returns the host caches of the documents' presets
// (the dissertation's Tables 4.1, 5.1 and 6.1, as gem5 Ruby's CorePair
// organisation of the AMD APU model runs them, configs/ruby/GPU_VIPER.py):
// a 64 KB 2-way L1D per core at 2 cycles, a 2 MB 8-way L2 shared by each
// pair of cores at 8 cycles, a 16 MB 16-way mostly-exclusive L3 at 20
// cycles in the system directory (15 ns to reach). The issue ports and
// buffers, which only an address-by-address walk uses, are Haswell's.
func CorePairCache() CacheSpec {
	c := HaswellCache()
	c.L1DSize, c.L1DWays, c.L1DLatency = 64*unit.KiB, 2, 2
	c.L2Size, c.L2Ways, c.L2Latency, c.L2Cores = 2*unit.MiB, 8, 8, 2
	c.L3Size, c.L3Ways, c.L3Latency, c.L3Path = 16*unit.MiB, 16, 20, 15*sim.Nanosecond
	return c
}

// Validate reports every invalid field.
func (c CacheSpec) Validate() error {
	var errs []error
	for _, l := range []struct {
		name       string
		size       unit.Bytes
		ways, lat  int
		maxSizeMiB int
	}{{"l1d", c.L1DSize, c.L1DWays, c.L1DLatency, 16}, {"l2", c.L2Size, c.L2Ways, c.L2Latency, 256}, {"l3", c.L3Size, c.L3Ways, c.L3Latency, 4096}} {
		if l.size < unit.KiB || l.size > unit.Bytes(l.maxSizeMiB)*unit.MiB {
			errs = append(errs, fmt.Errorf("cpu.cache.%s_size = %v: must be in [1KiB, %dMiB]", l.name, l.size, l.maxSizeMiB))
		}
		if l.ways < 1 || l.ways > 64 {
			errs = append(errs, fmt.Errorf("cpu.cache.%s_ways = %d: must be in [1, 64]", l.name, l.ways))
		}
		if l.lat < 1 || l.lat > 1000 {
			errs = append(errs, fmt.Errorf("cpu.cache.%s_latency = %d: must be in [1, 1000] cycles", l.name, l.lat))
		}
	}
	if c.L3Path < 0 || c.L3Path > sim.Microsecond {
		errs = append(errs, fmt.Errorf("cpu.cache.l3_path = %v: must be in [0s, 1us]", c.L3Path))
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{{"l2_cores", c.L2Cores, 1024}, {"issue_width", c.IssueWidth, 16}, {"load_ports", c.LoadPorts, 16}, {"store_ports", c.StorePorts, 16},
		{"vector_bytes", c.VectorBytes, 512}, {"load_buffer", c.LoadBuffer, 4096}, {"store_buffer", c.StoreBuffer, 4096},
		{"prefetch_streams", c.Streams, 1024}} {
		if f.v < 1 || f.v > f.max {
			errs = append(errs, fmt.Errorf("cpu.cache.%s = %d: must be in [1, %d]", f.name, f.v, f.max))
		}
	}
	return errors.Join(errs...)
}

// Level names the memory level that served an access.
type Level int

// The levels of WalkStats.Served.
const (
	L1 Level = iota
	L2
	L3
	DRAM
	nLevels
)

func (l Level) String() string { return [...]string{"L1", "L2", "L3", "DRAM"}[l] }

// WalkStats counts what a walk did. Accesses are line touches: each
// stretch of a region inside one cache line is one touch of that line.
type WalkStats struct {
	Regions uint64
	Instr   uint64 // instructions issued (bookkeeping, loads and stores)
	Loads   uint64 // load instructions
	Stores  uint64 // store instructions
	// Served counts the line touches each level served (a touch of a line
	// the prefetcher is still bringing counts at L2, and in Prefetched).
	Served     [nLevels]uint64
	Prefetched uint64 // L2 touches of lines the stream prefetcher brought
	Prefetches uint64 // lines the stream prefetcher requested
	// Fill[l] is the bytes brought into level l (L1, L2, L3) from the level
	// below; WriteBack[l] the dirty bytes level l evicted to the one below
	// (WriteBack[L3] goes to DRAM).
	Fill      [3]uint64
	WriteBack [3]uint64
	DRAMRead  uint64 // bytes read from DRAM (demand and prefetch)
	DRAMWrite uint64 // bytes written to DRAM (evictions, Flush)
	// Stall is the time the core's front end waited for a load or store
	// buffer entry, i.e. for memory.
	Stall sim.Duration
}

// cacheLevel is one set-associative LRU cache of line addresses.
type cacheLevel struct {
	sets  uint64
	ways  int
	tags  []uint64 // line number + 1; 0 = invalid
	stamp []uint64
	dirty []bool
	clock uint64
}

func newCacheLevel(size unit.Bytes, ways int, line unit.Bytes) *cacheLevel {
	lines := max(uint64(size/line), uint64(ways))
	sets := max(lines/uint64(ways), 1)
	n := sets * uint64(ways)
	return &cacheLevel{sets: sets, ways: ways, tags: make([]uint64, n), stamp: make([]uint64, n), dirty: make([]bool, n)}
}

// find returns the slot of line, or -1.
func (c *cacheLevel) find(line uint64) int {
	base := int(line%c.sets) * c.ways
	for i := base; i < base+c.ways; i++ {
		if c.tags[i] == line+1 {
			return i
		}
	}
	return -1
}

// touch marks slot i most recently used, dirty if write.
func (c *cacheLevel) touch(i int, write bool) {
	c.clock++
	c.stamp[i] = c.clock
	if write {
		c.dirty[i] = true
	}
}

// insert puts line in its set (the caller checked it is absent), evicting
// the least recently used way; it returns the victim if it was dirty.
func (c *cacheLevel) insert(line uint64, dirty bool) (victim uint64, wasDirty bool) {
	base := int(line%c.sets) * c.ways
	v := base
	for i := base; i < base+c.ways; i++ {
		if c.tags[i] == 0 {
			v = i
			break
		}
		if c.stamp[i] < c.stamp[v] {
			v = i
		}
	}
	victim, wasDirty = c.tags[v]-1, c.tags[v] != 0 && c.dirty[v]
	c.tags[v], c.dirty[v] = line+1, dirty
	c.clock++
	c.stamp[v] = c.clock
	return victim, wasDirty
}

// stream is one page the stream prefetcher tracks.
type stream struct {
	page  uint64 // 4 KiB page number
	last  uint64 // last line of the page that reached L2
	ahead uint64 // highest line prefetched so far
	used  uint64
}

// Walk executes a stream of memory accesses on one core of a CPU with
// the cache hierarchy of CacheSpec, address by address: every stretch of
// a region inside a cache line looks the line up in L1, L2 and L3 (set
// associative, LRU, write-back and write-allocate) and goes to DRAM on a
// miss, through the node's DRAM server. Time is that of an out-of-order
// core reduced to its queues: the front end issues the walk's
// instructions at the issue width, loads and stores at their ports; a
// load waits for a load-buffer entry (the load that many earlier must have
// returned its data), a store for a store-buffer entry (committed in
// order once its line is owned); a missing line takes a fill buffer
// (cpu.l1d_misses) and, beyond L2, an L2 miss slot (cpu.l2_misses), and
// arrives after the serving level's latency, DRAM's being at least its
// transfer at the server. The L2 stream prefetcher, trained on the
// accesses that reach L2, runs cpu.prefetch_depth lines ahead within a
// 4 KiB page when it has a free L2 miss slot. Caches start empty (cold);
// call Warm to run a walk again on warm caches.
//
// Left out: the L1 next-line prefetcher, inclusion (an L3 eviction does
// not invalidate L1/L2 copies), TLBs, and bank conflicts.
type Walk struct {
	spec   Spec
	cs     CacheSpec
	dram   *mem.Server
	line   uint64
	cyc    float64 // ps per core cycle
	lv     [3]*cacheLevel
	now    float64 // front end, ps
	ldPort float64
	stPort float64
	ldRing []float64 // completion of the last LoadBuffer loads
	stRing []float64 // commit of the last StoreBuffer stores
	ldN    int
	stN    int
	lastSt float64   // commit time of the previous store (in-order commit)
	fb     []float64 // fill buffer release times
	sq     []float64 // L2 miss slot release times
	ready  map[uint64]float64
	strm   []stream
	clock  uint64
	end    float64
	stats  WalkStats
}

// NewWalk returns a walk on cold caches starting at now; dram is the
// node's DRAM server (nil: an unloaded server of cpu.dram_bandwidth).
func NewWalk(spec Spec, now sim.Time, dram *mem.Server) *Walk {
	cs := spec.Cache
	if dram == nil {
		dram = mem.NewServer(float64(spec.DRAMBandwidth))
	}
	line := max(spec.LineSize, 1)
	w := &Walk{spec: spec, cs: cs, dram: dram, line: uint64(line), cyc: 1e12 / float64(spec.Freq),
		ldRing: make([]float64, max(cs.LoadBuffer, 1)), stRing: make([]float64, max(cs.StoreBuffer, 1)),
		fb: make([]float64, max(spec.L1DMisses, 1)), sq: make([]float64, max(spec.L2Misses, spec.L1DMisses, 1)),
		ready: map[uint64]float64{}, strm: make([]stream, max(cs.Streams, 1))}
	w.lv[0] = newCacheLevel(cs.L1DSize, cs.L1DWays, line)
	w.lv[1] = newCacheLevel(cs.L2Size, cs.L2Ways, line)
	w.lv[2] = newCacheLevel(cs.L3Size, cs.L3Ways, line)
	w.setNow(float64(now))
	return w
}

func (w *Walk) setNow(t float64) {
	w.now, w.ldPort, w.stPort, w.lastSt, w.end = t, t, t, t, t
	for i := range w.ldRing {
		w.ldRing[i] = t
	}
	for i := range w.stRing {
		w.stRing[i] = t
	}
	for i := range w.fb {
		w.fb[i] = t
	}
	for i := range w.sq {
		w.sq[i] = t
	}
	clear(w.ready)
}

// Warm restarts the walk's clock at now keeping the cache contents and
// the counters, so a second pass runs on warm caches.
func (w *Walk) Warm(now sim.Time) { w.setNow(float64(now)) }

// Stats returns the counters so far.
func (w *Walk) Stats() WalkStats { return w.stats }

// End returns when the walk's last instruction has completed (its last
// load returned, its last store committed).
func (w *Walk) End() sim.Time {
	return sim.Time(max(w.end, w.now, w.ldPort, w.stPort, w.lastSt) + 0.5)
}

// Instr issues n instructions that touch no memory (bookkeeping).
func (w *Walk) Instr(n int) {
	w.stats.Instr += uint64(n)
	w.now += float64(n) * w.cyc / float64(w.cs.IssueWidth)
}

// Copy executes one region of a copy: n bytes loaded from src and stored
// to dst with the widest loads and stores, after instr bookkeeping
// instructions (the engine's per-region work).
func (w *Walk) Copy(dst, src mem.Addr, n int, instr int) {
	w.stats.Regions++
	w.Instr(instr)
	w.Read(src, n)
	w.Write(dst, n)
}

// Read loads n bytes at a (one load per vector_bytes, per line touched).
func (w *Walk) Read(a mem.Addr, n int) { w.access(uint64(a), uint64(n), false) }

// Write stores n bytes at a.
func (w *Walk) Write(a mem.Addr, n int) { w.access(uint64(a), uint64(n), true) }

// access walks the lines of [a, a+n).
func (w *Walk) access(a, n uint64, write bool) {
	vb := uint64(w.cs.VectorBytes)
	for n > 0 {
		line := a / w.line
		l := min(n, (line+1)*w.line-a)
		ops := int((l + vb - 1) / vb)
		if write {
			w.stores(line, ops)
		} else {
			w.loads(line, ops)
		}
		a, n = a+l, n-l
	}
}

func (w *Walk) loads(line uint64, ops int) {
	issue := max(w.now, w.ldPort, w.ldRing[w.ldN])
	w.stall(issue)
	ready := w.lookup(line, false, issue)
	per := w.cyc / float64(w.cs.LoadPorts)
	for range ops {
		issue = max(w.now, w.ldPort, w.ldRing[w.ldN])
		w.stall(issue)
		w.ldPort = issue + per
		done := max(issue+float64(w.cs.L1DLatency)*w.cyc, ready)
		w.ldRing[w.ldN] = done
		w.ldN = (w.ldN + 1) % len(w.ldRing)
		w.end = max(w.end, done)
	}
	w.stats.Loads += uint64(ops)
	w.stats.Instr += uint64(ops)
	w.now += float64(ops) * w.cyc / float64(w.cs.IssueWidth)
}

func (w *Walk) stores(line uint64, ops int) {
	issue := max(w.now, w.stPort, w.stRing[w.stN])
	w.stall(issue)
	ready := w.lookup(line, true, issue)
	per := w.cyc / float64(w.cs.StorePorts)
	for range ops {
		issue = max(w.now, w.stPort, w.stRing[w.stN])
		w.stall(issue)
		w.stPort = issue + per
		// Stores commit in order, one per store-port cycle, once their line
		// is owned.
		c := max(issue, ready, w.lastSt+per)
		w.lastSt = c
		w.stRing[w.stN] = c
		w.stN = (w.stN + 1) % len(w.stRing)
	}
	w.stats.Stores += uint64(ops)
	w.stats.Instr += uint64(ops)
	w.now += float64(ops) * w.cyc / float64(w.cs.IssueWidth)
}

// stall moves the front end to t when a buffer entry makes it wait.
func (w *Walk) stall(t float64) {
	if t > w.now {
		w.stats.Stall += sim.Duration(t - w.now)
		w.now = t
	}
}

// take returns when a slot of q is free at or after t and holds it until
// release (set by the caller through the returned index).
func take(q []float64, t float64) (int, float64) {
	k := 0
	for i := 1; i < len(q); i++ {
		if q[i] < q[k] {
			k = i
		}
	}
	return k, max(t, q[k])
}

// lookup brings line into L1 for a touch at t and returns when its data
// is there.
func (w *Walk) lookup(line uint64, write bool, t float64) float64 {
	if i := w.lv[0].find(line); i >= 0 {
		w.lv[0].touch(i, write)
		w.stats.Served[L1]++
		return t
	}
	k, start := take(w.fb, t)
	var ready float64
	if i := w.lv[1].find(line); i >= 0 {
		w.lv[1].touch(i, false)
		ready = start + float64(w.cs.L2Latency)*w.cyc
		if r, ok := w.ready[line]; ok {
			w.stats.Prefetched++
			ready = max(ready, r)
			if r <= start {
				delete(w.ready, line)
			}
		}
		w.stats.Served[L2]++
	} else {
		s, st := take(w.sq, start)
		ready = w.fetchL2(line, st, true)
		w.sq[s] = ready
		w.insert(1, line, false, st)
	}
	w.fb[k] = ready
	w.prefetch(line, start)
	w.insert(0, line, write, start)
	w.stats.Fill[L1] += w.line
	return ready
}

// fetchL2 brings a line missing in L2 from L3 or DRAM at t, counting the
// serving level for a demand touch, and returns its arrival.
func (w *Walk) fetchL2(line uint64, t float64, demand bool) float64 {
	w.stats.Fill[L2] += w.line
	if i := w.lv[2].find(line); i >= 0 {
		w.lv[2].touch(i, false)
		if demand {
			w.stats.Served[L3]++
		}
		// The way to the L3 (cpu.cache.l3_path, its directory's lookup on
		// the documents' presets), then its hit, as a streaming touch
		// (residency) and a word's miss (Spec.MissLatency) pay it.
		return t + float64(w.cs.L3Latency)*w.cyc + float64(w.cs.L3Path)
	}
	if demand {
		w.stats.Served[DRAM]++
	}
	return w.fromDRAM(line, t)
}

// fromDRAM reads line from DRAM into L3 at t and returns its arrival: the
// miss latency (the way to the last level, then DRAM: Spec.MissLatency),
// or later if the server is busy.
func (w *Walk) fromDRAM(line uint64, t float64) float64 {
	done := float64(w.dram.Reserve(sim.Time(t), w.line))
	w.stats.DRAMRead += w.line
	w.stats.Fill[L3] += w.line
	w.insert(2, line, false, t)
	return max(t+float64(w.spec.MissLatency()), done)
}

// insert puts line in level i, writing a dirty victim back to the level
// below (DRAM below L3).
func (w *Walk) insert(i int, line uint64, dirty bool, t float64) {
	victim, wb := w.lv[i].insert(line, dirty)
	if !wb {
		return
	}
	w.stats.WriteBack[i] += w.line
	if i == 2 {
		w.dram.Reserve(sim.Time(t), w.line)
		w.stats.DRAMWrite += w.line
		return
	}
	if j := w.lv[i+1].find(victim); j >= 0 {
		w.lv[i+1].touch(j, true)
		return
	}
	w.insert(i+1, victim, true, t)
}

// prefetch trains the stream prefetcher on an access to line that reached
// L2 at t: an ascending access in a tracked page runs the prefetch up to
// cpu.prefetch_depth lines ahead, within the page, one L2 miss slot per
// line while slots are free (a prefetch finding none is dropped).
func (w *Walk) prefetch(line uint64, t float64) {
	if !w.spec.Prefetch || w.spec.PrefetchDepth == 0 {
		return
	}
	perPage := 4096 / w.line
	page := line / max(perPage, 1)
	w.clock++
	var s *stream
	lru := 0
	for i := range w.strm {
		if w.strm[i].used != 0 && w.strm[i].page == page {
			s = &w.strm[i]
			break
		}
		if w.strm[i].used < w.strm[lru].used {
			lru = i
		}
	}
	if s == nil {
		w.strm[lru] = stream{page: page, last: line, ahead: line, used: w.clock}
		return
	}
	s.used = w.clock
	up := line > s.last
	s.last = line
	if !up {
		return
	}
	end := min(line+uint64(w.spec.PrefetchDepth), (page+1)*perPage-1)
	for x := max(s.ahead, line) + 1; x <= end; x++ {
		k, st := take(w.sq, t)
		if st > t {
			return // no free L2 miss slot: the prefetch is dropped
		}
		s.ahead = x
		if w.lv[1].find(x) >= 0 {
			continue
		}
		w.stats.Prefetches++
		r := w.fetchL2(x, t, false)
		w.sq[k] = r
		w.ready[x] = r
		w.insert(1, x, false, t)
	}
}

// Flush writes every dirty line left in the caches back to DRAM through
// the server at the walk's end (their eventual write-back, after the
// walk's time) and returns the bytes written.
func (w *Walk) Flush() uint64 {
	t := w.End()
	var n uint64
	// A dirty line may sit in several levels; it leaves once.
	seen := map[uint64]bool{}
	for i := range w.lv {
		c := w.lv[i]
		for j, tag := range c.tags {
			if tag != 0 && c.dirty[j] && !seen[tag] {
				seen[tag] = true
				c.dirty[j] = false
				n += w.line
			} else if tag != 0 {
				c.dirty[j] = false
			}
		}
	}
	if n > 0 {
		w.dram.Reserve(t, n)
		w.stats.DRAMWrite += n
	}
	return n
}
