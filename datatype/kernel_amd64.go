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
