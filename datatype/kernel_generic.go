//go:build !amd64 || race || purego

package datatype

import "unsafe"

// stridedWide reports false: without the amd64 assembly kernel (or under
// the race detector, which cannot see memory accessed by assembly), wide
// strided blocks take the Go kernels.
func stridedWide(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int) bool {
	return false
}

// transpose16Wide moves no columns without the amd64 assembly kernel.
func transpose16Wide(user, packed unsafe.Pointer, cols, rows, rowStride int, pack bool) int {
	return 0
}

// memcpyTemporal reports false without the amd64 assembly kernel: Memcpy
// then uses the runtime's copy.
func memcpyTemporal(dst, src []byte) bool { return false }

// hasAVX is false: there are no assembly kernels in this build.
const hasAVX = false
