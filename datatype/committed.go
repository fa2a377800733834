package datatype

import (
	"fmt"
	"unsafe"
)

// Committed is a Type compiled for packing and unpacking (MPI_Type_commit).
// It is immutable and safe for concurrent use; per-operation state lives in
// Segments.
type Committed struct {
	t      *Type
	root   *node // one element; nil if the type packs no bytes
	extent int
}

// Commit compiles t into its executable loop tree (see the package doc).
func (t *Type) Commit() *Committed {
	root := compile(t)
	internOffsets(root, map[string][]int{}, map[*node]bool{})
	return &Committed{t: t, root: root, extent: t.Extent()}
}

// internOffsets makes nodes with equal offset lists share one slice, so
// that kernels walking several of them (LAMMPS' per-property lists) keep a
// single copy in cache.
func internOffsets(n *node, seen map[string][]int, done map[*node]bool) {
	if n == nil || done[n] {
		return
	}
	done[n] = true
	if len(n.offs) > 1 {
		key := string(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(n.offs))), len(n.offs)*int(unsafe.Sizeof(n.offs[0]))))
		if o, ok := seen[key]; ok {
			n.offs = o
		} else {
			seen[key] = n.offs
		}
	}
	internOffsets(n.child, seen, done)
	for _, k := range n.kids {
		internOffsets(k, seen, done)
	}
}

// Type returns the type c was committed from.
func (c *Committed) Type() *Type { return c.t }

// PackedSize is the number of stream bytes count elements pack into
// (MPI_Pack_size without any header).
func (c *Committed) PackedSize(count int) (int, error) {
	if count < 0 {
		return 0, fmt.Errorf("%w: count = %d", ErrNegative, count)
	}
	var k calc
	n := k.mul(count, c.t.size)
	if k.err != nil {
		return 0, k.err
	}
	return n, nil
}

// Depth is the number of loop levels of the committed tree (0 if empty).
func (c *Committed) Depth() int {
	if c.root == nil {
		return 0
	}
	return c.root.depth
}

// Span reports the bytes [lo, hi), relative to the origin, that count
// elements touch. It is empty (0, 0) when nothing is packed.
func (c *Committed) Span(count int) (lo, hi int, err error) {
	if count < 0 {
		return 0, 0, fmt.Errorf("%w: count = %d", ErrNegative, count)
	}
	if c.root == nil || count == 0 {
		return 0, 0, nil
	}
	var k calc
	sp := k.mul(count-1, c.extent)
	if _, err := c.PackedSize(count); err != nil {
		return 0, 0, err
	}
	lo, hi = k.add(c.root.lo, min(0, sp)), k.add(c.root.hi, max(0, sp))
	if k.err != nil {
		return 0, 0, k.err
	}
	return lo, hi, nil
}

// checkBuf verifies that count elements at buf[origin:] stay inside buf.
func (c *Committed) checkBuf(what string, buf []byte, origin, count int) error {
	lo, hi, err := c.Span(count)
	if err != nil {
		return err
	}
	if lo == hi {
		return nil
	}
	if origin < -maxSpan || origin > maxSpan || origin+lo < 0 || origin+hi > len(buf) {
		return fmt.Errorf("%w: %d elements of %v at origin %d touch bytes [%d, %d) of a %d-byte %s buffer",
			ErrBuffer, count, c.t, origin, origin+lo, origin+hi, len(buf), what)
	}
	return nil
}

// Pack packs count elements whose origin (the MPI buffer address) is
// src[origin] into dst, in type-map order, and returns the number of bytes
// written. dst must hold PackedSize(count) bytes and every byte the type
// map reads must lie inside src; otherwise Pack returns an error wrapping
// ErrBuffer and writes nothing.
func (c *Committed) Pack(dst, src []byte, origin, count int) (int, error) {
	n, err := c.PackedSize(count)
	if err != nil {
		return 0, err
	}
	if err := c.checkBuf("source", src, origin, count); err != nil {
		return 0, err
	}
	if len(dst) < n {
		return 0, fmt.Errorf("%w: packing %d bytes into a %d-byte destination", ErrBuffer, n, len(dst))
	}
	if n == 0 {
		return 0, nil
	}
	d := unsafe.Pointer(unsafe.SliceData(dst))
	base := unsafe.Pointer(unsafe.SliceData(src))
	r := c.root
	if r.kind == kBlock && r.blen == c.extent {
		Memcpy(dst[:n], src[origin+r.base:])
		return n, nil
	}
	// The count loop is a repetition node on the stack, so it gets the
	// same merging and kernels as any other level without allocating.
	var w node
	rep := repInto(&w, count, c.extent, c.root)
	rep.pack(d, base, origin)
	return n, nil
}

// Unpack unpacks count elements from the packed src into dst, whose origin
// is dst[origin], and returns the number of stream bytes consumed. src must
// hold PackedSize(count) bytes and every byte the type map writes must lie
// inside dst; otherwise Unpack returns an error wrapping ErrBuffer and
// writes nothing.
func (c *Committed) Unpack(dst []byte, origin int, src []byte, count int) (int, error) {
	n, err := c.PackedSize(count)
	if err != nil {
		return 0, err
	}
	if err := c.checkBuf("destination", dst, origin, count); err != nil {
		return 0, err
	}
	if len(src) < n {
		return 0, fmt.Errorf("%w: unpacking %d bytes from a %d-byte source", ErrBuffer, n, len(src))
	}
	if n == 0 {
		return 0, nil
	}
	base := unsafe.Pointer(unsafe.SliceData(dst))
	s := unsafe.Pointer(unsafe.SliceData(src))
	r := c.root
	if r.kind == kBlock && r.blen == c.extent {
		Memcpy(dst[origin+r.base:], src[:n])
		return n, nil
	}
	var w node
	rep := repInto(&w, count, c.extent, c.root)
	rep.unpack(base, origin, s)
	return n, nil
}
