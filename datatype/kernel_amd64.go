//go:build amd64 && !race && !purego

package datatype

import "unsafe"

// hasAVX is set once, at package initialization, from CPUID; it is never
// written afterwards.
var hasAVX = cpuAVX()

// cpuAVX reports whether AVX (256-bit) moves may be used; see kernel_amd64.s.
func cpuAVX() bool

// stridedAVX copies count blocks of blen ≥ 32 bytes from s (sstride apart)
// to d (dstride apart) with 32-byte AVX moves; see kernel_amd64.s.
//
//go:noescape
func stridedAVX(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int)

// stridedWide copies count blocks of blen bytes from s (sstride apart) to d
// (dstride apart) with the assembly kernel when the CPU has AVX and the
// blocks are in its range, and reports whether it did. Go cannot express
// 32-byte moves, and its code for unrolled 16-byte moves spends more
// instructions on addresses than on data (see docs/ddt.md).
func stridedWide(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int) bool {
	if !hasAVX || blen < wideMin || blen > wideMax {
		return false
	}
	stridedAVX(d, dstride, s, sstride, count, blen)
	return true
}

// transpose16AVX moves groups×4 columns of rows 16-byte elements between
// the user buffer (rowStride bytes between rows) and the packed stream,
// prefetching pf rows ahead; see kernel_amd64.s.
//
//go:noescape
func transpose16AVX(user, packed unsafe.Pointer, groups, rows, rowStride, pf int, pack bool)

// transpose16Wide moves the first columns of a transpose of 16-byte
// elements with the assembly kernel, four at a time, and returns how many
// it moved (0 without AVX); transposeT does the rest.
func transpose16Wide(user, packed unsafe.Pointer, cols, rows, rowStride int, pack bool) int {
	if !hasAVX || cols < 4 {
		return 0
	}
	g := cols / 4
	transpose16AVX(user, packed, g, rows, rowStride, transposePrefetchRows, pack)
	return 4 * g
}

// memcpyAVX copies n ≥ 256 bytes from s to d, which do not overlap, with
// temporal stores; see kernel_amd64.s.
//
//go:noescape
func memcpyAVX(d, s unsafe.Pointer, n int)

// memcpyTemporal copies len(src) ≥ 256 bytes into dst (at least as long,
// not overlapping) with ordinary stores when the CPU has AVX, and reports
// whether it did.
func memcpyTemporal(dst, src []byte) bool {
	if !hasAVX || len(src) < 256 {
		return false
	}
	memcpyAVX(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), len(src))
	return true
}
