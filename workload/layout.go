package workload

import (
	"bytes"
	"unsafe"
)

// ringLayout places an allreduce vector of elems float32 values, split into
// n ring chunks (the last takes the remainder) of w slices each, in one
// region per node. Every (chunk, slice) has a subslot: the slice's floats,
// padding to 8 bytes, then an 8-byte sequence word that travels with the
// data; the receiver polls the word it expects (the trailing-flag protocol
// of the dissertation's GPU-TN chapter, written last by in-order DMA). The reduce-scatter
// receives land in per-step receive slots after the data; allgather
// receives land in place.
type ringLayout struct {
	n, w      int
	elems     int
	chunkOff  []int // element offset of chunk k
	chunkLen  []int
	sliceDim  []sliceDim // chunk k's slice length and remainder (slice)
	dataOff   []uint64   // byte offset of subslot (k, s) at index k*w+s
	recvSlot  uint64     // bytes per receive subslot
	recvBase  uint64
	totalSize uint64
	// Name caches, made before a run starts (Allreduce.Run): a
	// partitioned run's nodes read the layout in parallel.
	flagNames []string // flagName, made on first use
	stepNames []string // stepName, made on first use
}

func pad8(b uint64) uint64 { return (b + 7) &^ 7 }

func newRingLayout(elems, n, w int) *ringLayout {
	l := &ringLayout{n: n, w: w, elems: elems}
	base, rem := elems/n, elems%n
	off := 0
	maxSlice := 0
	var pos uint64
	for k := range n {
		size := base
		if k == n-1 {
			size += rem
		}
		l.chunkOff = append(l.chunkOff, off)
		l.chunkLen = append(l.chunkLen, size)
		l.sliceDim = append(l.sliceDim, sliceDim{base: size / w, rem: size % w})
		off += size
		for s := range w {
			_, sl := l.slice(k, s)
			maxSlice = max(maxSlice, sl)
			l.dataOff = append(l.dataOff, pos)
			pos += pad8(uint64(sl)*4) + 8
		}
	}
	l.recvSlot = pad8(uint64(maxSlice)*4) + 8
	l.recvBase = pos
	l.totalSize = pos + uint64(n-1)*uint64(w)*l.recvSlot
	return l
}

// sliceDim is a chunk's slice length (its last slice has rem more
// elements), divided out once: slice runs several times per step and
// slice of every node, and a 64-bit division is tens of cycles.
type sliceDim struct{ base, rem int }

// slice returns the element offset within chunk k and length of slice s.
func (l *ringLayout) slice(k, s int) (off, n int) {
	base, rem := l.sliceDim[k].base, l.sliceDim[k].rem
	off = s * base
	n = base
	if s == l.w-1 {
		n += rem
	}
	return off, n
}

// sub returns the byte offset and data bytes of subslot (k, s).
func (l *ringLayout) sub(k, s int) (uint64, uint64) {
	_, n := l.slice(k, s)
	return l.dataOff[k*l.w+s], uint64(n) * 4
}

// subBytes is the put length of subslot (k, s): data, padding and sequence
// word.
func (l *ringLayout) subBytes(k, s int) uint64 {
	_, n := l.sub(k, s)
	return pad8(n) + 8
}

// recv returns the byte offset of reduce-scatter step st's receive subslot
// for slice s.
func (l *ringLayout) recv(st, s int) uint64 {
	return l.recvBase + uint64(st*l.w+s)*l.recvSlot
}

// mod returns a modulo n in [0, n) for n > 0 (one division: the ring's
// schedule calls it for every put and step).
func mod(a, n int) int {
	r := a % n
	if r < 0 {
		r += n
	}
	return r
}

// f32 views little-endian bytes as float32 values (amd64 and arm64 are
// little-endian, which the simulator's memories assume).
func f32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// inputValue is element j of node r's input: small multiples of 1/8, so
// every partial sum is exact in float32 whatever the summation order. It
// repeats with period inputPeriod in j.
func inputValue(r, j int) float32 { return float32((r*7+j*13)%inputPeriod) / 8 }

// inputPeriod is the period of every input and of their sums.
const inputPeriod = 101

// patternReps is how many periods a pattern holds, so one copy moves up to
// patternReps-1 periods (≈25 KiB) at memmove speed.
const patternReps = 64

// pattern is a periodic float32 sequence v(j), j ≥ 0, of period
// inputPeriod, stored as little-endian bytes for bulk copy and compare.
type pattern struct {
	b []byte
}

func newPattern(v func(j int) float32) *pattern {
	vals := make([]float32, inputPeriod*patternReps)
	for j := range inputPeriod {
		vals[j] = v(j)
	}
	for j := inputPeriod; j < len(vals); j++ {
		vals[j] = vals[j-inputPeriod]
	}
	return &pattern{b: unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), 4*len(vals))}
}

// at returns v(j).
func (p *pattern) at(j int) float32 { return f32(p.b)[j%inputPeriod] }

// chunks calls fn for consecutive pieces of the sequence starting at
// element first, covering n bytes: fn(offset into the n bytes, pattern
// bytes of that piece).
func (p *pattern) chunks(first, n int, fn func(off int, src []byte) bool) {
	maxBytes := 4 * inputPeriod * (patternReps - 1)
	for off := 0; off < n; {
		phase := 4 * ((first + off/4) % inputPeriod)
		k := min(n-off, maxBytes)
		if !fn(off, p.b[phase:phase+k]) {
			return
		}
		off += k
	}
}

// copyTo writes v(first), v(first+1), … into dst.
func (p *pattern) copyTo(dst []byte, first int) {
	p.chunks(first, len(dst), func(off int, src []byte) bool {
		copy(dst[off:], src)
		return true
	})
}

// equal compares got with v(first), …; on a mismatch it returns the index
// j of the first differing element.
func (p *pattern) equal(got []byte, first int) (int, bool) {
	bad := -1
	p.chunks(first, len(got), func(off int, src []byte) bool {
		if bytes.Equal(got[off:off+len(src)], src) {
			return true
		}
		for i := 0; i < len(src); i += 4 {
			if !bytes.Equal(got[off+i:off+i+4], src[i:i+4]) {
				bad = first + (off+i)/4
				break
			}
		}
		return false
	})
	return bad, bad < 0
}
