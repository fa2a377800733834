package gpu

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// L2Spec is the geometry of the GPU L2 tag model (the dissertation,
// §9).
type L2Spec struct {
	Size unit.Bytes `toml:"size" doc:"GPU L2 capacity (tag model: hit/miss, LRU eviction, LOCKED lines)" src:"DOC"`
	Ways int        `toml:"ways" doc:"GPU L2 associativity" src:"DOC"`
}

// Validate reports every invalid field.
func (s L2Spec) Validate() error {
	var errs []error
	if s.Ways < 1 || s.Ways > 64 {
		errs = append(errs, fmt.Errorf("gpu_l2.ways = %d: must be in [1, 64]", s.Ways))
	}
	if s.Size < mem.LineSize || s.Size > unit.GiB {
		errs = append(errs, fmt.Errorf("gpu_l2.size = %v: must be in [64B, 1GiB]", s.Size))
	} else if s.Ways >= 1 && s.Ways <= 64 && int64(s.Size)%(int64(s.Ways)*mem.LineSize) != 0 { // ways in range: 2^62 ways × 64 B wraps to 0
		errs = append(errs, fmt.Errorf("gpu_l2.size = %v: must be a multiple of gpu_l2.ways × 64 B = %d B", s.Size, s.Ways*mem.LineSize))
	}
	return errors.Join(errs...)
}

// Requester says who accesses the L2, for the per-requester hit rates.
type Requester uint8

// Requesters.
const (
	CU Requester = iota // a compute unit (work-group)
	CP                  // a command-processor core
)

// L2Stats are the tag model's counters.
type L2Stats struct {
	Hits, Misses  [2]uint64 // by Requester
	Evictions     uint64
	LockedStores  uint64       // store_locked instructions
	Locked        int          // lines locked now (store_locked)
	MaxLocked     int          // most lines locked at once
	Unlocks       uint64       // locked lines released by a CP access
	LockHold      sim.Duration // summed hold time of released locks
	LockHoldMax   sim.Duration // longest hold time of a released lock
	Bypasses      uint64       // fills that found every way of the set locked
	RMWs, RMWWait uint64       // CP lock-prefixed RMWs; those that waited for another's lock
}

// HitRate returns hits / accesses of requester r (0 when it made none).
func (s L2Stats) HitRate(r Requester) float64 {
	n := s.Hits[r] + s.Misses[r]
	if n == 0 {
		return 0
	}
	return float64(s.Hits[r]) / float64(n)
}

// L2 is the set-associative tag array of the GPU L2: which lines are
// resident (LRU replacement), which are LOCKED by a store_locked (pinned:
// never a victim, unlocked by the first CP access) and which are locked by
// a CP read-modify-write (other accessors wait). Line data stay in the
// functional caches of gpu.go and in memory; evicting a line here writes
// its dirty bytes back and drops the functional copy, so capacity misses
// are real.
type L2 struct {
	sets, ways int
	// setMask is sets − 1 when sets is a power of two (else 0).
	setMask uint
	// keys holds each way's line, 0 when the way is invalid (no line of
	// node memory is at address 0): a lookup scans a set's 16 keys, two
	// host cache lines, instead of its 16 ways' whole state, six (the
	// scan was a CP poll's costliest step). lines holds the ways' state.
	// Both are blocks of l2PageSets sets, made when a line of one of
	// their sets is first filled (nil: every way invalid): a 50 MiB L2 is
	// 19.7 MB of tags, and a run's GPUs mostly touch a few of its sets.
	// A block holds blockWays[b] ways of each of its sets, the first
	// ones, grown (doubling, up to ways) when a fill finds them all valid:
	// the ways past them are invalid, and a fill takes the first invalid
	// way, so they would be the next taken. A halo's regions stream
	// through one way of each set: a block of 16 ways was 16 KB where
	// 1 KB holds what is used (8,192 GPUs were 4 GB of tags). The three
	// tables are made at the first fill (nil until then: a GPU whose L2
	// is never filled, as under the kernel-boundary strategies, holds
	// none; a 50 MiB L2's are 39 KB).
	keys      [][]mem.Addr
	lines     [][]l2line
	blockWays []uint8
	blocks    int // the tables' length
	clock     uint64
	stats     L2Stats
	shared    [][2]mem.Addr // NIC-shared ranges: a system acquire invalidates them
	// sharedDirty says shared has ranges added since it was last sorted
	// and merged (nicShared searches it: a system acquire asks for every
	// line the L2 holds, and a device may share a range per queue).
	sharedDirty bool
	lockedAt    map[mem.Addr]sim.Time    // when each store_locked line was locked
	rmwDone     map[mem.Addr]*sim.Signal // the end of each CP RMW holding a line
	// cpLines counts the CP's accesses per line when RecordCPLines asked
	// for it (nil otherwise: the common runs pay one nil check).
	cpLines map[mem.Addr]*CPLineCount
}

// CPLineCount is what the CP did to one L2 line (RecordCPLines): its
// accesses that hit and missed, and of those, how many found the line
// LOCKED by a store_locked (the accesses locking protected; each unlocks
// the line, so at most one per locking).
type CPLineCount struct {
	Hits, Misses, Locked uint64
}

// RecordCPLines makes the L2 count the CP's accesses line by line
// (CPLines), for a diagnostic of which structures the CP's hit rate comes
// from. Call it before the run; without a tag model it does nothing.
func (g *GPU) RecordCPLines() {
	if g.tags != nil && g.tags.cpLines == nil {
		g.tags.cpLines = map[mem.Addr]*CPLineCount{}
	}
}

// CPLines returns the CP's accesses per line since RecordCPLines (nil
// without it). The map is the L2's own: read it after the run.
func (g *GPU) CPLines() map[mem.Addr]*CPLineCount {
	if g.tags == nil {
		return nil
	}
	return g.tags.cpLines
}

// cpLine returns line l's CP counts, made on first use (cpLines is set).
func (t *L2) cpLine(l mem.Addr) *CPLineCount {
	c := t.cpLines[l]
	if c == nil {
		c = &CPLineCount{}
		t.cpLines[l] = c
	}
	return c
}

// l2line is one way of the tag model, beside its line in L2.keys: 16
// bytes in all, the L2's ways are allocated in blocks of l2PageSets sets
// as their sets are first filled (a 1 MiB L2's 16 K ways are 0.26 MB, and
// 0.9 MB with the rare locking state inline: that state lives in the L2's
// maps, keyed by the line, while a line is locked). The way's last use
// (the L2's clock, below 2^62) and its two flags share one word: a miss
// scans its set's 16 ways for the LRU victim, and at 8 bytes a way that
// is two host cache lines instead of four (a bulk copy passes every 64 B
// line through here; 24 bytes a way with the flags apart).
type l2line struct {
	st uint64 // last use | l2Locked | l2RMW
}

const (
	l2Locked = 1 << 63 // store_locked (since L2.lockedAt[line])
	l2RMW    = 1 << 62 // held by a CP RMW (L2.rmwDone[line] is notified at its end)
	l2Flags  = l2Locked | l2RMW
)

// lastUse is the clock of the way's last access.
func (w *l2line) lastUse() uint64 { return w.st &^ l2Flags }

// use records an access at clock c (flags kept).
func (w *l2line) use(c uint64) { w.st = w.st&l2Flags | c }

func (w *l2line) isLocked() bool { return w.st&l2Locked != 0 }
func (w *l2line) isRMW() bool    { return w.st&l2RMW != 0 }

// set sets or clears flag f.
func (w *l2line) set(f uint64, on bool) {
	if on {
		w.st |= f
	} else {
		w.st &^= f
	}
}

// UseL2 gives the GPU its L2 tag model. Call it once, before the run.
func (g *GPU) UseL2(s L2Spec) {
	if err := s.Validate(); err != nil {
		panic(fmt.Sprintf("%s: %v", g.name, err))
	}
	ways := s.Ways
	sets := int(s.Size) / mem.LineSize / ways
	pages := (sets + l2PageSets - 1) / l2PageSets
	g.tags = &L2{sets: sets, ways: ways, blocks: pages}
	if sets&(sets-1) == 0 && sets > 1 {
		g.tags.setMask = uint(sets - 1)
	}
}

// l2PageSets is the sets of one block of the tag array (the state of 64
// consecutive lines' sets: 64 × 16 B per way a block holds).
const l2PageSets = 64

// L2Stats returns the tag model's counters (zero without UseL2).
func (g *GPU) L2Stats() L2Stats {
	if g.tags == nil {
		return L2Stats{}
	}
	return g.tags.stats
}

// ShareWithNIC records [a, a+n) as memory the NIC writes (heap, get
// destinations, fetch results): a system-scope acquire by the CP
// invalidates its L2 lines.
func (g *GPU) ShareWithNIC(a mem.Addr, n uint64) {
	if g.tags != nil && n > 0 {
		g.tags.shared = append(g.tags.shared, [2]mem.Addr{a, a + mem.Addr(n)})
		g.tags.sharedDirty = true
	}
}

// wayAt returns the block of way i (set index × ways + way) and its
// offset there, ok false when the block holds no such way (it is
// invalid).
func (t *L2) wayAt(i int) (p, o int, ok bool) {
	set, w := i/t.ways, i%t.ways
	p = set / l2PageSets
	if t.blockWays == nil {
		return p, 0, false
	}
	bw := int(t.blockWays[p])
	return p, set%l2PageSets*bw + w, w < bw
}

// way returns way i's state; its block must hold it (a key was found or
// filled there).
func (t *L2) way(i int) *l2line {
	p, o, _ := t.wayAt(i)
	return &t.lines[p][o]
}

// key returns the line way i holds, 0 when invalid.
func (t *L2) key(i int) mem.Addr {
	if p, o, ok := t.wayAt(i); ok {
		return t.keys[p][o]
	}
	return 0
}

// invalidate makes way i invalid (its block holds it).
func (t *L2) invalidate(i int) {
	p, o, _ := t.wayAt(i)
	t.keys[p][o] = 0
}

// locate returns line l's set index, its block and the offset of the
// set's first way in the block, and the ways the block holds of each set
// (unsigned, and l2PageSets a power of two: shifts and masks on the
// lookup path).
func (t *L2) locate(l mem.Addr) (set, block, off, n uint) {
	k := uint(l) / mem.LineSize
	if t.setMask != 0 {
		set = k & t.setMask
	} else {
		set = k % uint(t.sets)
	}
	block = set / l2PageSets
	if t.blockWays == nil {
		return set, block, 0, 0
	}
	n = uint(t.blockWays[block])
	return set, block, set % l2PageSets * n, n
}

// setWays returns the keys and states of the ways line l's block holds
// of its set, making the block on first use with one way of each set.
func (t *L2) setWays(l mem.Addr) ([]mem.Addr, []l2line) {
	_, p, o, n := t.locate(l)
	if n == 0 {
		if t.blockWays == nil {
			t.keys, t.lines, t.blockWays = make([][]mem.Addr, t.blocks), make([][]l2line, t.blocks), make([]uint8, t.blocks)
		}
		t.keys[p] = make([]mem.Addr, l2PageSets)
		t.lines[p] = make([]l2line, l2PageSets)
		t.blockWays[p] = 1
		_, p, o, n = t.locate(l)
	}
	return t.keys[p][o : o+n], t.lines[p][o : o+n]
}

// growSet gives line l's block more ways of each set (twice as many, up
// to ways; the new ones invalid), when a fill found every way it holds
// of l's set valid, and returns the set's ways then and the index there
// of the first new way: the first invalid way of the set, which the fill
// takes. It returns -1 when the block holds all ways already.
func (t *L2) growSet(l mem.Addr) (keys []mem.Addr, set []l2line, first int) {
	_, p, _, n := t.locate(l)
	if int(n) >= t.ways {
		return nil, nil, -1
	}
	nw := min(2*n, uint(t.ways))
	keys, lines := make([]mem.Addr, l2PageSets*nw), make([]l2line, l2PageSets*nw)
	for s := range uint(l2PageSets) {
		copy(keys[s*nw:], t.keys[p][s*n:(s+1)*n])
		copy(lines[s*nw:], t.lines[p][s*n:(s+1)*n])
	}
	t.keys[p], t.lines[p], t.blockWays[p] = keys, lines, uint8(nw)
	keys, set = t.setWays(l)
	return keys, set, int(n)
}

// findWay returns the index of the way holding line l (set index × ways
// + way), or -1.
func (t *L2) findWay(l mem.Addr) int {
	set, p, o, n := t.locate(l)
	if n == 0 {
		return -1
	}
	for i, k := range t.keys[p][o : o+n] {
		if k == l {
			return int(set)*t.ways + i
		}
	}
	return -1
}

func (t *L2) find(l mem.Addr) *l2line {
	_, p, o, n := t.locate(l)
	if n == 0 {
		return nil
	}
	for i, k := range t.keys[p][o : o+n] {
		if k == l {
			return &t.lines[p][int(o)+i]
		}
	}
	return nil
}

// touch looks line l up for requester r, filling it on a miss (LRU victim
// among unlocked ways; with every way locked the access bypasses the L2).
// It returns whether it hit and, for a fill, the victim evicted.
func (g *GPU) touch(l mem.Addr, r Requester) (hit bool) {
	hit, _ = g.touchWay(l, r)
	return hit
}

// touchWay is touch that also returns the way that holds l afterwards (nil
// without a tag model, or when the access bypassed the L2).
func (g *GPU) touchWay(l mem.Addr, r Requester) (hit bool, way *l2line) {
	t := g.tags
	if t == nil {
		return g.l2 != nil && g.l2.get(l) != nil, nil
	}
	return g.touchFound(l, r, t.find(l))
}

// touchFound is touchWay with a tag model, for a caller that has just
// looked l up: w is t.find(l).
func (g *GPU) touchFound(l mem.Addr, r Requester, w *l2line) (hit bool, way *l2line) {
	t := g.tags
	t.clock++
	if w != nil {
		w.use(t.clock)
		t.stats.Hits[r]++
		if r == CP && t.cpLines != nil {
			t.cpLine(l).Hits++
		}
		return true, w
	}
	t.stats.Misses[r]++
	if r == CP && t.cpLines != nil {
		t.cpLine(l).Misses++
	}
	keys, set := t.setWays(l)
	victim := -1
	for i := range set {
		w := &set[i]
		if w.st&l2Flags != 0 {
			continue
		}
		if keys[i] == 0 {
			victim = i
			break
		}
		if victim < 0 || w.lastUse() < set[victim].lastUse() {
			victim = i
		}
	}
	if victim < 0 || keys[victim] != 0 {
		// Every way the block holds of the set is valid: the first way
		// past them is invalid, and the first invalid way is the victim.
		if k, s, first := t.growSet(l); first >= 0 {
			keys, set, victim = k, s, first
		}
	}
	if victim < 0 {
		t.stats.Bypasses++
		return false, nil
	}
	w = &set[victim]
	if old := keys[victim]; old != 0 {
		t.stats.Evictions++
		g.dropLine(old)
	}
	*w = l2line{st: t.clock}
	keys[victim] = l
	return false, w
}

// dropLine writes the functional L2 copy of line l back (dirty bytes only)
// and forgets it: the line left the L2.
func (g *GPU) dropLine(l mem.Addr) {
	if g.l2 == nil {
		return
	}
	if cl := g.l2.get(l); cl != nil {
		if cl.dirty != 0 {
			cl.flush(l, g.mem)
			g.stats.L2Writebks++
		}
		g.l2.lines.del(l)
	}
}

// cpUnlock releases a store_locked line at the first CP access.
func (g *GPU) cpUnlock(l mem.Addr) {
	if g.tags == nil {
		return
	}
	g.cpUnlockWay(g.tags.find(l), l)
}

// cpUnlockWay is cpUnlock of l, which way w holds (nil: none).
func (g *GPU) cpUnlockWay(w *l2line, l mem.Addr) {
	if w != nil && w.isLocked() {
		w.set(l2Locked, false)
		g.tags.stats.Locked--
		g.tags.stats.Unlocks++
		hold := g.e.Now() - g.tags.lockedAt[l]
		delete(g.tags.lockedAt, l)
		g.tags.stats.LockHold += hold
		if g.tags.cpLines != nil {
			g.tags.cpLine(l).Locked++
		}
		g.tags.stats.LockHoldMax = max(g.tags.stats.LockHoldMax, hold)
	}
}

// l2Line returns the current bytes of line l as the L2 holds them: the
// functional dGPU copy when present, else memory.
func (g *GPU) l2Line(l mem.Addr) [mem.LineSize]byte {
	var b [mem.LineSize]byte
	g.l2LineInto(l, &b)
	return b
}

// l2LineInto is l2Line into *dst.
func (g *GPU) l2LineInto(l mem.Addr, dst *[mem.LineSize]byte) {
	if g.l2 != nil {
		if cl := g.l2.get(l); cl != nil {
			*dst = cl.data
			return
		}
	}
	g.mem.Read(l, dst[:])
}

// CPReadLine is a CP core's access to line l at the L2 after its private
// L1 missed: the tag lookup (a CP access unlocks a store_locked line), the
// line's current bytes, and the latency (an L2 hit, or the lookup and
// memory past it: Spec.MissLatency).
// The caller sleeps for lat. A line held by another CP's RMW waits for it
// first (p blocks).
func (g *GPU) CPReadLine(p *sim.Proc, l mem.Addr) (data [mem.LineSize]byte, hit bool, lat sim.Duration) {
	g.waitRMW(p, l)
	return g.cpReadLine(l)
}

// TryCPReadLine is CPReadLine as a step (sim.Stepper): while a CP RMW
// holds the line it waits once and reports ok false (call it again after
// the wait); else it reads the line as CPReadLine does.
func (g *GPU) TryCPReadLine(p *sim.Proc, l mem.Addr) (data [mem.LineSize]byte, hit bool, lat sim.Duration, ok bool) {
	hit, lat, ok = g.TryCPReadLineInto(p, l, &data)
	return data, hit, lat, ok
}

// TryCPReadLineInto is TryCPReadLine that writes the line into *dst (a
// poll reads a line per event: no copies of it on the way), looking the
// line's tag up once.
func (g *GPU) TryCPReadLineInto(p *sim.Proc, l mem.Addr, dst *[mem.LineSize]byte) (hit bool, lat sim.Duration, ok bool) {
	var w *l2line
	if g.tags != nil {
		if w = g.tags.find(l); w != nil && w.isRMW() {
			g.tags.stats.RMWWait++
			p.Wait(g.tags.rmwDone[l], "an L2 line locked by a CP RMW")
			return false, 0, false
		}
		hit, w = g.touchFound(l, CP, w)
	} else {
		hit, w = g.touchWay(l, CP)
	}
	g.cpUnlockWay(w, l)
	lat = g.missLat
	if hit {
		lat = g.spec.Cycles(g.spec.L2Cycles)
	}
	g.l2LineInto(l, dst)
	return hit, lat, true
}

// cpReadLine is CPReadLine once no RMW holds the line.
func (g *GPU) cpReadLine(l mem.Addr) (data [mem.LineSize]byte, hit bool, lat sim.Duration) {
	hit, w := g.touchWay(l, CP)
	g.cpUnlockWay(w, l)
	lat = g.missLat
	if hit {
		lat = g.spec.Cycles(g.spec.L2Cycles)
	}
	return g.l2Line(l), hit, lat
}

// CPStore64 is a CP core's store of v at a, written through its L1 into the
// L2 (device scope: visible to the work-groups at the L2). In dGPU mode the
// line is dirty in the L2 until a system release; in APU mode the L2 is
// write-through and the store goes on past it, done (visible to every
// agent) when a work-group's store there is (CPStoreDone). Pollers of the
// word are woken. lat is how long the store keeps the core (no store
// buffer): until it is done.
func (g *GPU) CPStore64(p *sim.Proc, a mem.Addr, v uint64) (hit bool, lat sim.Duration) {
	g.waitRMW(p, mem.Line(a))
	return g.cpStoreIssue(a, v)
}

// TryCPStore64 is CPStore64 as a step: while a CP RMW holds the line it
// waits once and reports ok false (call it again after the wait); else it
// stores as CPStore64 does.
func (g *GPU) TryCPStore64(p *sim.Proc, a mem.Addr, v uint64) (hit bool, lat sim.Duration, ok bool) {
	if g.tags != nil {
		l := mem.Line(a)
		if w := g.tags.find(l); w != nil && w.isRMW() {
			g.tags.stats.RMWWait++
			p.Wait(g.tags.rmwDone[l], "an L2 line locked by a CP RMW")
			return false, 0, false
		}
	}
	hit, lat = g.cpStoreIssue(a, v)
	return hit, lat, true
}

// cpPastL2 reports whether a CP store to a goes on past the L2 toward
// memory, as a work-group's does (WG.storeBeyondL1): in APU mode (a
// write-through L2), except for the GPU's own memory behind a memory-side
// L2, where the store stays at the L2.
func (g *GPU) cpPastL2(a mem.Addr) bool { return g.l2 == nil && !g.memSide(a) }

// CPStoreDone returns when a CP store to a, leaving the CP's
// write-through L1 now, is done: visible where every reader of the word
// looks, and what the CP's release marker and a load of its line wait
// for. Where it stays at the L2 (a dGPU's write-back L2, the GPU's own
// memory behind a memory-side L2) that is one L2 access. Past a
// write-through L2 (APU mode) it follows the one rule of a work-group's
// store there (GPU.farStore): on a node behind the coherent directory
// the directory's ack on receipt (gpu.l2_cycles + soc.dir_latency), else
// its landing in memory, or beyond NVLink-C2C once the posted write has
// crossed the link. The CP sits on the GPU's L2 as a CU does (the
// documents' simulator builds each CP on a GPU-side L1 controller, the
// TCP of the VIPER protocol), so its stores go the same way.
func (g *GPU) CPStoreDone(a mem.Addr) sim.Time {
	if g.cpPastL2(a) {
		return g.farStore(a, 8)
	}
	return g.e.Now() + g.spec.Cycles(g.spec.L2Cycles)
}

// cpStoreIssue is an unbuffered CP store leaving the core now: at the L2
// at once (cpStore), or past a write-through L2 landing when it is done
// (CPStoreDone), not before; lat is the wait until then.
func (g *GPU) cpStoreIssue(a mem.Addr, v uint64) (hit bool, lat sim.Duration) {
	if !g.cpPastL2(a) {
		return g.cpStore(a, v)
	}
	l := mem.Line(a)
	hit, w := g.touchWay(l, CP)
	g.cpUnlockWay(w, l)
	at := g.CPStoreDone(a)
	g.landAt(a, v, at)
	return hit, at - g.e.Now()
}

// CPStoreArrive is a buffered CP store of v at a reaching the L2 (see
// CPStore64) at its done time (CPStoreDone): past a write-through L2 the
// time it is done there. While another CP thread's RMW holds the line it
// does nothing and reports ok false: the store waits and tries again.
func (g *GPU) CPStoreArrive(a mem.Addr, v uint64) (hit, ok bool) {
	if g.tags != nil {
		if w := g.tags.find(mem.Line(a)); w != nil && w.isRMW() {
			return false, false
		}
	}
	hit, _ = g.cpStore(a, v)
	return hit, true
}

// cpStore writes a CP store of v at a where it is done: into the L2's
// functional copy (dGPU), or into memory (past a write-through L2, at
// its done time; the GPU's own memory behind a memory-side L2, whose
// values are memory's: the work-groups' loads of it read memory, not the
// functional copy). lat is one L2 access.
func (g *GPU) cpStore(a mem.Addr, v uint64) (hit bool, lat sim.Duration) {
	l := mem.Line(a)
	hit, w := g.touchWay(l, CP)
	g.cpUnlockWay(w, l)
	lat = g.spec.Cycles(g.spec.L2Cycles)
	if !g.l2Copy(a) {
		g.mem.Store64(a, v)
		return hit, lat
	}
	cl := g.l2.get(l)
	if cl == nil {
		cl = g.l2.fill(l, g.mem, g.mem)
	}
	off := a - l
	binary.LittleEndian.PutUint64(cl.data[off:], v)
	g.l2.write(l, cl, off, 0xff)
	g.mem.Touch(a, 8) // wake pollers: the new value is at the coherence point
	return hit, lat
}

// CPRMW is a CP core's lock-prefixed read-modify-write of the word at a
// (the ComP-Net paper use 1): it bypasses the CP L1; the read half locks the
// line at the L2 (other accessors wait), f computes the new value from
// the old, the write half stores it and releases the lock. It returns the
// old value and costs p two L2 accesses.
func (g *GPU) CPRMW(p *sim.Proc, a mem.Addr, f func(old uint64) uint64) uint64 {
	g.waitRMW(p, mem.Line(a))
	lk, lat := g.cpRMWLock(a)
	p.Sleep(lat)
	old, wlat := g.CPRMWWrite(a, f)
	p.Sleep(wlat)
	g.CPRMWUnlock(lk)
	return old
}

// CPRMWLock is the line lock a CP RMW holds between its halves (TryCPRMW,
// CPRMWWrite, CPRMWUnlock).
type CPRMWLock struct {
	// way is the index of the way locked in the tag model plus one (0:
	// no tag model, or the access bypassed the L2). An index, not the
	// way's address: a fill between the halves may grow its block.
	way int
	l   mem.Addr
}

// TryCPRMW is CPRMW's read half as a step (sim.Stepper): while another CP
// RMW holds the line it waits once and reports ok false (call it again
// after the wait); else it locks the line and returns the lock and the
// read's latency, which the caller sleeps for before CPRMWWrite.
func (g *GPU) TryCPRMW(p *sim.Proc, a mem.Addr) (lk CPRMWLock, lat sim.Duration, ok bool) {
	l := mem.Line(a)
	if g.tags != nil {
		if w := g.tags.find(l); w != nil && w.isRMW() {
			g.tags.stats.RMWWait++
			p.Wait(g.tags.rmwDone[l], "an L2 line locked by a CP RMW")
			return lk, 0, false
		}
	}
	lk, lat = g.cpRMWLock(a)
	return lk, lat, true
}

// cpRMWLock is CPRMW's read half once no RMW holds the line.
func (g *GPU) cpRMWLock(a mem.Addr) (CPRMWLock, sim.Duration) {
	l := mem.Line(a)
	hit := g.touch(l, CP)
	g.cpUnlock(l)
	i := -1
	if g.tags != nil {
		g.tags.stats.RMWs++
		if i = g.tags.findWay(l); i >= 0 {
			g.tags.way(i).set(l2RMW, true)
			if g.tags.rmwDone == nil {
				g.tags.rmwDone = map[mem.Addr]*sim.Signal{}
			}
			g.tags.rmwDone[l] = new(sim.Signal)
		}
	}
	lat := g.missLat
	if hit {
		lat = g.spec.Cycles(g.spec.L2Cycles)
	}
	return CPRMWLock{way: i + 1, l: l}, lat
}

// CPRMWWrite is CPRMW's write half, after the read's latency: it reads
// the old value, stores f(old) and returns the old value and the write's
// latency, which the caller sleeps for before CPRMWUnlock.
func (g *GPU) CPRMWWrite(a mem.Addr, f func(old uint64) uint64) (old uint64, lat sim.Duration) {
	l := mem.Line(a)
	data := g.l2Line(l)
	old = binary.LittleEndian.Uint64(data[a-l:])
	_, lat = g.cpStore(a, f(old))
	return old, lat
}

// CPRMWUnlock releases the line lock lk after the write, waking the
// accessors that waited for it.
func (g *GPU) CPRMWUnlock(lk CPRMWLock) {
	if i, l := lk.way-1, lk.l; i >= 0 && g.tags.key(i) == l {
		g.tags.way(i).set(l2RMW, false)
		done := g.tags.rmwDone[l]
		delete(g.tags.rmwDone, l)
		done.Notify()
	}
}

func (g *GPU) waitRMW(p *sim.Proc, l mem.Addr) {
	if g.tags == nil {
		return
	}
	for {
		w := g.tags.find(l)
		if w == nil || !w.isRMW() {
			return
		}
		g.tags.stats.RMWWait++
		p.Wait(g.tags.rmwDone[l], "an L2 line locked by a CP RMW")
	}
}

// SystemRelease writes every dirty L2 line back to memory (dGPU; a no-op
// in APU mode): what the CP's system-scope release marker does before it
// rings the NIC, so the command and source data are visible to it.
func (g *GPU) SystemRelease(p *sim.Proc) { g.writeBackAll(p) }

// SystemAcquire invalidates the L2 lines of the NIC-shared ranges (dGPU),
// so data the NIC wrote into memory is seen, at the cost of
// gpu.l2_invalidate_cycles plus one cycle per line. Queue lines, which
// the NIC never writes, stay resident.
func (g *GPU) SystemAcquire(p *sim.Proc) {
	if g.l2 == nil {
		return
	}
	n := 0
	// Visit the lines in fill order, not map order: a flush wakes pollers
	// of its line, and their order must not depend on the run.
	var shared []dirtyRef
	for _, e := range g.l2.lines.ents {
		if e.l != 0 && g.nicShared(e.l) {
			shared = append(shared, dirtyRef{e.l, e.cl})
		}
	}
	slices.SortFunc(shared, func(a, b dirtyRef) int { return cmp.Compare(a.cl.seq, b.cl.seq) })
	for _, d := range shared {
		l, cl := d.l, d.cl
		if cl.dirty != 0 {
			cl.flush(l, g.mem)
			g.stats.L2Writebks++
		}
		g.l2.lines.del(l)
		if g.tags != nil {
			if i := g.tags.findWay(l); i >= 0 && g.tags.way(i).st&l2Flags == 0 {
				g.tags.invalidate(i)
			}
		}
		n++
	}
	p.Sleep(g.spec.Cycles(g.spec.L2InvCycles + n))
}

func (g *GPU) nicShared(l mem.Addr) bool {
	if g.tags == nil {
		return true
	}
	t := g.tags
	if t.sharedDirty {
		slices.SortFunc(t.shared, func(a, b [2]mem.Addr) int { return cmp.Compare(a[0], b[0]) })
		merged := t.shared[:0]
		for _, r := range t.shared {
			if k := len(merged) - 1; k >= 0 && r[0] <= merged[k][1] {
				merged[k][1] = max(merged[k][1], r[1])
				continue
			}
			merged = append(merged, r)
		}
		t.shared, t.sharedDirty = merged, false
	}
	// The last range starting before the line's end, if it ends after the
	// line's start, overlaps the line.
	i := sort.Search(len(t.shared), func(i int) bool { return t.shared[i][0] >= l+mem.LineSize }) - 1
	return i >= 0 && t.shared[i][1] > l
}

// StoreTracked is Store64 seen by the L2 tag model: the line is looked up
// (filled on a miss) for the CU. With locked set it is the store_locked
// instruction of the ComP-Net paper: the line is pinned LOCKED until the
// first CP access.
func (w *WG) StoreTracked(a mem.Addr, v uint64, locked bool) {
	w.Store64(a, v)
	w.tracked(a, locked)
}

// TryStoreTracked is StoreTracked in steps (see TryStore64).
func (w *WG) TryStoreTracked(a mem.Addr, v uint64, locked bool) bool {
	if !w.TryStore64(a, v) {
		return false
	}
	w.tracked(a, locked)
	return true
}

// tracked is StoreTracked's tag-model part, after the store.
func (w *WG) tracked(a mem.Addr, locked bool) {
	g := w.g
	l := mem.Line(a)
	g.touch(l, CU)
	if !locked || g.tags == nil {
		return
	}
	g.tags.stats.LockedStores++
	if ln := g.tags.find(l); ln != nil && !ln.isLocked() {
		ln.set(l2Locked, true)
		if g.tags.lockedAt == nil {
			g.tags.lockedAt = map[mem.Addr]sim.Time{}
		}
		g.tags.lockedAt[l] = g.e.Now()
		g.tags.stats.Locked++
		g.tags.stats.MaxLocked = max(g.tags.stats.MaxLocked, g.tags.stats.Locked)
	}
}

// CoherentLine returns line l as the device coherence point holds it (the
// L2's copy, else memory), at no cost: what a coherent cache compares its
// copy with.
func (g *GPU) CoherentLine(l mem.Addr) [mem.LineSize]byte { return g.l2Line(l) }

// CoherentLoad64 returns the word at a as the device coherence point holds
// it (the L2's copy, else memory), at no cost: what the next acquire and
// load would return. Pollers use it to sleep through stretches where
// nothing changes without missing a change made during their last load.
func (g *GPU) CoherentLoad64(a mem.Addr) uint64 {
	l := mem.Line(a)
	d := g.l2Line(l)
	return binary.LittleEndian.Uint64(d[a-l:])
}
