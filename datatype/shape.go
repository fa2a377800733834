package datatype

import "slices"

// ShapeKind classifies a committed message for the specialized NIC handlers
// of the SC'19 paper.
type ShapeKind uint8

// The shapes, from simplest to the general case.
const (
	ShapeEmpty      ShapeKind = iota // nothing to transfer
	ShapeContiguous                  // one block
	ShapeVector                      // Count blocks of BlockLen bytes, Stride apart
	ShapeIndexBlock                  // Count blocks of BlockLen bytes at Offsets
	ShapeIndexed                     // Count blocks of Lens at Offsets
	ShapeGeneral                     // anything else: needs the dataloops (RW-CP, RO-CP, HPU-local)
)

// String names the shape.
func (k ShapeKind) String() string {
	return [...]string{"empty", "contiguous", "vector", "index-block", "indexed", "general"}[k]
}

// Shape is the normalized form of count elements of a committed type when
// it is a single level of blocks. All byte offsets are relative to the
// buffer origin and already include Base.
type Shape struct {
	Kind     ShapeKind
	Count    int   // blocks (1 for contiguous)
	Base     int   // byte offset of block 0 (vector, contiguous)
	BlockLen int   // bytes per block (contiguous, vector, index-block)
	Stride   int   // bytes between vector blocks
	Offsets  []int // index-block, indexed: block offsets
	Lens     []int // indexed: block lengths
}

// Shape reports the single-level form of count elements, if there is one.
// Slices in the result are copies.
func (c *Committed) Shape(count int) (Shape, error) {
	total, err := c.PackedSize(count)
	if err != nil || total == 0 {
		return Shape{}, err
	}
	n := mkRep(count, c.extent, c.root)
	switch n.kind {
	case kBlock:
		return Shape{Kind: ShapeContiguous, Count: 1, Base: n.base, BlockLen: n.blen}, nil
	case kVecB:
		return Shape{Kind: ShapeVector, Count: n.count, Base: n.base, BlockLen: n.blen, Stride: n.stride}, nil
	case kIdxB:
		offs := slices.Clone(n.offs)
		for i := range offs {
			offs[i] += n.base
		}
		return Shape{Kind: ShapeIndexBlock, Count: n.count, BlockLen: n.blen, Offsets: offs}, nil
	case kListB:
		offs := slices.Clone(n.offs)
		for i := range offs {
			offs[i] += n.base
		}
		return Shape{Kind: ShapeIndexed, Count: n.count, Offsets: offs, Lens: slices.Clone(n.lens)}, nil
	}
	return Shape{Kind: ShapeGeneral}, nil
}

// loopNodeBytes is the size charged per dataloop node: kind, count, base,
// block length, stride, child pointer, size, and list headers, as 8-byte words.
const loopNodeBytes = 10 * 8

// DataloopBytes estimates the NIC memory the committed dataloops take for
// count elements: a fixed header per node plus 8 bytes per offset, length
// and prefix-sum entry, shared subtrees counted once. It is the
// "dataloops" term of the RW-CP and RO-CP memory models (§5).
func (c *Committed) DataloopBytes(count int) int {
	if c.root == nil || count == 0 {
		return 0
	}
	seen := map[*node]bool{}
	var walk func(n *node) int
	walk = func(n *node) int {
		if n == nil || seen[n] {
			return 0
		}
		seen[n] = true
		b := loopNodeBytes + 8*(len(n.offs)+len(n.lens)+len(n.cum))
		b += walk(n.child)
		for _, k := range n.kids {
			b += walk(k)
		}
		return b
	}
	b := walk(c.root)
	if count > 1 {
		b += loopNodeBytes // the enclosing count loop
	}
	return b
}
