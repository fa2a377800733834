package datatype

import "slices"

// kind is the shape of a node of the executable loop tree (see doc.go).
type kind uint8

const (
	// Leaf kinds: they describe contiguous blocks directly.
	kBlock kind = iota // one block of blen bytes at base
	kVecB              // count blocks of blen bytes at base + i·stride
	kIdxB              // count blocks of blen bytes at base + offs[i]
	kListB             // count blocks of lens[i] bytes at base + offs[i]
	// Loop kinds: they place child instances.
	kRep  // count copies of child at base + i·stride
	kIdx  // copies of child at base + offs[i]
	kList // kids[i] at base + offs[i]
)

// String names the node kind, for debugging.
func (k kind) String() string {
	return [...]string{"block", "vecb", "idxb", "listb", "rep", "idx", "list"}[k]
}

// node is one level of the committed loop tree. Nodes are immutable once
// built and may be shared.
//
// Invariant: size > 0 (empty subtrees are dropped while building);
// count ≥ 1; for kListB and kList, cum[i] is the packed size of blocks or
// kids before i and cum[count] == size; [lo, hi) holds every byte the
// node's blocks touch, relative to its instance origin (base included).
type node struct {
	kind   kind
	count  int   // blocks (leaf kinds) or child instances (loop kinds)
	base   int   // byte offset added to every position of this node
	blen   int   // kBlock, kVecB, kIdxB: bytes per block
	stride int   // kVecB, kRep: bytes between consecutive blocks or children
	offs   []int // kIdxB, kListB, kIdx, kList: byte offsets (before base)
	lens   []int // kListB: block lengths in bytes
	cum    []int // kListB, kList: packed bytes before block or kid i (len count+1)
	cumBlk []int // kList: raw blocks before kid i (len count+1), saturating
	child  *node // kRep, kIdx
	kids   []*node

	size   int // packed bytes of one instance
	nblk   int // raw (unmerged) blocks of one instance, saturating
	lo, hi int // memory span [lo, hi) touched, relative to the instance origin
	depth  int // frames a segment needs for this subtree

	// tr marks a transpose (kRep of kVecB whose children are adjacent
	// columns, stride == child blen, and whose rows do not overlap): the
	// kernels may then visit it row by row.
	tr bool
	// tile says whether the tiled kernel may run a kRep of a short block
	// list: tileAny (pack and unpack), tilePack (pack only: repetitions
	// or blocks overlap, so unpack must keep stream order) or tileNo.
	tile tileMode
}

type tileMode uint8

const (
	tileNo tileMode = iota
	tilePack
	tileAny
)

// maxTileBlocks bounds the block list length the tiled kernel handles.
const maxTileBlocks = 8

func (n *node) isLeaf() bool { return n.kind <= kListB }

// shift returns n moved by off bytes.
func shift(off int, n *node) *node {
	if n == nil || off == 0 {
		return n
	}
	c := *n
	c.base += off
	c.lo += off
	c.hi += off
	return &c
}

func block(blen int) *node {
	if blen <= 0 {
		return nil
	}
	return &node{kind: kBlock, count: 1, blen: blen, size: blen, nblk: 1, hi: blen, depth: 1}
}

// mkRep places count copies of c stride bytes apart.
func mkRep(count, stride int, c *node) *node {
	return repInto(new(node), count, stride, c)
}

// repInto is mkRep building into n, which it returns unless the result is
// nil or c itself; callers may pass a node on their stack.
func repInto(n *node, count, stride int, c *node) *node {
	if c == nil || count <= 0 {
		return nil
	}
	if count == 1 {
		return c
	}
	span0, span1 := min(0, (count-1)*stride), max(0, (count-1)*stride)
	*n = node{count: count, stride: stride, size: count * c.size, nblk: satMul(count, c.nblk),
		lo: c.lo + span0, hi: c.hi + span1}
	switch {
	case c.kind == kBlock && stride == c.blen:
		n.kind, n.blen, n.count, n.nblk, n.stride, n.depth = kBlock, count*c.blen, 1, 1, 0, 1
		n.base = c.base
		return n
	case c.kind == kBlock:
		n.kind, n.blen, n.base, n.depth = kVecB, c.blen, c.base, 1
		return n
	case c.kind == kVecB && c.count*c.stride == stride:
		n.kind, n.blen, n.base, n.count, n.stride, n.depth = kVecB, c.blen, c.base, count*c.count, c.stride, 1
		return n
	case c.kind == kRep && c.count*c.stride == stride:
		n.kind, n.child, n.base, n.count, n.stride, n.depth = kRep, c.child, c.base, count*c.count, c.stride, c.depth
	default:
		n.kind, n.child, n.depth = kRep, c, c.depth+1
	}
	k := n.child
	n.tr = k.kind == kVecB && n.stride == k.blen && k.count >= 4 && abs(k.stride) >= n.count*k.blen
	if (k.kind == kListB || k.kind == kIdxB) && k.count <= maxTileBlocks && n.count >= 16 {
		n.tile = tilePack
		if abs(n.stride) >= k.hi-k.lo && !blocksOverlap(k) {
			n.tile = tileAny
		}
	}
	return n
}

// blocksOverlap reports whether two blocks of a short block list share a byte.
func blocksOverlap(k *node) bool {
	for i := range k.offs {
		for j := range i {
			li, lj := k.blen, k.blen
			if k.kind == kListB {
				li, lj = k.lens[i], k.lens[j]
			}
			if k.offs[i] < k.offs[j]+lj && k.offs[j] < k.offs[i]+li {
				return true
			}
		}
	}
	return false
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// arith reports whether offs is an arithmetic progression, and its step.
func arith(offs []int) (int, bool) {
	if len(offs) < 2 {
		return 0, true
	}
	s := offs[1] - offs[0]
	for i := 2; i < len(offs); i++ {
		if offs[i]-offs[i-1] != s {
			return 0, false
		}
	}
	return s, true
}

// mkIdx places copies of c at the given byte offsets.
func mkIdx(offs []int, c *node) *node {
	if c == nil || len(offs) == 0 {
		return nil
	}
	if s, ok := arith(offs); ok {
		return shift(offs[0], mkRep(len(offs), s, c))
	}
	lo, hi := spanOf(offs)
	n := &node{count: len(offs), offs: offs, size: len(offs) * c.size, nblk: satMul(len(offs), c.nblk),
		lo: lo + c.lo, hi: hi + c.hi}
	if c.kind == kBlock {
		n.kind, n.blen, n.base, n.depth = kIdxB, c.blen, c.base, 1
		return n
	}
	n.kind, n.child, n.depth = kIdx, c, c.depth+1
	return n
}

func spanOf(offs []int) (lo, hi int) {
	return slices.Min(offs), slices.Max(offs)
}

// mkList places kids[i] at offs[i]; nil kids are dropped.
func mkList(offs []int, kids []*node) *node {
	var o []int
	var k []*node
	for i, c := range kids {
		if c != nil {
			o = append(o, offs[i])
			k = append(k, c)
		}
	}
	switch len(k) {
	case 0:
		return nil
	case 1:
		return shift(o[0], k[0])
	}
	allBlocks, same := true, true
	for _, c := range k {
		allBlocks = allBlocks && c.kind == kBlock
		same = same && c == k[0]
	}
	if same {
		return mkIdx(o, k[0])
	}
	if allBlocks {
		// Merge blocks adjacent in memory (they are adjacent in the stream).
		var bo, bl []int
		for i, c := range k {
			off := o[i] + c.base
			if m := len(bo) - 1; m >= 0 && bo[m]+bl[m] == off {
				bl[m] += c.blen
				continue
			}
			bo, bl = append(bo, off), append(bl, c.blen)
		}
		if len(bo) == 1 {
			return shift(bo[0], block(bl[0]))
		}
		if slices.Min(bl) == slices.Max(bl) {
			return mkIdx(bo, block(bl[0]))
		}
		n := &node{kind: kListB, count: len(bo), offs: bo, lens: bl, cum: make([]int, len(bo)+1), nblk: len(bo), depth: 1}
		n.lo, n.hi = bo[0], bo[0]+bl[0]
		for i := range bo {
			n.cum[i+1] = n.cum[i] + bl[i]
			n.lo, n.hi = min(n.lo, bo[i]), max(n.hi, bo[i]+bl[i])
		}
		n.size = n.cum[len(bo)]
		return n
	}
	n := &node{kind: kList, count: len(k), offs: o, kids: k, cum: make([]int, len(k)+1), cumBlk: make([]int, len(k)+1)}
	n.lo, n.hi = o[0]+k[0].lo, o[0]+k[0].hi
	for i, c := range k {
		n.cum[i+1] = n.cum[i] + c.size
		n.cumBlk[i+1] = satAdd(n.cumBlk[i], c.nblk)
		n.nblk = satAdd(n.nblk, c.nblk)
		n.lo, n.hi = min(n.lo, o[i]+c.lo), max(n.hi, o[i]+c.hi)
		n.depth = max(n.depth, c.depth+1)
	}
	n.size = n.cum[len(k)]
	return n
}

// compile builds the loop tree of one element of t, or nil if t packs no bytes.
func compile(t *Type) *node {
	if t.size == 0 {
		return nil
	}
	e := 0
	if t.old != nil {
		e = t.old.Extent()
	}
	switch t.comb {
	case CombinerNamed:
		return block(t.size)
	case CombinerContiguous:
		return mkRep(t.count, e, compile(t.old))
	case CombinerVector, CombinerHVector:
		sb := t.stride
		if t.comb == CombinerVector {
			sb *= e
		}
		return mkRep(t.count, sb, mkRep(t.blocklen, e, compile(t.old)))
	case CombinerIndexed, CombinerHIndexed:
		c := compile(t.old)
		offs := make([]int, len(t.bls))
		kids := make([]*node, len(t.bls))
		cache := map[int]*node{}
		for i, bl := range t.bls {
			offs[i] = t.displs[i]
			if t.comb == CombinerIndexed {
				offs[i] *= e
			}
			k, ok := cache[bl]
			if !ok {
				k = mkRep(bl, e, c)
				cache[bl] = k
			}
			kids[i] = k
		}
		return mkList(offs, kids)
	case CombinerIndexedBlock, CombinerHIndexedBlock:
		offs := clone(t.displs)
		if t.comb == CombinerIndexedBlock {
			for i := range offs {
				offs[i] *= e
			}
		}
		return mkIdx(offs, mkRep(t.blocklen, e, compile(t.old)))
	case CombinerStruct:
		kids := make([]*node, len(t.types))
		for i, ty := range t.types {
			kids[i] = mkRep(t.bls[i], ty.Extent(), compile(ty))
		}
		return mkList(clone(t.displs), kids)
	case CombinerSubarray:
		return shift(t.subDisp, compile(t.subInner))
	case CombinerResized, CombinerDup:
		return compile(t.old)
	}
	return nil
}
