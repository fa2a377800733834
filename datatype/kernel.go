package datatype

import "unsafe"

// The copy kernels below work on raw pointers. Every caller has checked,
// before the first kernel runs, that all source and destination bytes of the
// whole operation lie inside the Go slices the pointers come from (see
// Committed.checkBuf and node.lo/hi), so no kernel can touch memory outside
// them. They also never form a pointer outside those slices (which the
// garbage collector may reject): the user-buffer side is passed as the slice
// data pointer plus an int offset, and addresses are formed only for bytes
// that are accessed.

// Fixed-width chunks up to 32 bytes: structs of at most four scalars,
// which the compiler keeps in registers (arrays would be staged on the
// stack or copied by memmove). 48 and 64-byte blocks move as two of them.
type (
	w12 struct{ a, b, c uint32 }
	w16 struct{ a, b uint64 }
	w24 struct{ a, b, c uint64 }
	w32 struct{ a, b, c, d uint64 }
)

func add(p unsafe.Pointer, n int) unsafe.Pointer { return unsafe.Add(p, n) }

// copyBlk is copySmall with the commonest block sizes inlined at the call
// site, for loops over blocks of varying length.
func copyBlk(d, s unsafe.Pointer, n int) {
	switch n {
	case 8:
		*(*uint64)(d) = *(*uint64)(s)
	case 4:
		*(*uint32)(d) = *(*uint32)(s)
	default:
		copySmall(d, s, n)
	}
}

// move copies n bytes from s to d, from 1 MiB on with Memcpy, so that a
// large block is stored the way glibc's memcpy stores it (through the
// caches) rather than with the runtime's non-temporal stores.
func move(d, s unsafe.Pointer, n int) {
	if n >= runtimeNTMin {
		Memcpy(unsafe.Slice((*byte)(d), n), unsafe.Slice((*byte)(s), n))
		return
	}
	copy(unsafe.Slice((*byte)(d), n), unsafe.Slice((*byte)(s), n))
}

// copySmall copies n bytes from s to d for any n; short copies avoid the
// memmove call by moving two possibly overlapping fixed-width words.
func copySmall(d, s unsafe.Pointer, n int) {
	switch {
	case n >= 64:
		move(d, s, n)
	case n >= 32:
		a, b := *(*w32)(s), *(*w32)(add(s, n-32))
		*(*w32)(d), *(*w32)(add(d, n-32)) = a, b
	case n >= 16:
		a, b := *(*w16)(s), *(*w16)(add(s, n-16))
		*(*w16)(d), *(*w16)(add(d, n-16)) = a, b
	case n >= 8:
		a, b := *(*uint64)(s), *(*uint64)(add(s, n-8))
		*(*uint64)(d), *(*uint64)(add(d, n-8)) = a, b
	case n >= 4:
		a, b := *(*uint32)(s), *(*uint32)(add(s, n-4))
		*(*uint32)(d), *(*uint32)(add(d, n-4)) = a, b
	case n >= 2:
		a, b := *(*uint16)(s), *(*uint16)(add(s, n-2))
		*(*uint16)(d), *(*uint16)(add(d, n-2)) = a, b
	case n == 1:
		*(*byte)(d) = *(*byte)(s)
	}
}

// vecPackT gathers count blocks of sizeof(T) bytes, stride bytes apart,
// starting at s, into the contiguous d. T must be register-sized.
func vecPackT[T any](d, s unsafe.Pointer, count, stride int) {
	var z T
	w := int(unsafe.Sizeof(z))
	s2, s3, s4 := 2*stride, 3*stride, 4*stride
	i, so, do := 0, 0, 0
	for ; i+4 <= count; i += 4 {
		a := *(*T)(add(s, so))
		b := *(*T)(add(s, so+stride))
		c := *(*T)(add(s, so+s2))
		e := *(*T)(add(s, so+s3))
		*(*T)(add(d, do)) = a
		*(*T)(add(d, do+w)) = b
		*(*T)(add(d, do+2*w)) = c
		*(*T)(add(d, do+3*w)) = e
		so += s4
		do += 4 * w
	}
	for ; i < count; i++ {
		*(*T)(add(d, do)) = *(*T)(add(s, so))
		so += stride
		do += w
	}
}

// vecUnpackT scatters count blocks of sizeof(T) bytes from the contiguous s
// to d, stride bytes apart. T must be register-sized.
func vecUnpackT[T any](d, s unsafe.Pointer, count, stride int) {
	var z T
	w := int(unsafe.Sizeof(z))
	s2, s3, s4 := 2*stride, 3*stride, 4*stride
	i, so, do := 0, 0, 0
	for ; i+4 <= count; i += 4 {
		a := *(*T)(add(s, so))
		b := *(*T)(add(s, so+w))
		c := *(*T)(add(s, so+2*w))
		e := *(*T)(add(s, so+3*w))
		*(*T)(add(d, do)) = a
		*(*T)(add(d, do+stride)) = b
		*(*T)(add(d, do+s2)) = c
		*(*T)(add(d, do+s3)) = e
		do += s4
		so += 4 * w
	}
	for ; i < count; i++ {
		*(*T)(add(d, do)) = *(*T)(add(s, so))
		do += stride
		so += w
	}
}

// vecPack4 gathers 4-byte blocks with a positive stride ≥ 8, combining two
// blocks per 8-byte store. It loads 8 bytes at each block start; the extra 4
// bytes lie before the next block's end, so only blocks followed by another
// block are loaded that way and the last one is copied alone.
func vecPack4(d, s unsafe.Pointer, count, stride int) {
	i := 0
	if stride == 8 {
		for ; i+9 <= count; i += 8 {
			p := add(s, i*8)
			a := *(*uint64)(p)
			b := *(*uint64)(add(p, 8))
			c := *(*uint64)(add(p, 16))
			e := *(*uint64)(add(p, 24))
			f := *(*uint64)(add(p, 32))
			g := *(*uint64)(add(p, 40))
			h := *(*uint64)(add(p, 48))
			k := *(*uint64)(add(p, 56))
			q := add(d, i*4)
			*(*uint64)(q) = a&0xffffffff | b<<32
			*(*uint64)(add(q, 8)) = c&0xffffffff | e<<32
			*(*uint64)(add(q, 16)) = f&0xffffffff | g<<32
			*(*uint64)(add(q, 24)) = h&0xffffffff | k<<32
		}
	} else {
		for ; i+5 <= count; i += 4 {
			a := *(*uint64)(add(s, i*stride))
			b := *(*uint64)(add(s, (i+1)*stride))
			c := *(*uint64)(add(s, (i+2)*stride))
			e := *(*uint64)(add(s, (i+3)*stride))
			*(*uint64)(add(d, i*4)) = a&0xffffffff | b<<32
			*(*uint64)(add(d, i*4+8)) = c&0xffffffff | e<<32
		}
	}
	for ; i < count; i++ {
		*(*uint32)(add(d, i*4)) = *(*uint32)(add(s, i*stride))
	}
}

// Blocks of wideMin to wideMax bytes go to the assembly kernel where there
// is one (stridedWide); longer blocks are one memmove each, which then
// costs less than the block.
const (
	wideMin = 32
	wideMax = 1024
)

// copyLong copies count blocks of blen > 64 bytes from s (sstride apart) to
// d (dstride apart), one memmove each.
func copyLong(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		move(add(d, do), add(s, so), blen)
		so += sstride
		do += dstride
	}
}

// vecPack gathers count blocks of blen bytes, stride bytes apart.
func vecPack(d, s unsafe.Pointer, count, blen, stride int) {
	if stridedWide(d, blen, s, stride, count, blen) {
		return
	}
	switch blen {
	case 1:
		vecPackT[byte](d, s, count, stride)
	case 2:
		vecPackT[uint16](d, s, count, stride)
	case 4:
		if stride >= 8 {
			vecPack4(d, s, count, stride)
		} else {
			vecPackT[uint32](d, s, count, stride)
		}
	case 8:
		vecPackT[uint64](d, s, count, stride)
	case 12:
		vecPackT[w12](d, s, count, stride)
	case 16:
		strided16(d, 16, s, stride, count)
	case 24:
		strided24(d, 24, s, stride, count)
	case 32:
		strided32(d, 32, s, stride, count)
	case 48:
		strided48(d, 48, s, stride, count)
	case 64:
		strided64(d, 64, s, stride, count)
	default:
		if blen > 64 {
			copyLong(d, blen, s, stride, count, blen)
			return
		}
		for i := range count {
			copySmall(add(d, i*blen), add(s, i*stride), blen)
		}
	}
}

// vecUnpack scatters count blocks of blen bytes, stride bytes apart.
func vecUnpack(d, s unsafe.Pointer, count, blen, stride int) {
	if stridedWide(d, stride, s, blen, count, blen) {
		return
	}
	switch blen {
	case 1:
		vecUnpackT[byte](d, s, count, stride)
	case 2:
		vecUnpackT[uint16](d, s, count, stride)
	case 4:
		vecUnpackT[uint32](d, s, count, stride)
	case 8:
		vecUnpackT[uint64](d, s, count, stride)
	case 12:
		vecUnpackT[w12](d, s, count, stride)
	case 16:
		strided16(d, stride, s, 16, count)
	case 24:
		strided24(d, stride, s, 24, count)
	case 32:
		strided32(d, stride, s, 32, count)
	case 48:
		strided48(d, stride, s, 48, count)
	case 64:
		strided64(d, stride, s, 64, count)
	default:
		if blen > 64 {
			copyLong(d, stride, s, blen, count, blen)
			return
		}
		for i := range count {
			copySmall(add(d, i*stride), add(s, i*blen), blen)
		}
	}
}

// idxPackT gathers blocks of sizeof(T) bytes at base + so + offs[i] into d.
func idxPackT[T any](d, base unsafe.Pointer, so int, offs []int) {
	var z T
	w := int(unsafe.Sizeof(z))
	i := 0
	for ; i+4 <= len(offs); i += 4 {
		o := offs[i : i+4 : i+4]
		a := *(*T)(add(base, so+o[0]))
		b := *(*T)(add(base, so+o[1]))
		c := *(*T)(add(base, so+o[2]))
		e := *(*T)(add(base, so+o[3]))
		*(*T)(add(d, i*w)) = a
		*(*T)(add(d, (i+1)*w)) = b
		*(*T)(add(d, (i+2)*w)) = c
		*(*T)(add(d, (i+3)*w)) = e
	}
	for ; i < len(offs); i++ {
		*(*T)(add(d, i*w)) = *(*T)(add(base, so+offs[i]))
	}
}

// idxUnpackT scatters blocks of sizeof(T) bytes from s to base + do + offs[i].
func idxUnpackT[T any](base unsafe.Pointer, do int, s unsafe.Pointer, offs []int) {
	var z T
	w := int(unsafe.Sizeof(z))
	i := 0
	for ; i+4 <= len(offs); i += 4 {
		o := offs[i : i+4 : i+4]
		a := *(*T)(add(s, i*w))
		b := *(*T)(add(s, (i+1)*w))
		c := *(*T)(add(s, (i+2)*w))
		e := *(*T)(add(s, (i+3)*w))
		*(*T)(add(base, do+o[0])) = a
		*(*T)(add(base, do+o[1])) = b
		*(*T)(add(base, do+o[2])) = c
		*(*T)(add(base, do+o[3])) = e
	}
	for ; i < len(offs); i++ {
		*(*T)(add(base, do+offs[i])) = *(*T)(add(s, i*w))
	}
}

// idxPack4 gathers 4-byte blocks, storing them two at a time.
func idxPack4(d, base unsafe.Pointer, so int, offs []int) {
	i := 0
	for ; i+4 <= len(offs); i += 4 {
		o := offs[i : i+4 : i+4]
		a := *(*uint32)(add(base, so+o[0]))
		b := *(*uint32)(add(base, so+o[1]))
		c := *(*uint32)(add(base, so+o[2]))
		e := *(*uint32)(add(base, so+o[3]))
		*(*uint64)(add(d, i*4)) = uint64(a) | uint64(b)<<32
		*(*uint64)(add(d, i*4+8)) = uint64(c) | uint64(e)<<32
	}
	for ; i < len(offs); i++ {
		*(*uint32)(add(d, i*4)) = *(*uint32)(add(base, so+offs[i]))
	}
}

// idxPack gathers blocks of blen bytes at base + so + offs[i].
func idxPack(d, base unsafe.Pointer, so int, offs []int, blen int) {
	switch blen {
	case 4:
		idxPack4(d, base, so, offs)
	case 8:
		idxPackT[uint64](d, base, so, offs)
	case 12:
		idxPackT[w12](d, base, so, offs)
	case 16:
		idxPack16(d, base, so, offs)
	case 24:
		idxPack24(d, base, so, offs)
	case 32:
		idxPack32(d, base, so, offs)
	default:
		for i, o := range offs {
			copySmall(add(d, i*blen), add(base, so+o), blen)
		}
	}
}

// idxUnpack scatters blocks of blen bytes to base + do + offs[i].
func idxUnpack(base unsafe.Pointer, do int, s unsafe.Pointer, offs []int, blen int) {
	switch blen {
	case 4:
		idxUnpackT[uint32](base, do, s, offs)
	case 8:
		idxUnpackT[uint64](base, do, s, offs)
	case 12:
		idxUnpackT[w12](base, do, s, offs)
	case 16:
		idxUnpack16(base, do, s, offs)
	case 24:
		idxUnpack24(base, do, s, offs)
	case 32:
		idxUnpack32(base, do, s, offs)
	default:
		for i, o := range offs {
			copySmall(add(base, do+o), add(s, i*blen), blen)
		}
	}
}

// stridedT copies count chunks of sizeof(T) bytes from s (sstride apart)
// to d (dstride apart).
func stridedT[T any](d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		*(*T)(add(d, do)) = *(*T)(add(s, so))
		so += sstride
		do += dstride
	}
}

// strided copies count blocks of blen bytes from s (sstride apart) to d
// (dstride apart).
func strided(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int) {
	if stridedWide(d, dstride, s, sstride, count, blen) {
		return
	}
	switch blen {
	case 1:
		stridedT[byte](d, dstride, s, sstride, count)
	case 2:
		stridedT[uint16](d, dstride, s, sstride, count)
	case 4:
		stridedT[uint32](d, dstride, s, sstride, count)
	case 8:
		stridedT[uint64](d, dstride, s, sstride, count)
	case 12:
		stridedT[w12](d, dstride, s, sstride, count)
	case 16:
		strided16(d, dstride, s, sstride, count)
	case 24:
		strided24(d, dstride, s, sstride, count)
	case 32:
		strided32(d, dstride, s, sstride, count)
	case 48:
		strided48(d, dstride, s, sstride, count)
	case 64:
		strided64(d, dstride, s, sstride, count)
	default:
		if blen > 64 {
			copyLong(d, dstride, s, sstride, count, blen)
			return
		}
		for i := range count {
			copySmall(add(d, i*dstride), add(s, i*sstride), blen)
		}
	}
}

// tileElems is how many repetitions tiled kernels handle per pass.
const tileElems = 128

// tiled runs a repetition of a short block list (kListB, or kIdxB) block by
// block over tiles of tileElems repetitions: each pass is one strided copy
// with a fixed block length, and a tile's lines stay in L1 between passes.
// user points at the origin of repetition 0 (child base included).
func tiled(n *node, user, packed unsafe.Pointer, pack bool) {
	c := n.child
	cs := c.size
	for t0 := 0; t0 < n.count; t0 += tileElems {
		tc := min(tileElems, n.count-t0)
		pos := 0
		for k, o := range c.offs {
			l := c.blen
			if c.kind == kListB {
				l = c.lens[k]
			}
			u := add(user, t0*n.stride+o)
			p := add(packed, t0*cs+pos)
			if pack {
				strided(p, cs, u, n.stride, tc, l)
			} else {
				strided(u, n.stride, p, cs, tc, l)
			}
			pos += l
		}
	}
}

// transposeT visits a transpose node — cols adjacent columns of rows
// blocks of sizeof(T) bytes, rowStride apart — tile by tile (64 bytes of a
// row at a time) instead of column by column, so each cache line of the
// user buffer is touched once per tile rather than once per column. user
// points at row 0 of column 0; the packed stream holds the columns one
// after the other. pack selects the direction.
func transposeT[T any](user, packed unsafe.Pointer, cols, rows, rowStride int, pack bool) {
	var z T
	l := int(unsafe.Sizeof(z))
	g := max(1, 64/l)
	colBytes := rows * l
	for j0 := 0; j0 < cols; j0 += g {
		gg := min(g, cols-j0)
		for i := range rows {
			u := add(user, i*rowStride+j0*l)
			p := add(packed, j0*colBytes+i*l)
			if pack {
				for k := range gg {
					*(*T)(add(p, k*colBytes)) = *(*T)(add(u, k*l))
				}
			} else {
				for k := range gg {
					*(*T)(add(u, k*l)) = *(*T)(add(p, k*colBytes))
				}
			}
		}
	}
}

// transposePrefetchRows is how many rows ahead the assembly transpose
// kernel (transpose16AVX on amd64) prefetches:
// on the development machine 0–8 rows ahead ran at 7.5–9 GB/s (p10) on
// the FFT2D receive type and 16–64 rows at 8.8–12.5, 32–64 best and within
// noise of each other (docs/ddt.md).
const transposePrefetchRows = 32

// transpose runs transposeT for the block length of n's child; it reports
// false if there is no kernel for it.
func transpose(n *node, user, packed unsafe.Pointer, pack bool) bool {
	c := n.child
	switch c.blen {
	case 4:
		transposeT[uint32](user, packed, n.count, c.count, c.stride, pack)
	case 8:
		transposeT[uint64](user, packed, n.count, c.count, c.stride, pack)
	case 16:
		j := transpose16Wide(user, packed, n.count, c.count, c.stride, pack)
		if j < n.count {
			transposeT[w16](add(user, j*16), add(packed, j*c.count*16), n.count-j, c.count, c.stride, pack)
		}
	case 32:
		transposeT[w32](user, packed, n.count, c.count, c.stride, pack)
	default:
		return false
	}
	return true
}

// pack copies one instance of n, whose origin is base + so, to d; it
// writes n.size bytes.
func (n *node) pack(d, base unsafe.Pointer, so int) {
	so += n.base
	switch n.kind {
	case kBlock:
		copySmall(d, add(base, so), n.blen)
	case kVecB:
		vecPack(d, add(base, so), n.count, n.blen, n.stride)
	case kIdxB:
		idxPack(d, base, so, n.offs, n.blen)
	case kListB:
		lens := n.lens[:len(n.offs)]
		w := 0
		for i, o := range n.offs {
			copyBlk(add(d, w), add(base, so+o), lens[i])
			w += lens[i]
		}
	case kRep:
		c := n.child
		cs := c.size
		if n.tr && transpose(n, add(base, so+c.base), d, true) {
			return
		}
		if n.tile != tileNo {
			tiled(n, add(base, so+c.base), d, true)
			return
		}
		switch c.kind {
		case kVecB:
			for i := range n.count {
				vecPack(add(d, i*cs), add(base, so+i*n.stride+c.base), c.count, c.blen, c.stride)
			}
			return
		case kIdxB:
			for i := range n.count {
				idxPack(add(d, i*cs), base, so+i*n.stride+c.base, c.offs, c.blen)
			}
			return
		case kListB:
			lens := c.lens[:len(c.offs)]
			w := 0
			for i := range n.count {
				o0 := so + i*n.stride + c.base
				for k, o := range c.offs {
					copyBlk(add(d, w), add(base, o0+o), lens[k])
					w += lens[k]
				}
			}
			return
		}
		for i := range n.count {
			c.pack(add(d, i*cs), base, so+i*n.stride)
		}
	case kIdx:
		c := n.child
		for i, o := range n.offs {
			c.pack(add(d, i*c.size), base, so+o)
		}
	case kList:
		kids := n.kids[:len(n.offs)]
		cum := n.cum[:len(n.offs)]
		for i, o := range n.offs {
			kids[i].pack(add(d, cum[i]), base, so+o)
		}
	}
}

// unpack copies one instance of n from the packed s to the buffer whose
// origin is base + do.
func (n *node) unpack(base unsafe.Pointer, do int, s unsafe.Pointer) {
	do += n.base
	switch n.kind {
	case kBlock:
		copySmall(add(base, do), s, n.blen)
	case kVecB:
		vecUnpack(add(base, do), s, n.count, n.blen, n.stride)
	case kIdxB:
		idxUnpack(base, do, s, n.offs, n.blen)
	case kListB:
		lens := n.lens[:len(n.offs)]
		r := 0
		for i, o := range n.offs {
			copyBlk(add(base, do+o), add(s, r), lens[i])
			r += lens[i]
		}
	case kRep:
		c := n.child
		cs := c.size
		if n.tr && transpose(n, add(base, do+c.base), s, false) {
			return
		}
		if n.tile == tileAny {
			tiled(n, add(base, do+c.base), s, false)
			return
		}
		switch c.kind {
		case kVecB:
			for i := range n.count {
				vecUnpack(add(base, do+i*n.stride+c.base), add(s, i*cs), c.count, c.blen, c.stride)
			}
			return
		case kIdxB:
			for i := range n.count {
				idxUnpack(base, do+i*n.stride+c.base, add(s, i*cs), c.offs, c.blen)
			}
			return
		case kListB:
			lens := c.lens[:len(c.offs)]
			r := 0
			for i := range n.count {
				o0 := do + i*n.stride + c.base
				for k, o := range c.offs {
					copyBlk(add(base, o0+o), add(s, r), lens[k])
					r += lens[k]
				}
			}
			return
		}
		for i := range n.count {
			c.unpack(base, do+i*n.stride, add(s, i*cs))
		}
	case kIdx:
		c := n.child
		for i, o := range n.offs {
			c.unpack(base, do+o, add(s, i*c.size))
		}
	case kList:
		kids := n.kids[:len(n.offs)]
		cum := n.cum[:len(n.offs)]
		for i, o := range n.offs {
			kids[i].unpack(base, do+o, add(s, cum[i]))
		}
	}
}
