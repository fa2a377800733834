package datatype

import (
	"fmt"
	"sort"
	"unsafe"
)

// Block is one contiguous region of a type map: Len bytes at byte offset
// Off from the origin of the user buffer, holding packed-stream bytes
// [Stream, Stream+Len).
type Block struct {
	Off, Len, Stream int
}

// frame is one level of a segment's stack: node n, instance origin base,
// and the current child (loop kinds) or block (leaf kinds) index i.
type frame struct {
	n    *node
	i    int
	base int
}

// frameBytes is the memory a frame would take in a NIC-resident checkpoint.
const frameBytes = int(unsafe.Sizeof(frame{}))

// SegmentStats counts the work a segment did, for cost models.
type SegmentStats struct {
	Resets        int // Process calls with first < position (restart from 0)
	CatchUps      int // Process calls with first > position
	CatchUpBytes  int // stream bytes skipped without emitting
	SkippedBlocks int // raw type-map blocks skipped by catch-ups
	Regions       int // merged regions emitted
}

// Segment is the state of a partial pack or unpack of count elements
// (MPITypes' segment): a stack of loop frames and the stream position.
// Process handles any stream range [first, last): it catches up when first
// is ahead of the position and resets when first is behind it. A Segment is
// not safe for concurrent use; give each handler its own, or share
// Checkpoints, which are read-only.
type Segment struct {
	c     *Committed
	root  *node // count elements; nil if nothing is packed
	count int
	total int // packed bytes of the whole message

	// Invariant: stack is empty iff pos == total; otherwise stack[0].n is
	// root, every frame's node is the current child of the frame below,
	// and stack[len-1] is a leaf-kind frame whose current block holds
	// stream byte pos at offset inBlk (0 ≤ inBlk < block length).
	stack []frame
	pos   int // stream bytes already consumed
	inBlk int // bytes of the current raw block already consumed
	blk   int // index of the current raw block in the message
	stats SegmentStats
}

// NewSegment returns a segment at stream position 0 for count elements of
// c. It fails if count is negative or the message size overflows.
func (c *Committed) NewSegment(count int) (*Segment, error) {
	total, err := c.PackedSize(count)
	if err != nil {
		return nil, err
	}
	s := &Segment{c: c, count: count, total: total}
	if total > 0 {
		s.root = mkRep(count, c.extent, c.root)
		s.stack = make([]frame, 0, s.root.depth)
	}
	s.seek(0)
	return s, nil
}

// Committed returns the committed type s processes.
func (s *Segment) Committed() *Committed { return s.c }

// Count is the number of elements s covers.
func (s *Segment) Count() int { return s.count }

// Total is the packed size of the whole message.
func (s *Segment) Total() int { return s.total }

// Position is the number of stream bytes already consumed.
func (s *Segment) Position() int { return s.pos }

// Stats returns the work counters accumulated since the segment was made.
func (s *Segment) Stats() SegmentStats { return s.stats }

// Reset moves s back to stream position 0.
func (s *Segment) Reset() { s.seek(0) }

// childAt returns the i-th child of a loop node and its origin.
func childAt(f *frame) (*node, int) {
	n := f.n
	switch n.kind {
	case kRep:
		return n.child, f.base + n.base + f.i*n.stride
	case kIdx:
		return n.child, f.base + n.base + n.offs[f.i]
	default: // kList
		return n.kids[f.i], f.base + n.base + n.offs[f.i]
	}
}

// cur returns the current raw block (offset from the origin, length).
func (s *Segment) cur() (int, int) {
	f := &s.stack[len(s.stack)-1]
	n := f.n
	switch n.kind {
	case kBlock:
		return f.base + n.base, n.blen
	case kVecB:
		return f.base + n.base + f.i*n.stride, n.blen
	case kIdxB:
		return f.base + n.base + n.offs[f.i], n.blen
	default: // kListB
		return f.base + n.base + n.offs[f.i], n.lens[f.i]
	}
}

// descend pushes frames from the loop frame on top down to a leaf.
func (s *Segment) descend() {
	for {
		f := &s.stack[len(s.stack)-1]
		if f.n.isLeaf() {
			return
		}
		c, base := childAt(f)
		s.stack = append(s.stack, frame{n: c, base: base})
	}
}

// advance moves to the next raw block.
func (s *Segment) advance() {
	s.inBlk = 0
	s.blk++
	for len(s.stack) > 0 {
		f := &s.stack[len(s.stack)-1]
		f.i++
		if f.i < f.n.count {
			s.descend()
			return
		}
		s.stack = s.stack[:len(s.stack)-1]
	}
}

// seek rebuilds the stack for stream position t (0 ≤ t ≤ total) by
// arithmetic descent from the root.
func (s *Segment) seek(t int) {
	s.stack = s.stack[:0]
	s.pos, s.inBlk, s.blk = t, 0, 0
	if s.root == nil || t >= s.total {
		s.pos, s.blk = s.total, satAdd(0, s.rootBlocks())
		return
	}
	n, base, rem := s.root, 0, t
	for {
		var i int
		switch n.kind {
		case kRep, kIdx:
			i = rem / n.child.size
			rem -= i * n.child.size
			s.blk = satAdd(s.blk, satMul(i, n.child.nblk))
		case kList:
			i = sort.Search(n.count, func(k int) bool { return n.cum[k+1] > rem }) // first kid ending after rem
			rem -= n.cum[i]
			s.blk += n.cumBlk[i]
		case kBlock:
			i = 0
		case kVecB, kIdxB:
			i = rem / n.blen
			rem -= i * n.blen
		case kListB:
			i = sort.Search(n.count, func(k int) bool { return n.cum[k+1] > rem })
			rem -= n.cum[i]
		}
		s.stack = append(s.stack, frame{n: n, i: i, base: base})
		if n.isLeaf() {
			s.blk += i
			s.inBlk = rem
			return
		}
		n, base = childAt(&s.stack[len(s.stack)-1])
	}
}

func (s *Segment) rootBlocks() int {
	if s.root == nil {
		return 0
	}
	return s.root.nblk
}

// moveTo positions s at stream byte t without emitting anything: forward
// catch-up when t is ahead, reset and catch-up from 0 when t is behind.
func (s *Segment) moveTo(t int) {
	switch {
	case t == s.pos:
		return
	case t < s.pos:
		s.stats.Resets++
		s.stats.CatchUpBytes += t
		s.seek(t)
		s.stats.SkippedBlocks += s.blk
		return
	}
	s.stats.CatchUps++
	s.stats.CatchUpBytes += t - s.pos
	from := s.blk
	// Catch-up within the current leaf run is leaf arithmetic; anything
	// further is an arithmetic descent from the root.
	f := &s.stack[len(s.stack)-1]
	n := f.n
	_, l := s.cur()
	switch {
	case s.pos+l-s.inBlk > t:
		s.inBlk += t - s.pos
		s.pos = t
	case (n.kind == kVecB || n.kind == kIdxB) && t < s.pos+l-s.inBlk+(n.count-1-f.i)*n.blen:
		r := t - (s.pos + l - s.inBlk)
		k := 1 + r/n.blen
		f.i += k
		s.blk += k
		s.inBlk = r % n.blen
		s.pos = t
	default:
		s.seek(t)
	}
	s.stats.SkippedBlocks += s.blk - from
}

// next returns the next region of at most last − position bytes and
// consumes it. ok is false at last or at the end of the message.
func (s *Segment) next(last int) (off, n int, ok bool) {
	if s.pos >= last || len(s.stack) == 0 {
		return 0, 0, false
	}
	o, l := s.cur()
	n = min(l-s.inBlk, last-s.pos)
	off = o + s.inBlk
	s.pos += n
	s.inBlk += n
	if s.inBlk == l {
		s.advance()
	}
	return off, n, true
}

// run reports a run of k ≥ 2 whole uniform blocks (kVecB or kIdxB) that
// starts at the position and ends by last, for the bulk copy kernels.
func (s *Segment) run(last int) (*frame, int) {
	if s.inBlk != 0 || len(s.stack) == 0 {
		return nil, 0
	}
	f := &s.stack[len(s.stack)-1]
	if n := f.n; n.kind == kVecB || n.kind == kIdxB {
		if k := min(n.count-f.i, (last-s.pos)/n.blen); k >= 2 {
			return f, k
		}
	}
	return nil, 0
}

// skipRun consumes the k blocks reported by run.
func (s *Segment) skipRun(f *frame, k int) {
	s.pos += k * f.n.blen
	f.i += k - 1
	s.blk += k - 1
	s.advance()
}

func (s *Segment) checkRange(first, last int) error {
	if first < 0 || last < first || last > s.total {
		return fmt.Errorf("%w: stream range [%d, %d) outside the %d-byte message", ErrArguments, first, last, s.total)
	}
	return nil
}

// Process handles packed-stream bytes [first, last) (the spec's
// Process(seg, first, last, emit)): it moves the segment to first (catch-up
// or reset), then calls emit for every contiguous region overlapping the
// range, clipped to it, with adjacent regions merged. hostOff is relative to
// the buffer origin. Process returns the number of regions emitted.
func (s *Segment) Process(first, last int, emit func(hostOff, n, streamOff int)) (int, error) {
	if err := s.checkRange(first, last); err != nil {
		return 0, err
	}
	s.moveTo(first)
	regions := 0
	pend, pl, ps := 0, 0, 0
	add := func(off, n, stream int) {
		if pl > 0 && pend+pl == off {
			pl += n
			return
		}
		if pl > 0 {
			emit(pend, pl, ps)
			regions++
		}
		pend, pl, ps = off, n, stream
	}
	for {
		if f, k := s.run(last); k > 0 { // a run of whole uniform blocks
			n := f.n
			o0 := f.base + n.base
			for j := f.i; j < f.i+k; j++ {
				off := o0 + j*n.stride
				if n.kind == kIdxB {
					off = o0 + n.offs[j]
				}
				add(off, n.blen, s.pos+(j-f.i)*n.blen)
			}
			s.skipRun(f, k)
			continue
		}
		off, n, ok := s.next(last)
		if !ok {
			break
		}
		add(off, n, s.pos-n)
	}
	if pl > 0 {
		emit(pend, pl, ps)
		regions++
	}
	s.stats.Regions += regions
	return regions, nil
}

// BlockList appends to dst the merged regions of stream bytes [first,
// last), without copying any data (for DMA-issuing handlers), and returns
// the extended slice. Block offsets are relative to the buffer origin.
func (s *Segment) BlockList(first, last int, dst []Block) ([]Block, error) {
	if err := s.checkRange(first, last); err != nil {
		return dst, err
	}
	s.moveTo(first)
	start := len(dst)
	for {
		if f, k := s.run(last); k > 0 { // a run of whole uniform blocks
			n := f.n
			o0 := f.base + n.base
			for j := f.i; j < f.i+k; j++ {
				off := o0 + j*n.stride
				if n.kind == kIdxB {
					off = o0 + n.offs[j]
				}
				if m := len(dst) - 1; m >= start && dst[m].Off+dst[m].Len == off {
					dst[m].Len += n.blen
				} else {
					dst = append(dst, Block{Off: off, Len: n.blen, Stream: s.pos + (j-f.i)*n.blen})
				}
			}
			s.skipRun(f, k)
			continue
		}
		off, n, ok := s.next(last)
		if !ok {
			break
		}
		if m := len(dst) - 1; m >= start && dst[m].Off+dst[m].Len == off {
			dst[m].Len += n
			continue
		}
		dst = append(dst, Block{Off: off, Len: n, Stream: s.pos - n})
	}
	s.stats.Regions += len(dst) - start
	return dst, nil
}

// Pack packs stream bytes [first, last) of the message whose origin is
// src[origin] into dst[:last-first] and returns last − first.
func (s *Segment) Pack(dst, src []byte, origin, first, last int) (int, error) {
	if err := s.checkRange(first, last); err != nil {
		return 0, err
	}
	if len(dst) < last-first {
		return 0, fmt.Errorf("%w: %d stream bytes into a %d-byte destination", ErrBuffer, last-first, len(dst))
	}
	if err := s.c.checkBuf("source", src, origin, s.count); err != nil {
		return 0, err
	}
	s.moveTo(first)
	base := unsafe.Pointer(unsafe.SliceData(src))
	d := unsafe.Pointer(unsafe.SliceData(dst))
	for {
		if f, k := s.run(last); k > 0 {
			n, o := f.n, origin+f.base+f.n.base
			if n.kind == kVecB {
				vecPack(unsafe.Add(d, s.pos-first), unsafe.Add(base, o+f.i*n.stride), k, n.blen, n.stride)
			} else {
				idxPack(unsafe.Add(d, s.pos-first), base, o, n.offs[f.i:f.i+k], n.blen)
			}
			s.skipRun(f, k)
			continue
		}
		off, n, ok := s.next(last)
		if !ok {
			break
		}
		copySmall(unsafe.Add(d, s.pos-n-first), unsafe.Add(base, origin+off), n)
	}
	return last - first, nil
}

// Unpack unpacks stream bytes [first, last), held in src[:last-first], into
// the buffer whose origin is dst[origin], and returns last − first.
func (s *Segment) Unpack(dst []byte, origin int, src []byte, first, last int) (int, error) {
	if err := s.checkRange(first, last); err != nil {
		return 0, err
	}
	if len(src) < last-first {
		return 0, fmt.Errorf("%w: %d stream bytes from a %d-byte source", ErrBuffer, last-first, len(src))
	}
	if err := s.c.checkBuf("destination", dst, origin, s.count); err != nil {
		return 0, err
	}
	s.moveTo(first)
	base := unsafe.Pointer(unsafe.SliceData(dst))
	p := unsafe.Pointer(unsafe.SliceData(src))
	for {
		if f, k := s.run(last); k > 0 {
			n, o := f.n, origin+f.base+f.n.base
			if n.kind == kVecB {
				vecUnpack(unsafe.Add(base, o+f.i*n.stride), unsafe.Add(p, s.pos-first), k, n.blen, n.stride)
			} else {
				idxUnpack(base, o, unsafe.Add(p, s.pos-first), n.offs[f.i:f.i+k], n.blen)
			}
			s.skipRun(f, k)
			continue
		}
		off, n, ok := s.next(last)
		if !ok {
			break
		}
		copySmall(unsafe.Add(base, origin+off), unsafe.Add(p, s.pos-n-first), n)
	}
	return last - first, nil
}

// Checkpoint is a read-only snapshot of a Segment (its frames and stream
// position), as the RO-CP and RW-CP strategies of the SC'19 paper keep in
// NIC memory. Offsets are relative to the buffer origin, so a checkpoint
// serves any buffer.
type Checkpoint struct {
	seg Segment
}

// Checkpoint snapshots s (a deep copy of its frames).
func (s *Segment) Checkpoint() *Checkpoint {
	cp := &Checkpoint{seg: *s}
	cp.seg.stack = append(make([]frame, 0, cap(s.stack)), s.stack...)
	cp.seg.stats = SegmentStats{}
	return cp
}

// Position is the stream position the checkpoint was taken at.
func (cp *Checkpoint) Position() int { return cp.seg.pos }

// Depth is the number of frames the checkpoint holds.
func (cp *Checkpoint) Depth() int { return len(cp.seg.stack) }

// Bytes is the checkpoint's size in this implementation's layout (frames
// plus the position words). Cost models may use the documents' C = 612 B
// instead.
func (cp *Checkpoint) Bytes() int { return len(cp.seg.stack)*frameBytes + 4*8 }

// Segment returns a new private segment starting at the checkpoint (RO-CP:
// copy, catch up, process, discard; RW-CP: the working copy that then
// progresses in place).
func (cp *Checkpoint) Segment() *Segment {
	s := cp.seg
	s.stack = append(make([]frame, 0, cap(cp.seg.stack)), cp.seg.stack...)
	return &s
}

// Restore moves s to the checkpoint's state in place, without allocating.
// The checkpoint must come from a segment of the same committed type and
// count.
func (s *Segment) Restore(cp *Checkpoint) error {
	if cp.seg.c != s.c || cp.seg.count != s.count {
		return fmt.Errorf("%w: checkpoint of %d×%v restored into a segment of %d×%v",
			ErrArguments, cp.seg.count, cp.seg.c.t, s.count, s.c.t)
	}
	s.stack = append(s.stack[:0], cp.seg.stack...)
	s.pos, s.inBlk, s.blk = cp.seg.pos, cp.seg.inBlk, cp.seg.blk
	return nil
}

// Checkpoints runs a segment over count elements without emitting and
// snapshots it every interval stream bytes, starting at 0 (the host side of
// RO-CP and RW-CP). Checkpoint j sits at stream byte j·interval.
func (c *Committed) Checkpoints(count, interval int) ([]*Checkpoint, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("%w: checkpoint interval %d", ErrArguments, interval)
	}
	total, err := c.PackedSize(count)
	if err != nil {
		return nil, err
	}
	s, err := c.NewSegment(count)
	if err != nil {
		return nil, err
	}
	out := make([]*Checkpoint, 0, total/interval+1)
	for p := 0; p < total || p == 0; p += interval {
		s.moveTo(p)
		out = append(out, s.Checkpoint())
	}
	return out, nil
}

// CheckpointFor returns the checkpoint with the largest position ≤ first
// from a list made by Checkpoints (sorted by position), or nil if the list
// is empty.
func CheckpointFor(cps []*Checkpoint, first int) *Checkpoint {
	if len(cps) == 0 {
		return nil
	}
	i := sort.Search(len(cps), func(k int) bool { return cps[k].seg.pos > first })
	if i == 0 {
		return cps[0]
	}
	return cps[i-1]
}

// BlockCount returns the number of raw (unmerged) type-map blocks of count
// elements as the committed tree sees them; merging across the tree's
// blocks happens only when regions are emitted.
func (c *Committed) BlockCount(count int) int {
	if c.root == nil {
		return 0
	}
	return satMul(count, c.root.nblk)
}
