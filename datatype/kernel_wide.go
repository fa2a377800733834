// The kernels below follow one template per width; keep them in step.

package datatype

import "unsafe"

// v16 is moved with one 16-byte SSE load and store; wider blocks are
// sequences of them (an array assignment over 16 bytes would call memmove,
// because source and destination might overlap).
type v16 [16]byte

// strided16 copies count 16-byte blocks from s (sstride apart) to d
// (dstride apart).
func strided16(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		p, q := add(s, so), add(d, do)
		*(*v16)(q) = *(*v16)(p)
		so += sstride
		do += dstride
	}
}

// strided24 copies count 24-byte blocks from s (sstride apart) to d
// (dstride apart).
func strided24(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		p, q := add(s, so), add(d, do)
		*(*v16)(q) = *(*v16)(p)
		*(*uint64)(add(q, 16)) = *(*uint64)(add(p, 16))
		so += sstride
		do += dstride
	}
}

// strided32 copies count 32-byte blocks from s (sstride apart) to d
// (dstride apart).
func strided32(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		p, q := add(s, so), add(d, do)
		*(*v16)(q) = *(*v16)(p)
		*(*v16)(add(q, 16)) = *(*v16)(add(p, 16))
		so += sstride
		do += dstride
	}
}

// strided48 copies count 48-byte blocks from s (sstride apart) to d
// (dstride apart).
func strided48(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		p, q := add(s, so), add(d, do)
		*(*v16)(q) = *(*v16)(p)
		*(*v16)(add(q, 16)) = *(*v16)(add(p, 16))
		*(*v16)(add(q, 32)) = *(*v16)(add(p, 32))
		so += sstride
		do += dstride
	}
}

// strided64 copies count 64-byte blocks from s (sstride apart) to d
// (dstride apart).
func strided64(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count int) {
	for i, so, do := 0, 0, 0; i < count; i++ {
		p, q := add(s, so), add(d, do)
		*(*v16)(q) = *(*v16)(p)
		*(*v16)(add(q, 16)) = *(*v16)(add(p, 16))
		*(*v16)(add(q, 32)) = *(*v16)(add(p, 32))
		*(*v16)(add(q, 48)) = *(*v16)(add(p, 48))
		so += sstride
		do += dstride
	}
}

// idxPack16 gathers 16-byte blocks at base + so + offs[i] into d.
func idxPack16(d, base unsafe.Pointer, so int, offs []int) {
	for i, o := range offs {
		p, q := add(base, so+o), add(d, i*16)
		*(*v16)(q) = *(*v16)(p)
	}
}

// idxUnpack16 scatters 16-byte blocks from s to base + do + offs[i].
func idxUnpack16(base unsafe.Pointer, do int, s unsafe.Pointer, offs []int) {
	for i, o := range offs {
		p, q := add(s, i*16), add(base, do+o)
		*(*v16)(q) = *(*v16)(p)
	}
}

// idxPack24 gathers 24-byte blocks at base + so + offs[i] into d.
func idxPack24(d, base unsafe.Pointer, so int, offs []int) {
	for i, o := range offs {
		p, q := add(base, so+o), add(d, i*24)
		*(*v16)(q) = *(*v16)(p)
		*(*uint64)(add(q, 16)) = *(*uint64)(add(p, 16))
	}
}

// idxUnpack24 scatters 24-byte blocks from s to base + do + offs[i].
func idxUnpack24(base unsafe.Pointer, do int, s unsafe.Pointer, offs []int) {
	for i, o := range offs {
		p, q := add(s, i*24), add(base, do+o)
		*(*v16)(q) = *(*v16)(p)
		*(*uint64)(add(q, 16)) = *(*uint64)(add(p, 16))
	}
}

// idxPack32 gathers 32-byte blocks at base + so + offs[i] into d.
func idxPack32(d, base unsafe.Pointer, so int, offs []int) {
	for i, o := range offs {
		p, q := add(base, so+o), add(d, i*32)
		*(*v16)(q) = *(*v16)(p)
		*(*v16)(add(q, 16)) = *(*v16)(add(p, 16))
	}
}

// idxUnpack32 scatters 32-byte blocks from s to base + do + offs[i].
func idxUnpack32(base unsafe.Pointer, do int, s unsafe.Pointer, offs []int) {
	for i, o := range offs {
		p, q := add(s, i*32), add(base, do+o)
		*(*v16)(q) = *(*v16)(p)
		*(*v16)(add(q, 16)) = *(*v16)(add(p, 16))
	}
}
