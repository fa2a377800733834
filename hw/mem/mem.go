package mem

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sort"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Addr is a byte address in a node's address space. 0 is never allocated.
type Addr uint64

// LineSize is the cache-line size everywhere (the dissertation's configuration tables).
const LineSize = 64

// Line returns the address of the cache line holding a.
func Line(a Addr) Addr { return a &^ (LineSize - 1) }

// Pool names where an allocation lives.
type Pool uint8

// Pools of a node's memory.
const (
	Host Pool = iota // host DRAM (in APU mode, the one shared memory)
	GPU              // dGPU memory; in APU mode the same physical memory
)

// String returns the printed name of a Pool.
func (p Pool) String() string {
	if p == GPU {
		return "gpu"
	}
	return "host"
}

// watch is one watched line and its signal. once: handed out by WatchOnce
// only, so the watch is forgotten once a write has notified it.
type watch struct {
	line Addr
	sig  *sim.Signal // nil: only call watches the line
	once bool
	call func() // WatchCall's, called in the writing event; nil: none
}

// watchList is an allocation's watched lines in ascending order, in
// blocks of at most watchBlock: adding a line moves at most a block, not
// the whole list (a GPU-TN node polls 2(n−1) lines per work-group slice,
// added in no particular order).
type watchList struct {
	blocks [][]watch // each non-empty and ascending, the blocks in ascending order
	// summary has bit k set when a watched line lies in [base + k·watchGrain,
	// +watchGrain): most writes to a buffer with watched flags (the
	// payload packets landing around them) touch none, and the summary
	// tells so without searching the blocks.
	base    Addr
	summary []uint64
	// Where the last each started (block, index): payload packets land
	// in ascending order, so the next search usually starts there or
	// just after. Checked before use, never trusted.
	hintB, hintI int
}

// watchGrain is the memory one summary bit covers: a 16 MiB buffer's
// summary is 2 KiB.
const watchGrain = 1 << 10

const watchBlock = 128

// find returns the watch of line l (nil: not watched).
func (wl *watchList) find(l Addr) *watch {
	bs := wl.blocks
	bi := sort.Search(len(bs), func(i int) bool { return bs[i][len(bs[i])-1].line >= l })
	if bi == len(bs) {
		return nil
	}
	b := bs[bi]
	if i := sort.Search(len(b), func(i int) bool { return b[i].line >= l }); i < len(b) && b[i].line == l {
		return &b[i]
	}
	return nil
}

// remove drops the watch of line l, which is in the list, and clears its
// summary bit when no other watched line shares the bit's range.
func (wl *watchList) remove(l Addr) {
	bs := wl.blocks
	bi := sort.Search(len(bs), func(i int) bool { return bs[i][len(bs[i])-1].line >= l })
	b := bs[bi]
	i := sort.Search(len(b), func(i int) bool { return b[i].line >= l })
	b = slices.Delete(b, i, i+1)
	if len(b) == 0 {
		wl.blocks = slices.Delete(bs, bi, bi+1)
		wl.hintB, wl.hintI = bi, 0
	} else {
		bs[bi] = b
		wl.hintB, wl.hintI = bi, i
	}
	k := uint64(l-wl.base) / watchGrain
	same := func(o Addr) bool { return uint64(o-wl.base)/watchGrain == k }
	bs = wl.blocks
	// The neighbours of the removed line in the whole list.
	if bi, i := wl.start(l); bi < len(bs) && same(bs[bi][i].line) {
		return
	} else if i > 0 && same(bs[bi][i-1].line) {
		return
	} else if i == 0 && bi > 0 && same(bs[bi-1][len(bs[bi-1])-1].line) {
		return
	}
	wl.summary[k/64] &^= 1 << (k % 64)
}

// insert adds w, whose line is not in the list.
func (wl *watchList) insert(w watch) {
	k := uint64(w.line-wl.base) / watchGrain
	if need := int(k/64) + 1; need > len(wl.summary) {
		wl.summary = append(wl.summary, make([]uint64, need-len(wl.summary))...)
	}
	wl.summary[k/64] |= 1 << (k % 64)
	if len(wl.blocks) == 0 {
		wl.blocks = [][]watch{{w}}
		return
	}
	bi := max(0, sort.Search(len(wl.blocks), func(i int) bool { return wl.blocks[i][0].line > w.line })-1)
	b := wl.blocks[bi]
	i := sort.Search(len(b), func(i int) bool { return b[i].line >= w.line })
	b = slices.Insert(b, i, w)
	if len(b) > watchBlock {
		half := len(b) / 2
		right := slices.Clone(b[half:])
		clear(b[half:])
		b = b[:half]
		wl.blocks = slices.Insert(wl.blocks, bi+1, right)
	}
	wl.blocks[bi] = b
}

// notify wakes the watchers of the lines in [lo, hi), in ascending order,
// and reports how many WatchOnce watches it forgot (those it notified).
func (wl *watchList) notify(lo, hi Addr, free *sim.FreeList[*sim.Signal]) (forgot int) {
	if !wl.maybe(lo, hi) {
		return 0
	}
	var once [4]Addr // the lines of once watches notified (a write spans few)
	bs := wl.blocks
	bi, i := wl.start(lo)
	for ; bi < len(bs); bi, i = bi+1, 0 {
		b := bs[bi]
		for ; i < len(b); i++ {
			w := &b[i]
			if w.line >= hi {
				goto done
			}
			if w.sig != nil {
				w.sig.Notify()
			}
			if w.call != nil {
				w.call()
				if w.once { // the call stays: only the signal is forgotten
					free.Put(w.sig)
					w.sig, w.once = nil, false
				}
				continue
			}
			if w.once {
				if forgot < len(once) {
					once[forgot] = w.line
				}
				forgot++
			}
		}
	}
done:
	if forgot > len(once) { // a long write: collect the lines again
		lines := make([]Addr, 0, forgot)
		wl.each(lo, hi, nil, func(w *watch) {
			if w.once {
				lines = append(lines, w.line)
			}
		})
		for _, l := range lines {
			wl.forget(l, free)
		}
		return forgot
	}
	for _, l := range once[:forgot] {
		wl.forget(l, free)
	}
	return forgot
}

// forget removes once watch l, whose waiters a notify has just woken, and
// keeps its signal for reuse: nothing holds it any more (WatchOnce).
func (wl *watchList) forget(l Addr, free *sim.FreeList[*sim.Signal]) {
	w := wl.find(l)
	free.Put(w.sig)
	wl.remove(l)
}

// maybe reports whether [lo, hi) may hold a watched line (false: surely
// none), from the summary.
func (wl *watchList) maybe(lo, hi Addr) bool {
	if hi <= lo || lo < wl.base {
		return hi > lo
	}
	k0, k1 := uint64(lo-wl.base)/watchGrain, uint64(hi-1-wl.base)/watchGrain
	for w := k0 / 64; w <= k1/64 && w < uint64(len(wl.summary)); w++ {
		bits := wl.summary[w]
		if w == k0/64 {
			bits &= ^uint64(0) << (k0 % 64)
		}
		if w == k1/64 {
			bits &= ^uint64(0) >> (63 - k1%64)
		}
		if bits != 0 {
			return true
		}
	}
	return false
}

// each calls fn with the signal of every watched line in [lo, hi), in
// ascending order, or fw with the watch when fn is nil.
func (wl *watchList) each(lo, hi Addr, fn func(*sim.Signal), fw func(*watch)) {
	bs := wl.blocks
	bi, i := wl.start(lo)
	for ; bi < len(bs); bi, i = bi+1, 0 {
		b := bs[bi]
		for ; i < len(b); i++ {
			if b[i].line >= hi {
				return
			}
			if fn != nil {
				fn(b[i].sig)
			} else {
				fw(&b[i])
			}
		}
	}
}

// start returns the first watched line at or after lo as (block, index),
// or (len(blocks), 0) when there is none: the hint when it is that line
// (or the next block's first is), else by binary search.
func (wl *watchList) start(lo Addr) (int, int) {
	bs := wl.blocks
	if bi, i := wl.hintB, wl.hintI; bi < len(bs) && i < len(bs[bi]) {
		b := bs[bi]
		for k := 0; k < 2 && i < len(b) && b[i].line < lo; k++ {
			i++ // the next line or the one after: the packet after
		}
		if i == len(b) && bi+1 < len(bs) {
			bi, i = bi+1, 0
			b = bs[bi]
		}
		if i < len(b) && b[i].line >= lo && (i > 0 && b[i-1].line < lo || i == 0 && (bi == 0 || bs[bi-1][len(bs[bi-1])-1].line < lo)) {
			wl.hintB, wl.hintI = bi, i
			return bi, i
		}
	}
	bi := sort.Search(len(bs), func(i int) bool { return bs[i][len(bs[i])-1].line >= lo })
	if bi == len(bs) {
		return bi, 0
	}
	b := bs[bi]
	i := sort.Search(len(b), func(i int) bool { return b[i].line >= lo })
	wl.hintB, wl.hintI = bi, i
	return bi, i
}

// ctrlLine is one control line of a payload-free allocation. A line whose
// bytes are zero but for one 8-byte word (a flag or sequence word: nearly
// every control line) keeps that word in the entry, next to the address a
// search ends on (behind a pointer the bytes were a cache miss of their
// own: a GPU-TN node at 256 nodes reads thousands of flag lines, and
// copying them out was 8 % of the run); a line with more non-zero words
// keeps all its bytes in its region's ctrlBytes, word their index there.
// Which of the three the line is sits in the address's low bits, which a
// line's address does not use: 16 bytes an entry, no pointer for the
// collector to follow (it was 32 bytes with a pointer to the bytes, 72
// before that): a GPU-TN node at a thousand nodes and 16 slices has 32,736
// control lines, four fifths of the run's heap.
type ctrlLine struct {
	key  Addr   // the line's address | at: 0 every byte zero, 1 + the index of the one word that may be non-zero, or ctrlFull
	word uint64 // the value of that word, or the bytes' index in ctrlBytes (ctrlFull)
}

// ctrlFull in a ctrlLine's low bits: the line's bytes are in ctrlBytes.
const ctrlFull = LineSize - 1

// addr returns the line's address.
func (c *ctrlLine) addr() Addr { return c.key &^ (LineSize - 1) }

// read copies the line's bytes [from, from+len(dst)) into dst; bs are the
// region's ctrlBytes.
func (c *ctrlLine) read(bs [][LineSize]byte, dst []byte, from int) {
	at := c.key & (LineSize - 1)
	if at == ctrlFull {
		copy(dst, bs[c.word][from:])
		return
	}
	if len(dst) == 8 && from&7 == 0 { // one aligned word (a flag's load): without the calls of clear and copy
		v := uint64(0)
		if int(at)-1 == from>>3 {
			v = c.word
		}
		putLE64(dst, v)
		return
	}
	clear(dst)
	if at == 0 {
		return
	}
	lo := 8 * int(at-1) // the word's bytes [lo, lo+8) of the line
	a, b := max(lo, from), min(lo+8, from+len(dst))
	if a == lo && b == lo+8 { // the whole word (a line's fill): one store, not a copy call
		putLE64(dst[lo-from:], c.word)
		return
	}
	if a < b {
		var w [8]byte
		putLE64(w[:], c.word)
		copy(dst[a-from:b-from], w[a-lo:b-lo])
	}
}

// write copies src into the line's bytes from from on; bs are the
// region's ctrlBytes, to which a line whose second word becomes non-zero
// moves its bytes.
func (c *ctrlLine) write(bs *[][LineSize]byte, src []byte, from int) {
	at := c.key & (LineSize - 1)
	if at == ctrlFull {
		copy((*bs)[c.word][from:], src)
		return
	}
	if len(src) == 8 && from&7 == 0 && c.wordStore(at, from>>3, leUint64(src)) {
		return
	}
	c.writeLine(bs, src, from)
}

// writeLine is write of a line whose bytes are not in ctrlBytes, through
// the line's bytes.
func (c *ctrlLine) writeLine(bs *[][LineSize]byte, src []byte, from int) {
	var b [LineSize]byte
	c.read(nil, b[:], 0)
	copy(b[from:], src)
	l := c.addr()
	c.key, c.word = l, 0
	for i := range LineSize / 8 {
		w := leUint64(b[8*i:])
		if w == 0 {
			continue
		}
		if c.key != l { // a second non-zero word: keep the bytes
			*bs = append(*bs, b)
			c.key, c.word = l|ctrlFull, uint64(len(*bs)-1)
			return
		}
		c.key, c.word = l|Addr(i+1), w
	}
}

// wordStore is write of the aligned word i, value v, to a line whose
// bytes are not in ctrlBytes (at its key's low bits), where that leaves
// at most one non-zero word: the entry write's scan of the line's words
// would make, without building the line. It reports false, changing
// nothing, where the line would get a second non-zero word.
func (c *ctrlLine) wordStore(at Addr, i int, v uint64) bool {
	l := c.addr()
	switch {
	case at != 0 && int(at)-1 != i && c.word != 0: // another word is non-zero
		if v != 0 {
			return false
		}
	case v == 0:
		c.key, c.word = l, 0
	default:
		c.key, c.word = l|Addr(i+1), v
	}
	return true
}

// putLE64 stores v little-endian in b[:8]: one 8-byte store (a loop of
// byte stores was eight, 2 % of a payload-free GPU-TN run's instructions).
func putLE64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }

func leUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// ctrlIn returns the control lines of r that overlap [a, a+n). When its
// previous answer does not fit, it looks in one block of the block index
// (indexCtrl), not in all of r's control lines: with thousands per buffer
// (GPU-TN's flags) and accesses all over it, the full search's cache
// misses were a tenth of a 256-node run.
func (r *region) ctrlIn(a Addr, n int) []ctrlLine {
	// A range inside the gap between control lines that the last empty
	// answer found has none either: the packets of a message landing
	// between two tasks' commands of a receive buffer need not touch the
	// lines (a cache miss each at a thousand nodes).
	if a >= r.gapLo && a+Addr(n) <= r.gapHi {
		return nil
	}
	c, l := r.ctrl, Line(a)
	// The answer is often the previous one (a read right after HasData of
	// the same range, the next packet of a message). Its bounds are kept
	// here, in the struct every access reads: checking them against the
	// entries cost a cache miss on the previous answer's line whenever it
	// did not fit, which at a thousand nodes is most lookups (each step
	// polls a fresh flag and stamps a fresh chunk).
	lo := r.ctrlHint
	if l < r.hintLo || l > r.hintHi || lo > len(c) {
		lo = r.ctrlFirst(l)
	}
	hi := lo
	for hi < len(c) && c[hi].addr() < a+Addr(n) {
		hi++
	}
	if hi == lo { // note the gap the range lies in
		r.gapLo, r.gapHi = r.base, r.base+Addr(r.size)
		if lo > 0 {
			r.gapLo = c[lo-1].addr() + LineSize
		}
		if lo < len(c) {
			r.gapHi = c[lo].addr()
		}
	}
	return c[lo:hi]
}

// ctrlFirst returns the position in r.ctrl of the first control line at
// or after line l and keeps it as ctrlIn's hint with the lines it answers
// for, [hintLo, hintHi]. It first tries where the line would be if the
// lines were evenly spread (GPU-TN's flags and sequence words lie at a
// fixed stride): one entry read, which the caller reads anyway, instead of
// a binary search's two or three dependent cache misses. Where the lines
// are spread evenly over the whole region (ctrlDev), that guess needs no
// index at all (at a thousand nodes the index entry is a miss of its
// own); elsewhere it guesses within the block of the block index
// (indexCtrl). Either way a binary search finishes where the guess was
// wrong, so the answer is the same.
func (r *region) ctrlFirst(l Addr) int {
	c := r.ctrl
	if r.ctrlIdx == nil || len(c) > 2*r.ctrlIdxBuilt+16 {
		r.indexCtrl()
	}
	off := uint64(l - r.base)
	var lo, hi, g int
	below := l // every line before position lo lies before below
	if len(c) == r.ctrlIdxN && r.ctrlDev <= maxCtrlDev {
		// Line j lies within ctrlDev positions of evenSpot(line j), so the
		// first line ≥ l lies in [g − dev, g + dev + 1], g = evenSpot(l).
		g = r.evenSpot(l)
		lo, hi = max(0, g-r.ctrlDev), min(len(c), g+r.ctrlDev+1)
	} else {
		b := int(off >> r.ctrlShift)
		lo, hi = int(r.ctrlIdx[b]), int(r.ctrlIdx[b+1])
		if hi == r.ctrlIdxN {
			// No indexed line after block b: the lines appended since the
			// index was built (MarkControl) may be.
			hi = len(c)
		}
		// Every line before position lo lies before the block's start;
		// the guess: the block's lines evenly spread over it.
		below = r.base + Addr(uint64(b)<<r.ctrlShift)
		g = lo + int((off-uint64(b)<<r.ctrlShift)*uint64(hi-lo)>>r.ctrlShift)
	}
	if lo < hi {
		g = min(max(g, lo), hi-1)
		switch {
		case c[g].addr() < l:
			below, lo = c[g].addr()+1, g+1
			if lo < hi && c[lo].addr() >= l { // the next line
				hi = lo
			}
		case g == lo:
			hi = lo
		case c[g-1].addr() < l: // the guess
			below, lo, hi = c[g-1].addr()+1, g, g
		default:
			hi = g - 1 // the first line ≥ l is at or before g−1
		}
	}
	for lo < hi { // the first line ≥ l (sort.Search, without its closure call per probe)
		if m := int(uint(lo+hi) >> 1); c[m].addr() < l {
			below, lo = c[m].addr()+1, m+1
		} else {
			hi = m
		}
	}
	r.ctrlHint, r.hintLo, r.hintHi = lo, below, r.base+Addr(r.size)
	if lo < len(c) {
		r.hintHi = c[lo].addr()
	}
	return lo
}

// maxCtrlDev is the largest ctrlDev for which ctrlFirst searches around
// evenSpot without the block index.
const maxCtrlDev = 4

// evenSpot returns where line l would be in r.ctrl if r's control lines
// were spread evenly over the region: ⌊(l − base) · len / size⌋.
func (r *region) evenSpot(l Addr) int {
	h, lo := bits.Mul64(uint64(l-r.base), uint64(len(r.ctrl)))
	q, _ := bits.Div64(h, lo, r.size)
	return int(q)
}

// indexCtrl builds r's block index of control lines: ctrlIdx[b] is the
// position in ctrl of the first line at or after the start of block b
// (blocks of 1 << ctrlShift bytes from r.base, at least 4 KiB and about
// one per control line, so the index is smaller than the lines).
func (r *region) indexCtrl() {
	shift := uint(12)
	for r.size>>shift > uint64(len(r.ctrl))+1 {
		shift++
	}
	nb := int(r.size>>shift) + 2 // the last partial block and an end marker
	idx := make([]int32, nb)
	j := 0
	for b := range nb {
		start := r.base + Addr(b)<<shift
		for j < len(r.ctrl) && r.ctrl[j].addr() < start {
			j++
		}
		idx[b] = int32(j)
	}
	r.ctrlIdx, r.ctrlShift, r.ctrlIdxN, r.ctrlIdxBuilt = idx, shift, len(r.ctrl), len(r.ctrl)
	// How far the lines lie from evenSpot (ctrlFirst), measured up to
	// just past maxCtrlDev.
	r.ctrlDev = 0
	for j := range r.ctrl {
		if d := j - r.evenSpot(r.ctrl[j].addr()); d > r.ctrlDev || -d > r.ctrlDev {
			r.ctrlDev = max(d, -d)
			if r.ctrlDev > maxCtrlDev {
				break
			}
		}
	}
}

type region struct {
	// The fields every access reads come first, in the struct's first two
	// cache lines (find, Bytes, PoolOf, and a payload-free range's
	// control lines): at a thousand nodes nearly every lookup of a region
	// is a cache miss, and spread over the struct they were four or five.
	base Addr
	size uint64
	data []byte // nil when payload-free or not yet touched
	// [gapLo, gapHi) holds no control line (ctrlIn's last empty answer;
	// empty when unknown, reset when a line is marked).
	gapLo, gapHi Addr
	// ctrlIn's last answer (ctrlHint) holds for the lines in [hintLo,
	// hintHi] (ctrlFirst); the range is empty when unknown.
	hintLo, hintHi Addr
	pool           Pool
	lazy           bool // data is allocated on first access
	sparse         bool // backed by pages (below)
	// mapped: data is a mapping outside the Go heap (mapMin), whose pages
	// Consume may give back. [scratchLo, scratchHi) is the range marked
	// Scratch, as offsets (empty when equal): not populated ahead, and
	// given back page by page as it is consumed.
	mapped bool
	// ctrl holds the real bytes of control lines (flags, sequence words) of
	// a payload-free allocation, by line address.
	// Sorted by address: a read or write finds the control lines of its
	// range by binary search (a payload-free buffer can hold thousands).
	ctrl      []ctrlLine
	ctrlBytes [][LineSize]byte // the bytes of the lines with two non-zero words or more (ctrlLine)
	ctrlHint  int              // ctrlIn's last answer: the first control line at or after the range
	ctrlIdx   []int32          // block index of ctrl (indexCtrl); nil when stale
	ctrlShift uint             // log2 of the index's block size
	// ctrlIdxN is len(ctrl) when the index was built. Lines appended
	// after every indexed one since (a remote-task buffer's commands land
	// back to back) keep the index valid: a search whose block has no
	// indexed line after it runs on to the end. It is rebuilt once the
	// lines have doubled, not at every append.
	ctrlIdxN int
	// ctrlIdxBuilt is len(ctrl) when the index was built; lines inserted
	// among the indexed ones since count in ctrlIdxN (shiftIndex).
	ctrlIdxBuilt int
	// ctrlDev bounds how far from evenSpot the indexed lines lie (at
	// most maxCtrlDev + 1: further is not measured).
	ctrlDev int
	// snaps are the lazy snapshots of data (snapshot.go), which every
	// access overlapping them materialises first; snapCount counts them
	// per block.
	snaps     []*Snapshot
	snapCount []int32
	// watched holds the watched lines of this allocation sorted by
	// address, so a write finds the watchers of its range by binary search
	// instead of one map lookup per line (writes to unwatched allocations
	// skip the search).
	watched watchList
	// pages back a sparse region (a large AllocData allocation of a
	// payload-free memory: CQs, queues, rings sized for every peer) one
	// page at a time, each on its first access, until an access spans two
	// pages or is snapshotted: then the region is made dense (back). So a
	// queue sized for a thousand peers costs only the slots used. The
	// table has two levels, chunks of 1<<chunkShift pages made on first
	// use: a CQ sized for a QP to each of 4,095 peers spans 2^16 pages,
	// and a flat table of 1.5 MB for each of 8,192 such CQs was 12 GB of
	// address space (GPI at 4,096 ranks) for a few pages used.
	pages                []*pageChunk
	idx                  int // index in Memory.regions
	name                 string
	scratchLo, scratchHi int
	// scratchSlot is the size of the scratch range's slots (ScratchSlots;
	// 0: none). slotDead marks the slots consumed, one bit each, and
	// pageDead counts the dead bytes of each page of the range that slots
	// share, so that such a page goes back once its last slot is consumed;
	// both are made on the first Consume.
	scratchSlot int
	slotDead    []uint64
	pageDead    []uint16
	// pendDead marks the dead pages of the range not given back yet, and
	// pendN counts them (pend).
	pendDead []uint64
	pendN    int
	// slotBufs hold the bytes of the scratch range's live slots while the
	// range is slotted (slots.go), nil for a slot not reached yet or
	// consumed; slotFree are consumed slots' buffers for the next ones;
	// flat is set once an access spanned slots and the range went back
	// to the data's pages.
	slotBufs [][]byte
	// slotW is, per live slot, where the bytes its buffer holds for it
	// end: a recycled buffer's bytes after it are an earlier slot's, which
	// read as zeros (slotBytes clears them when reached).
	slotW    []int32
	slotFree [][]byte
	// slotChunk is what is left of the mapping slot buffers are cut from.
	slotChunk []byte
	flat      bool
	maps      *mappings // the memory's, for mapped slot buffers
}

// Access is one range an agent streams through: read, or written (a host
// computation's operands, hw/cpu's ComputeOn).
type Access struct {
	Addr  Addr
	Len   uint64
	Write bool
}

// Memory is one node's memory. The zero value is not usable; call New.
type Memory struct {
	// The fields every access reads come first, in one cache line: at a
	// thousand nodes each access's first touch of its node's Memory is a
	// cache miss, and last sat behind the 512-byte page cache.
	last *region // region find returned last (accesses cluster, so it is tried first); nil after an Alloc moved the regions
	prev *region // the one last was before it (search tries it first); nil with last
	// onTouch are called with every written range (Touch): a host CPU's
	// caches drop their copies of lines another agent wrote.
	onTouch     []func(a Addr, n int)
	nwatched    int      // watched lines in all
	checker     *Checker // visibility-hazard checker (hazard.go), nil when off
	functional  bool
	name        string
	next        Addr
	regions     []region                  // sorted by base
	bases       []Addr                    // regions[i].base: search probes this dense array, not the large region structs
	watches     map[Addr]*sim.Signal      // watched lines outside every allocation
	sigFree     sim.FreeList[*sim.Signal] // signals of forgotten WatchOnce watches, for reuse
	allocated   uint64
	payloadFree uint64
	consumed    uint64 // bytes Consume gave back
	snapFree    sim.FreeList[*Snapshot]
	maps        *mappings // backing mapped outside the Go heap (mapped.go)
	// byPage caches, by 4 KiB page number modulo its length, the index
	// (+1) of the region search last found there: the accesses that miss
	// last (a host templating one slot of each of a thousand QP rings in
	// turn, the stores landing there) mostly find their region in one load.
	byPage [128]int32
	// pools are the allocations PoolOf found last, newest first, as
	// address ranges (an allocation never moves, changes pool or goes):
	// a NIC asks the pool of each DMA's address, and through find its
	// answers pushed out last and prev, the regions the reads and writes
	// around it use.
	pools [2]poolSpan
	// ctrlGen counts the writes that changed a payload-free allocation's
	// control lines (and the layout changes: allocations, Release): the
	// bytes a ReadCache holds stand while it is unchanged.
	ctrlGen uint64
}

// poolSpan is one allocation's addresses [lo, hi) and pool.
type poolSpan struct {
	lo, hi Addr
	pool   Pool
}

// OnTouch registers fn to be called with every range written through
// Write, Store64 or Touch (a coherent write: DMA, GPU stores, watched
// words), before the range's watchers wake. Writes through the slice Bytes
// returns, without Touch, are not reported.
func (m *Memory) OnTouch(fn func(a Addr, n int)) { m.onTouch = append(m.onTouch, fn) }

// New returns an empty memory. When functional is false, allocations carry
// no bytes: reads return zeros and writes are dropped, but every address and
// size is still checked.
func New(name string, functional bool) *Memory {
	m := &Memory{name: name, functional: functional, next: 1 << 20, maps: new(mappings)}
	// Mapped backing that Release did not return goes back when the
	// memory is unreachable.
	runtime.AddCleanup(m, (*mappings).release, m.maps)
	return m
}

// Release returns the backing of the memory's large allocations (mapped
// outside the Go heap) to the system: a simulation's node memories, when
// it has ended. Every allocation reads as payload-free afterwards; a
// slice Bytes returned earlier must not be used.
func (m *Memory) Release() {
	m.ctrlGen++
	for i := range m.regions {
		r := &m.regions[i]
		switch {
		case r.data != nil && r.size >= mapMin:
			r.data, r.lazy, r.mapped = nil, false, false
			r.slotBufs, r.slotW, r.slotFree, r.slotChunk = nil, nil, nil, nil
		case r.slotted(): // a heap allocation keeps its bytes: its slots' move in before their buffers go
			r.flatten()
		}
	}
	m.maps.release()
}

// Scratch marks [a, a+n) of one allocation as scratch space that a
// workload writes, reads once and then declares dead with Consume (a
// ring allreduce's receive slots): its pages are not faulted in ahead of
// use with the rest of the allocation, and Consume gives them back. A
// range already backed keeps its pages until consumed. One range per
// allocation; a later call replaces it.
func (m *Memory) Scratch(a Addr, n int) { m.ScratchSlots(a, n, 0) }

// ScratchSlots is Scratch of a range made of slots of slot bytes each,
// back to back from a: a slot is written once, and its reader reads it
// whole (a payload, then its trailing sequence word or padding, in any
// order) before it consumes its data with one Consume starting at the
// slot's first byte. Such a Consume declares the whole slot dead, so a
// page that slots share goes back once every slot on it has been
// consumed, not only the pages inside one slot (a GPU-TN receive slot at
// 64 nodes is 8 KiB and a sequence word: two pages and a bit, of which
// plain Consume gave back one). While every access through Bytes stays
// inside one slot, the live slots' bytes live in buffers of their own
// that consumed slots hand on to the next ones, instead of in the
// allocation's pages (slots.go). slot ≤ 0 is Scratch.
func (m *Memory) ScratchSlots(a Addr, n, slot int) {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	off := int(a - r.base)
	r.scratchLo, r.scratchHi = off, off+n
	if r.slotted() { // the old range's live slots keep their bytes
		r.flatten()
	}
	r.scratchSlot, r.slotDead, r.pageDead, r.pendDead, r.pendN = max(0, slot), nil, nil, nil, 0
	// Slot buffers only for a range not backed yet: the bytes of one
	// already backed stay in its pages.
	r.flat, r.maps = r.data != nil, m.maps
}

// Consume declares the bytes of [a, a+n) dead: the caller has read them
// for the last time until it writes them again. Where the range lies in
// the allocation's Scratch range of a functional memory mapped outside
// the Go heap, the pages wholly inside it go back to the system (they
// read as zeros and fault in again when written); elsewhere, and for the
// bytes of partial pages, nothing changes (but see ScratchSlots: a slot's
// buffer goes to the next slot). So a functional run's memory holds only
// the receive slots in flight, not every step's. Times and results do not depend on it: the model never
// reads a consumed byte.
func (m *Memory) Consume(a Addr, n int) {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	if r.data == nil || n <= 0 || !r.mapped && !r.slotted() { // (a slot's buffer goes round wherever the data is)
		return
	}
	lo, hi := max(int(a-r.base), r.scratchLo), min(int(a-r.base)+n, r.scratchHi)
	if hi <= lo {
		return
	}
	if r.scratchSlot > 0 && lo == int(a-r.base) && (lo-r.scratchLo)%r.scratchSlot == 0 {
		if r.slotted() {
			m.consumeSlotBuf(r, (lo-r.scratchLo)/r.scratchSlot)
			return
		}
		m.consumeSlot(r, (lo-r.scratchLo)/r.scratchSlot)
		return
	}
	if r.slotted() { // not a slot: its pages hold no slot's bytes
		return
	}
	if len(r.snaps) > 0 { // a snapshot of the range takes its bytes first
		r.materialize(lo, hi)
	}
	// The mapping starts on a page boundary, so offsets are page offsets.
	lo = (lo + pageSize - 1) &^ (pageSize - 1)
	hi &^= pageSize - 1
	if hi > lo {
		discard(r.data[lo:hi])
		m.consumed += uint64(hi - lo)
	}
}

// consumeSlot gives back the pages of slot k of r's scratch range that
// no live slot shares: those wholly inside it, and a page at either end
// once the other slots on it are dead too. A slot consumed again changes
// nothing.
func (m *Memory) consumeSlot(r *region, k int) {
	if r.slotDead == nil {
		slots := (r.scratchHi - r.scratchLo + r.scratchSlot - 1) / r.scratchSlot
		r.slotDead = make([]uint64, (slots+63)/64)
	}
	if r.pageDead == nil { // (slots consumed from buffers, before flatten, leave none)
		first := r.scratchLo >> pageShift
		r.pageDead = make([]uint16, (r.scratchHi-1)>>pageShift-first+1)
	}
	if r.slotDead[k/64]&(1<<(k%64)) != 0 {
		return
	}
	r.slotDead[k/64] |= 1 << (k % 64)
	lo := r.scratchLo + k*r.scratchSlot
	hi := min(lo+r.scratchSlot, r.scratchHi)
	if len(r.snaps) > 0 { // a snapshot of the slot takes its bytes first
		r.materialize(lo, hi)
	}
	inLo := (lo + pageSize - 1) &^ (pageSize - 1) // the pages wholly inside
	inHi := hi &^ (pageSize - 1)
	if inHi <= inLo { // the slot lies within one page, or two partial ones
		inLo, inHi = lo, lo
	}
	// A page the slot shares with others: its dead bytes, and the page
	// goes with them once all are dead and it lies wholly in the range
	// (the bytes before or after the range are not scratch).
	share := func(plo, phi int) {
		p := plo >> pageShift
		i := p - r.scratchLo>>pageShift
		r.pageDead[i] += uint16(phi - plo)
		start := p << pageShift
		if int(r.pageDead[i]) == pageSize && start >= r.scratchLo && start+pageSize <= r.scratchHi {
			m.pend(r, start, start+pageSize)
		}
	}
	if inHi > inLo {
		if lo < inLo {
			share(lo, inLo)
		}
		m.pend(r, inLo, inHi)
		if inHi < hi {
			share(inHi, hi)
		}
		return
	}
	for plo := lo; plo < hi; { // no whole page: one or two shared ones
		phi := min(hi, (plo+pageSize)&^(pageSize-1))
		share(plo, phi)
		plo = phi
	}
}

// pendPages is how many dead pages of a slotted scratch range wait to be
// given back together: slots complete out of order (a GPU-TN step's 16
// work-groups), and one madvise per slot, 129,000 of them for a 64-node
// GPU-TN point, cost more than the pages; in runs they are a few calls.
const pendPages = 32

// pend marks the pages [lo, hi) of r's data (page offsets, inside the
// scratch range) dead, and gives the dead pages back once pendPages
// have gathered. Nothing writes a dead page again (a slot is written
// once), so giving it back late changes nothing but the memory held.
func (m *Memory) pend(r *region, lo, hi int) {
	first := r.scratchLo >> pageShift
	if r.pendDead == nil {
		r.pendDead = make([]uint64, (len(r.pageDead)+63)/64)
	}
	for p := lo >> pageShift; p < hi>>pageShift; p++ {
		i := p - first
		r.pendDead[i/64] |= 1 << (i % 64)
	}
	if r.pendN += (hi - lo) >> pageShift; r.pendN >= pendPages {
		m.flush(r)
	}
}

// flush gives r's dead pages back, one madvise per run of them.
func (m *Memory) flush(r *region) {
	first := r.scratchLo >> pageShift
	run := -1 // first page of the run being gathered, or -1
	n := len(r.pendDead) * 64
	for i := 0; i <= n; i++ {
		dead := i < n && r.pendDead[i/64]&(1<<(i%64)) != 0
		switch {
		case dead && run < 0:
			run = i
		case !dead && run >= 0:
			lo, hi := (first+run)<<pageShift, (first+i)<<pageShift
			discard(r.data[lo:hi])
			m.consumed += uint64(hi - lo)
			run = -1
		}
	}
	clear(r.pendDead)
	r.pendN = 0
}

// Consumed returns the bytes Consume has given back to the system, giving
// back first the dead slot pages still gathering (pend).
func (m *Memory) Consumed() uint64 {
	for i := range m.regions {
		if r := &m.regions[i]; r.pendN > 0 && r.data != nil {
			m.flush(r)
		}
	}
	return m.consumed
}

// Functional reports whether the memory holds real bytes.
func (m *Memory) Functional() bool { return m.functional }

// Alloc reserves size bytes in pool, aligned to a cache line, and returns
// the base address. Control words (flags, counters) should be allocated
// with ForceData so polling still works in payload-free runs.
func (m *Memory) Alloc(pool Pool, size uint64, name string) Addr {
	return m.alloc(pool, size, name, m.functional, false)
}

// AllocData is Alloc with real bytes even in a payload-free memory, for
// control words that must carry values.
func (m *Memory) AllocData(pool Pool, size uint64, name string) Addr {
	return m.alloc(pool, size, name, true, true)
}

// alloc makes the allocation: data with bytes, explicit an AllocData
// (runtime state: queues, completion queues, rings, control words), which
// from sparseMin on is backed page by page in a functional memory too, as
// a payload-free one backs it: a completion queue sized for a QP to every
// peer (GPUrdma's, 8 MiB per ring and node at 64 nodes) costs the pages its
// entries land in, not n² bytes. A workload's own buffers (Alloc) stay
// dense in a functional memory: they are streamed whole.
func (m *Memory) alloc(pool Pool, size uint64, name string, data, explicit bool) Addr {
	// Whole lines, so caches can copy any line of an allocation.
	size = (max(size, 1) + LineSize - 1) &^ (LineSize - 1)
	base := m.next
	r := region{base: base, size: size, pool: pool, name: name, watched: watchList{base: base}, idx: len(m.regions)}
	if data {
		r.lazy = true // allocated on first access: untouched buffers cost nothing
		r.sparse = (explicit || !m.functional) && size >= sparseMin
	} else {
		m.payloadFree += size
	}
	m.regions = append(m.regions, r)
	m.bases = append(m.bases, base)
	m.last, m.prev = nil, nil
	m.ctrlGen++
	m.allocated += size
	m.next = base + Addr(size) + LineSize // keep a guard line between allocations
	return base
}

// ReserveData takes the addresses AllocData(pool, size, name) would
// return now, and counts them allocated, without making the allocation:
// AllocDataAt makes it later at the same address (state created on first
// use, a QP nobody posts to, with every later allocation where it would
// have been). Nothing may touch the range before then.
func (m *Memory) ReserveData(size uint64) Addr {
	size = (max(size, 1) + LineSize - 1) &^ (LineSize - 1)
	base := m.next
	m.allocated += size
	m.next = base + Addr(size) + LineSize
	return base
}

// Gap returns the distance from a reservation (ReserveData) or an
// allocation of size bytes to the next one: its whole lines and the guard
// line after them.
func Gap(size uint64) uint64 { return (max(size, 1)+LineSize-1)&^(LineSize-1) + LineSize }

// ReserveSpan takes at once the addresses of count consecutive
// ReserveData calls whose reservations, each followed by its guard line,
// span span bytes (the sum of their Gaps), and counts them allocated, as
// the calls would: a runtime that reserves thousands of rings places each
// by arithmetic from the returned base instead of keeping every address.
func (m *Memory) ReserveSpan(span uint64, count int) Addr {
	if count < 1 || span%LineSize != 0 || span < 2*LineSize*uint64(count) {
		panic(fmt.Sprintf("mem %s: a span of %d B for %d reservations: not whole reservations with guard lines", m.name, span, count))
	}
	base := m.next
	m.allocated += span - LineSize*uint64(count)
	m.next = base + Addr(span)
	return base
}

// AllocDataAt makes the allocation ReserveData reserved at base, as
// AllocData would have made it then.
func (m *Memory) AllocDataAt(base Addr, pool Pool, size uint64, name string) {
	size = (max(size, 1) + LineSize - 1) &^ (LineSize - 1)
	i, _ := slices.BinarySearch(m.bases, base)
	if i < len(m.bases) && m.bases[i] < base+Addr(size)+LineSize || i > 0 && m.regions[i-1].base+Addr(m.regions[i-1].size) > base {
		panic(fmt.Sprintf("mem %s: allocation at %#x overlaps another: not a reservation", m.name, uint64(base)))
	}
	r := region{base: base, size: size, pool: pool, name: name, watched: watchList{base: base}, idx: i, lazy: true,
		sparse: size >= sparseMin} // as AllocData makes it
	m.regions = slices.Insert(m.regions, i, r)
	m.bases = slices.Insert(m.bases, i, base)
	for k := i + 1; k < len(m.regions); k++ {
		rk := &m.regions[k]
		rk.idx = k
		for _, s := range rk.snaps {
			s.ri = k
		}
	}
	m.byPage = [len(m.byPage)]int32{}
	m.last, m.prev = nil, nil
	m.ctrlGen++
}

// Allocated returns the bytes allocated so far.
func (m *Memory) Allocated() uint64 { return m.allocated }

func (m *Memory) find(a Addr, n int) (*region, error) {
	// Most accesses fall in the region of the previous one: a check small
	// enough to inline (regions do not overlap, so a range inside one is
	// found in no other).
	if r := m.last; r != nil {
		if off := uint64(a - r.base); off < r.size && off+uint64(n) <= r.size {
			return r, nil
		}
	}
	return m.search(a, n)
}

// search finds the region holding [a, a+n): in the page cache, else by
// binary search.
func (m *Memory) search(a Addr, n int) (*region, error) {
	// The region before the last: accesses often alternate between two
	// (a CP polling a queue and reading its entry's data, a work-group
	// storing into a ring and polling its flag), and its struct is hot.
	if r := m.prev; r != nil {
		if off := uint64(a - r.base); off < r.size && off+uint64(n) <= r.size {
			m.last, m.prev = r, m.last
			return r, nil
		}
	}
	i, err := m.searchIndex(a, n)
	if err != nil {
		return nil, err
	}
	r := &m.regions[i]
	m.last, m.prev = r, m.last
	return r, nil
}

// searchIndex returns the index of the region holding [a, a+n): from the
// page cache, else by binary search (noted in the page cache).
func (m *Memory) searchIndex(a Addr, n int) (int, error) {
	pc := &m.byPage[uint64(a)>>pageShift%uint64(len(m.byPage))]
	if i := int(*pc) - 1; i >= 0 {
		r := &m.regions[i]
		if off := uint64(a - r.base); off < r.size && off+uint64(n) <= r.size {
			return i, nil
		}
	}
	// A hand-written binary search over the bases: with thousands of
	// regions (a QP ring and a CQ per peer) each probe of the region
	// structs was a cache miss of its own.
	lo, hi := 0, len(m.bases)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if m.bases[h] > a {
			hi = h
		} else {
			lo = h + 1
		}
	}
	i := lo - 1
	if i < 0 {
		return 0, fmt.Errorf("%s: address %#x is not allocated", m.name, uint64(a))
	}
	r := &m.regions[i]
	if uint64(a-r.base)+uint64(n) > r.size {
		return 0, fmt.Errorf("%s: access [%#x, +%d) overruns allocation %q [%#x, +%d)", m.name, uint64(a), n, r.name, uint64(r.base), r.size)
	}
	*pc = int32(i + 1)
	return i, nil
}

// RegionName returns the name of the allocation holding a ("" when a is
// not allocated): what a diagnostic uses to say which structure an
// address belongs to.
func (m *Memory) RegionName(a Addr) string {
	r, err := m.find(a, 0)
	if err != nil {
		return ""
	}
	return r.name
}

// PoolOf returns the pool holding a.
func (m *Memory) PoolOf(a Addr) Pool {
	for i := range m.pools {
		if s := &m.pools[i]; a >= s.lo && a < s.hi {
			return s.pool
		}
	}
	r := m.last // (find's, not moved: see pools)
	if r == nil || uint64(a-r.base) >= r.size {
		i, err := m.searchIndex(a, 0)
		if err != nil {
			panic(err)
		}
		r = &m.regions[i]
	}
	m.pools[1], m.pools[0] = m.pools[0], poolSpan{lo: r.base, hi: r.base + Addr(r.size), pool: r.pool}
	return r.pool
}

// Bytes returns the live backing bytes of [a, a+n), or nil in a payload-free
// allocation. Writing through the slice bypasses watches; use Write for
// words that others poll. Out-of-range access is a simulator bug and panics.
func (m *Memory) Bytes(a Addr, n int) []byte {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	return r.bytes(m, a, n)
}

// BytesToWrite is Bytes for a caller that writes every byte of the range
// before it reads any of them (a DMA landing, a workload's input fill):
// where the range lies in a receive slot whose buffer held an earlier
// slot's bytes (ScratchSlots), or in a backing recycled from an arena
// that this access maps in, those it overwrites are not cleared first.
func (m *Memory) BytesToWrite(a Addr, n int) []byte {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	if r.slotted() {
		off := int(a - r.base)
		if k := r.slotOf(off, n); k >= 0 {
			if len(r.snaps) > 0 && n > 0 {
				r.materialize(off, off+n)
			}
			return r.slotBytesToWrite(k, off, n)
		}
	}
	if r.data == nil && r.lazy && !r.sparse && r.pages == nil {
		// The first access backs the region: a recycled backing's bytes
		// in the range are not cleared first (a ring's input fill
		// writes the whole vector into a node memory of the point
		// before).
		off := int(a - r.base)
		r.backFor(m, off, off+n)
	}
	return r.bytes(m, a, n)
}

// bytes is Bytes of [a, a+n) once its region r is found.
func (r *region) bytes(m *Memory, a Addr, n int) []byte {
	if r.data == nil {
		if !r.lazy {
			return nil
		}
		if r.sparse {
			if b := r.page(int(a-r.base), n); b != nil {
				return b
			}
		}
		r.back(m)
	}
	off := int(a - r.base)
	if r.slotted() {
		switch k := r.slotOf(off, n); {
		case k >= 0:
			if len(r.snaps) > 0 && n > 0 {
				r.materialize(off, off+n)
			}
			return r.slotBytes(k, off, n)
		case k == -2: // the caller needs the range contiguous
			r.flatten()
		}
	}
	if len(r.snaps) > 0 && n > 0 { // the caller may write: snapshots of the range take their bytes now
		r.materialize(off, off+n)
	}
	return r.data[off : off+n : off+n]
}

// back gives a lazily allocated region its bytes and reports whether it
// has any (false: payload-free).
func (r *region) back(m *Memory) bool { return r.backFor(m, 0, 0) }

// backFor is back for an access that writes every byte of [wLo, wHi)
// (offsets in the region) before it reads any (BytesToWrite): a recycled
// backing's bytes there are left as they are instead of cleared.
func (r *region) backFor(m *Memory, wLo, wHi int) bool {
	if !r.lazy {
		return false
	}
	populated := 0 // the first bytes already faulted in (a recycled backing)
	if r.size >= mapMin {
		r.data, populated = m.maps.get(int(r.size), r.scratchLo, r.scratchHi, wLo, wHi)
		r.mapped = r.data != nil
	}
	// 4 KiB pages, not transparent huge pages: with the kernel's default
	// defrag=madvise, huge-page faults of madvised memory stall in
	// compaction once memory is fragmented, and the 64-node functional
	// runs took 3.0-3.6 s instead of 1.2-2.0 s (docs/speed.md). The pages
	// are faulted in on the other core.
	if r.data == nil {
		r.data = make([]byte, r.size)
	}
	if r.pages != nil { // a sparse region made dense: its pages' bytes move in
		for ci, c := range r.pages {
			if c == nil {
				continue
			}
			for j, p := range c {
				if p != nil { // a chunk's table runs past the region's last page
					copy(r.data[(ci<<chunkShift+j)<<pageShift:], p[:]) // the last page may run past the region's end
				}
			}
		}
		r.pages, r.sparse = nil, false
		return true
	}
	r.sparse = false
	if r.scratchHi > r.scratchLo { // scratch pages fault in when first written
		populate(r.data[min(populated, r.scratchLo):r.scratchLo])
		populate(r.data[r.scratchHi:])
		return true
	}
	populate(r.data[min(populated, len(r.data)):])
	return true
}

// sparseMin is the size from which an AllocData allocation (or any data
// allocation of a payload-free memory) is backed page by page (region.pages); pageShift is log2 of the
// page size.
const (
	sparseMin  = 64 << 10
	pageShift  = 12
	pageSize   = 1 << pageShift
	chunkShift = 7 // pages per chunk of region.pages: 512 KiB
)

// pageChunk is the second level of a sparse region's page table: a
// pointer per page, nil until the page is used. Pointers, not slices: a
// table of 512 slice headers was 12 KiB for each queue that used one page
// of it (13 of the 17 MB of sparse backing in a 64-node GNN_GPURDMA
// allreduce, every CQ and QP ring of 64 peers), and a page's entry is a
// cache miss apiece at scale; 128 pointers are 1 KiB, eight to a line.
type pageChunk [1 << chunkShift]*[pageSize]byte

// page returns the bytes [off, off+n) of sparse region r from its page,
// backing the page on first use, or nil when the range spans two pages or
// the region has snapshots (the caller makes the region dense).
func (r *region) page(off, n int) []byte {
	if n == 0 {
		return []byte{} // non-nil: the range has bytes
	}
	p := off >> pageShift
	if (off+n-1)>>pageShift != p || len(r.snaps) > 0 {
		return nil
	}
	if r.pages == nil {
		n := (r.size + 1<<pageShift - 1) >> pageShift
		r.pages = make([]*pageChunk, (n+1<<chunkShift-1)>>chunkShift)
	}
	c := r.pages[p>>chunkShift]
	if c == nil {
		c = new(pageChunk)
		r.pages[p>>chunkShift] = c
	}
	b := c[p&(1<<chunkShift-1)]
	if b == nil {
		// A whole page even at the region's end: accesses stay inside the
		// region (find), so the bytes past it are never read.
		b = new([pageSize]byte)
		c[p&(1<<chunkShift-1)] = b
	}
	o := off - p<<pageShift
	return b[o : o+n : o+n]
}

// Read copies [a, a+len(dst)) into dst. Payload-free bytes read as zeros,
// except in control lines.
func (m *Memory) Read(a Addr, dst []byte) {
	// One region lookup for the bytes and the control lines: a CP poll
	// or a payload-free load reads a line per event.
	r, err := m.find(a, len(dst))
	if err != nil {
		panic(err)
	}
	if r.slotted() && r.slotOf(int(a-r.base), len(dst)) != -1 {
		r.readPieces(int(a-r.base), dst)
		return
	}
	if src := r.bytes(m, a, len(dst)); src != nil {
		copy(dst, src)
		return
	}
	clear(dst)
	r.readLines(r.ctrlIn(a, len(dst)), a, dst)
}

// ReadCache holds the answer of one payload-free read (ReadCached).
type ReadCache struct {
	m   *Memory // nil: empty
	a   Addr
	n   int
	gen uint64 // m.ctrlGen when filled
	b   [64]byte
}

// ReadCached is Read(a, dst), len(dst) ≤ 64, for a reader that reads one
// range again and again (every work-group of a kernel its kernarg
// segment): where the range lies in an allocation without bytes (only its
// control lines keep any, and only Write and WriteRuns change those) c
// keeps the answer, and gives it again while m's control lines are
// unwritten since (ctrlGen). The bytes are those Read returns; what it
// saves is the region and control-line lookups, a cache miss each on a
// large machine.
func (m *Memory) ReadCached(c *ReadCache, a Addr, dst []byte) {
	if c.m == m && c.a == a && c.n == len(dst) && c.gen == m.ctrlGen {
		copy(dst, c.b[:len(dst)])
		return
	}
	r, err := m.find(a, len(dst))
	if err != nil {
		panic(err)
	}
	if r.data != nil || r.lazy || len(dst) > len(c.b) {
		c.m = nil
		m.Read(a, dst)
		return
	}
	clear(dst) // as Read reads a payload-free range
	r.readLines(r.ctrlIn(a, len(dst)), a, dst)
	c.m, c.a, c.n, c.gen = m, a, len(dst), m.ctrlGen
	copy(c.b[:], dst)
}

// ReadControlInto copies the bytes of the control lines of a payload-free
// range [a, a+len(dst)) into dst and returns the span [lo, hi) of dst it
// wrote; it writes nothing else (the caller's zeros stay), and nothing at
// all (lo == hi) when the range holds no control lines. The range must be
// payload-free (Bytes returned nil).
func (m *Memory) ReadControlInto(a Addr, dst []byte) (lo, hi int) {
	r, err := m.find(a, len(dst))
	if err != nil {
		panic(err)
	}
	lines := r.ctrlIn(a, len(dst))
	if len(lines) == 0 {
		return 0, 0
	}
	r.readLines(lines, a, dst)
	first, last := lines[0].addr(), lines[len(lines)-1].addr()
	return int(max(first, a) - a), int(min(last+LineSize, a+Addr(len(dst))) - a)
}

// ReadControlRuns returns the bytes of the control lines of a
// payload-free range [a, a+n) (ReadControlInto without the zeros between
// them, allocating only those bytes): the lines, each
// clipped to the range, adjacent ones joined into one run, with each
// run's offset from the span's start (the first line's, at in the range)
// and length; span is the bytes from at to the last line's end. Writing
// them with WriteRuns(dst+at, span, offs, lens, data) is Write(dst+at, d)
// of the dense bytes d of the span: a payload-free copy of a buffer with a flag every
// few KiB holds the flags, not the buffer between them. nil data when the
// range holds no control lines. The range must be payload-free.
func (m *Memory) ReadControlRuns(a Addr, n int) (data []byte, at, span int, offs, lens []uint64) {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	lines := r.ctrlIn(a, n)
	if len(lines) == 0 {
		return nil, 0, 0, nil, nil
	}
	first, last := lines[0].addr(), lines[len(lines)-1].addr()
	lo, hi := max(first, a), min(last+LineSize, a+Addr(n))
	data = make([]byte, 0, len(lines)*LineSize)
	for i := range lines {
		c := &lines[i]
		s, e := max(c.addr(), lo), min(c.addr()+LineSize, hi)
		if k := len(offs) - 1; k >= 0 && uint64(s-lo) == offs[k]+lens[k] {
			lens[k] += uint64(e - s)
		} else {
			offs, lens = append(offs, uint64(s-lo)), append(lens, uint64(e-s))
		}
		data = data[:len(data)+int(e-s)]
		c.read(r.ctrlBytes, data[len(data)-int(e-s):], int(s-c.addr()))
	}
	return data, int(lo - a), int(hi - lo), offs, lens
}

// readLines copies the bytes of control lines into dst, which holds
// [a, a+len(dst)).
func (r *region) readLines(lines []ctrlLine, a Addr, dst []byte) {
	for i := range lines {
		c := &lines[i]
		l := c.addr()
		lo, hi := max(l, a), min(l+LineSize, a+Addr(len(dst)))
		c.read(r.ctrlBytes, dst[lo-a:hi-a], int(lo-l))
	}
}

// MarkControl keeps real bytes for the lines of [a, a+n) even in a
// payload-free allocation, so flags and sequence words that travel inside
// payload-free buffers still carry their values. In a functional memory it
// does nothing.
func (m *Memory) MarkControl(a Addr, n int) {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	if r.data != nil || r.lazy {
		return
	}
	r.gapLo, r.gapHi = 0, 0
	r.hintLo, r.hintHi = 1, 0 // no hint: the positions move
	for l := Line(a); l < a+Addr(n); l += LineSize {
		if k := len(r.ctrl); k == 0 || r.ctrl[k-1].addr() < l {
			// After every line (a buffer's flags marked in address
			// order: GPU-TN's 32,736 per node at a thousand nodes),
			// without a binary search: marking the 1,024-node ring's
			// flags took about 3 CPU-seconds with it, 1.2 without.
			r.ctrl = append(r.ctrl, ctrlLine{key: l})
			continue
		}
		i := sort.Search(len(r.ctrl), func(i int) bool { return r.ctrl[i].addr() >= l })
		switch {
		case i == len(r.ctrl): // after every line: the index stays (ctrlIdxN)
			r.ctrl = append(r.ctrl, ctrlLine{key: l})
		case r.ctrl[i].addr() != l:
			r.ctrl = slices.Insert(r.ctrl, i, ctrlLine{key: l})
			r.shiftIndex(i, l)
		}
	}
}

// shiftIndex keeps the block index right after line l was inserted at
// position i of ctrl, before the last line, instead of building it again
// at the next lookup (a work-group queue marks its lines as they are first
// used, among its other lines, and the rebuild was a scan of them all at
// each). The positions from i on moved up by one: those of the blocks
// after l's (each block's first line at or after its start lies after l)
// and the count of indexed lines, unless l lies among the lines appended
// after every indexed one, which no entry names. How far lines lie from
// their even spot is no longer known (ctrlFirst then guesses within the
// block), until the index is built again once the lines have doubled.
func (r *region) shiftIndex(i int, l Addr) {
	if r.ctrlIdx == nil || i >= r.ctrlIdxN {
		return
	}
	for b := int(uint64(l-r.base)>>r.ctrlShift) + 1; b < len(r.ctrlIdx); b++ {
		r.ctrlIdx[b]++
	}
	r.ctrlIdxN++
	r.ctrlDev = maxCtrlDev + 1
}

// HasData reports whether reading [a, a+n) can return anything but zeros:
// the range is functional or holds control lines.
func (m *Memory) HasData(a Addr, n int) bool {
	r, err := m.find(a, n)
	if err != nil {
		panic(err)
	}
	if r.data != nil || r.lazy {
		return true
	}
	return len(r.ctrlIn(a, n)) > 0
}

// Write copies src to [a, a+len(src)) and wakes the watchers of every line
// it touches. In a payload-free allocation only control lines keep bytes.
func (m *Memory) Write(a Addr, src []byte) {
	r, err := m.find(a, len(src))
	if err != nil {
		panic(err)
	}
	if r.slotted() && r.slotOf(int(a-r.base), len(src)) == -2 {
		r.writePieces(int(a-r.base), src)
	} else if dst := r.bytes(m, a, len(src)); dst != nil {
		copy(dst, src)
	} else if len(r.ctrl) > 0 {
		lines := r.ctrlIn(a, len(src))
		if len(lines) > 0 {
			m.ctrlGen++
		}
		for i := range lines {
			c := &lines[i] // in r.ctrl: the write stays
			l := c.addr()
			lo, hi := max(l, a), min(l+LineSize, a+Addr(len(src)))
			c.write(&r.ctrlBytes, src[lo-a:hi-a], int(lo-l))
		}
	}
	m.Touch(a, len(src))
}

// WriteAfterZeros is Write(a, b) of the n bytes b that are zeros up to at
// and src after (len(src) = n − at), without making b: a flow-model
// message of a payload-free buffer carries its trailing control words
// only (nic.Packet.DataAt). Bytes, control words and watchers end as
// Write leaves them.
func (m *Memory) WriteAfterZeros(a Addr, n, at int, src []byte) {
	// One run: src at offset at, to the end.
	offs, lens := [1]uint64{uint64(at)}, [1]uint64{uint64(len(src))}
	m.WriteRuns(a, n, offs[:], lens[:], src)
}

// WriteRuns is Write(a, b) of the n bytes b that are zeros but for runs:
// run i is src[k:k+lens[i]] (k the sum of the earlier lens) at offset
// offs[i] of b, runs in increasing order and not overlapping; a run past
// n is cut there. Without making b: a flow-model message of a payload-free
// buffer with control words throughout (MoE's per-entry headers) carries
// only those (nic's sparse payloads). Bytes, control words and watchers
// end as Write leaves them.
func (m *Memory) WriteRuns(a Addr, n int, offs, lens []uint64, src []byte) {
	if dst := m.Bytes(a, n); dst != nil {
		clear(dst)
		k := uint64(0)
		for i, o := range offs {
			if o < uint64(n) {
				copy(dst[o:min(o+lens[i], uint64(n))], src[k:k+lens[i]])
			}
			k += lens[i]
		}
	} else if r, _ := m.find(a, n); len(r.ctrl) > 0 {
		lines := r.ctrlIn(a, n)
		if len(lines) > 0 {
			m.ctrlGen++
		}
		i, k := 0, uint64(0) // the first run that may reach a line, and where its bytes start
		for li := range lines {
			c := &lines[li] // in r.ctrl: the write stays
			l := c.addr()
			lo, hi := max(l, a), min(l+LineSize, a+Addr(n))
			for i < len(offs) && a+Addr(offs[i]+lens[i]) <= lo {
				k += lens[i]
				i++
			}
			var buf [LineSize]byte // the dense bytes of [lo, hi)
			for j, kj := i, k; j < len(offs) && a+Addr(offs[j]) < hi; j++ {
				s, e := max(a+Addr(offs[j]), lo), min(a+Addr(offs[j]+lens[j]), hi)
				if s < e {
					copy(buf[s-lo:e-lo], src[kj+uint64(s-a)-offs[j]:])
				}
				kj += lens[j]
			}
			c.write(&r.ctrlBytes, buf[:hi-lo], int(lo-l))
		}
	}
	m.Touch(a, n)
}

// Touch wakes the watchers of the lines in [a, a+n) without changing bytes
// (for writes done through Bytes, and payload-free DMA).
func (m *Memory) Touch(a Addr, n int) {
	for _, fn := range m.onTouch {
		fn(a, n)
	}
	if m.nwatched == 0 || n <= 0 {
		return
	}
	if r, err := m.find(a, n); err == nil {
		m.nwatched -= r.watched.notify(Line(a), a+Addr(n), &m.sigFree)
		return
	}
	for l := Line(a); l < a+Addr(n); l += LineSize {
		if s := m.watches[l]; s != nil {
			s.Notify()
		}
	}
}

// Watch returns the signal notified whenever the line holding a is written.
// A line of an allocation is found in the allocation's watch list (a
// GDS or GPU-TN node at a thousand nodes watches thousands of flag lines:
// a map entry each besides the list would be a third of their memory);
// lines outside every allocation are kept in a map.
func (m *Memory) Watch(a Addr) *sim.Signal {
	l := Line(a)
	r, err := m.find(l, 0)
	if err != nil {
		s := m.watches[l]
		if s == nil {
			s = new(sim.Signal)
			if m.watches == nil {
				m.watches = map[Addr]*sim.Signal{}
			}
			m.watches[l] = s
			m.nwatched++
		}
		return s
	}
	if w := r.watched.find(l); w != nil {
		w.once = false    // the caller may keep the signal
		if w.sig == nil { // watched by a call only (WatchCall)
			w.sig = new(sim.Signal)
		}
		return w.sig
	}
	s := new(sim.Signal)
	r.watched.insert(watch{line: l, sig: s})
	m.nwatched++
	return s
}

// WatchOnce is Watch for a caller that waits on the signal once and asks
// again before it waits again (a poller that re-reads its word after each
// wake-up): the memory forgets the watch once a write has notified it,
// unless Watch handed the same signal out meanwhile. A GPU-TN work-group
// polls each of its 2(n−1) step flags in turn; watched for good, a node's
// flags at a thousand nodes and 16 slices held about 1.5 MB of watches.
func (m *Memory) WatchOnce(a Addr) *sim.Signal {
	l := Line(a)
	r, err := m.find(l, 0)
	if err != nil {
		return m.Watch(a)
	}
	if w := r.watched.find(l); w != nil {
		if w.sig == nil { // watched by a call only (WatchCall)
			s, ok := m.sigFree.Get()
			if !ok {
				s = new(sim.Signal)
			}
			w.sig, w.once = s, true
		}
		return w.sig
	}
	s, ok := m.sigFree.Get()
	if !ok {
		s = new(sim.Signal)
	}
	r.watched.insert(watch{line: l, sig: s, once: true})
	m.nwatched++
	return s
}

// WatchCall makes every write to the line holding a, an address in an
// allocation, call fn inside the writing event, after the line's
// waiters are notified: for an agent that must act at the write's own
// place in the run's order (a service thread whose polls of the line
// stand in marks until it changes: model/shmem). One call per line; fn
// must not change the memory's watches. UnwatchCall removes it.
func (m *Memory) WatchCall(a Addr, fn func()) {
	l := Line(a)
	r, err := m.find(l, 0)
	if err != nil {
		panic(fmt.Sprintf("mem %s: WatchCall of %#x outside every allocation", m.name, a))
	}
	if w := r.watched.find(l); w != nil {
		if w.call != nil {
			panic(fmt.Sprintf("mem %s: a second WatchCall of line %#x", m.name, l))
		}
		w.call = fn
		return
	}
	r.watched.insert(watch{line: l, call: fn})
	m.nwatched++
}

// UnwatchCall removes the call WatchCall set on the line holding a.
func (m *Memory) UnwatchCall(a Addr) {
	l := Line(a)
	r, err := m.find(l, 0)
	if err != nil {
		return
	}
	w := r.watched.find(l)
	if w == nil || w.call == nil {
		return
	}
	w.call = nil
	if w.sig == nil {
		r.watched.remove(l)
		m.nwatched--
	}
}

// Load64 reads the little-endian uint64 at a.
func (m *Memory) Load64(a Addr) uint64 {
	r, err := m.find(a, 8)
	if err != nil {
		panic(err)
	}
	var b []byte
	if r.slotted() && r.slotOf(int(a-r.base), 8) != -1 { // a receive slot's word, polled before it lands
		var w [8]byte
		r.readPieces(int(a-r.base), w[:])
		b = w[:]
	} else {
		b = r.bytes(m, a, 8)
	}
	if b == nil { // payload-free: zeros but for control lines
		var w [8]byte
		r.readLines(r.ctrlIn(a, 8), a, w[:])
		b = w[:]
	}
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// Store64 writes the little-endian uint64 v at a and wakes its watchers.
func (m *Memory) Store64(a Addr, v uint64) {
	var b [8]byte
	putLE64(b[:], v)
	m.Write(a, b[:])
}

// Server is a FIFO bandwidth server, such as a DRAM system shared by the
// agents of a node. The zero value is unusable; call NewServer.
type Server struct {
	perByte float64
	free    sim.Time
	bytes   uint64
	busy    sim.Duration // summed service times, for the invariant check
}

// NewServer returns a server moving bytesPerSecond.
func NewServer(bytesPerSecond float64) *Server { return &Server{perByte: 1e12 / bytesPerSecond} }

// Reserve queues n bytes behind earlier reservations starting no earlier
// than now, and returns when the transfer finishes.
func (s *Server) Reserve(now sim.Time, n uint64) sim.Time {
	start := max(now, s.free)
	d := sim.FromPicoseconds(float64(n) * s.perByte)
	s.free = start.Add(d)
	s.bytes += n
	s.busy = s.busy.Add(d)
	return s.free
}

// Invariants checks, at the end of a run, that the server never served
// two transfers at once: its summed service times fit before it went
// idle (a reservation that started before the previous one ended would
// break it). agent names it in violations.
func (s *Server) Invariants(agent string, now sim.Time) []sim.Violation {
	if s.busy > s.free {
		return []sim.Violation{{Agent: agent, At: now, What: fmt.Sprintf("served %d bytes in %v of service, more than the %v it was open: transfers overlapped", s.bytes, s.busy, s.free)}}
	}
	return nil
}

// Bytes returns the bytes moved so far.
func (s *Server) Bytes() uint64 { return s.bytes }
