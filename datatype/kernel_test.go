package datatype

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// wideLens are block lengths around the edges of the wide strided kernels:
// the 32- and 64-byte steps, the overlapping tail, and both ends of
// [wideMin, wideMax].
var wideLens = []int{31, 32, 33, 40, 47, 48, 63, 64, 65, 95, 96, 100, 127, 128, 129, 200,
	255, 256, 257, 511, 1000, 1023, 1024, 1025, 2048}

// TestWideKernels checks vectors of long blocks — disjoint, overlapping
// and with negative strides, alone and repeated — against the oracle.
func TestWideKernels(t *testing.T) {
	for _, bl := range wideLens {
		for _, stride := range []int{bl, bl + 8, 2 * bl, bl/2 + 1, -(bl + 3)} {
			for _, text := range []string{
				fmt.Sprintf("hvector(7,1,%d)<contig(%d)<byte>>", stride, bl),
				fmt.Sprintf("contig(3)<resized(0,%d)<hvector(5,1,%d)<contig(%d)<byte>>>>", 5*abs(stride)+bl+16, stride, bl),
				fmt.Sprintf("struct(2;1,1;0,%d;contig(%d)<byte>,int32)", bl+5, bl),
			} {
				ty := MustParse(text)
				for count := 1; count <= 3; count += 2 {
					checkOracle(t, ty, count, plan{cuts: []int{5, bl + 3, 3 * bl}, order: []int{2, 0, 3, 1}, interval: bl + 7})
				}
			}
		}
	}
}

// TestWideKernelBounds runs the strided kernels directly and checks that
// no byte outside the blocks changes, on either side.
func TestWideKernelBounds(t *testing.T) {
	const guard = 64
	for _, bl := range wideLens {
		for _, count := range []int{0, 1, 2, 5} {
			stride := bl + 24
			n := 2*guard + count*stride
			src, dst := fill(n), make([]byte, n)
			want := make([]byte, n)
			for i := range count {
				copy(want[guard+i*stride:guard+i*stride+bl], src[guard+i*bl:guard+(i+1)*bl])
			}
			d := unsafe.Pointer(unsafe.SliceData(dst))
			s := unsafe.Pointer(unsafe.SliceData(src))
			strided(add(d, guard), stride, add(s, guard), bl, count, bl)
			if !bytes.Equal(dst, want) {
				t.Fatalf("blen %d count %d: scatter wrote outside its blocks or copied wrong", bl, count)
			}
			clear(dst)
			clear(want)
			for i := range count {
				copy(want[guard+i*bl:guard+(i+1)*bl], src[guard+i*stride:guard+i*stride+bl])
			}
			vecPack(add(d, guard), add(s, guard), count, bl, stride)
			if !bytes.Equal(dst, want) {
				t.Fatalf("blen %d count %d: gather wrote outside its blocks or copied wrong", bl, count)
			}
		}
	}
}

// TestTransposeTypesAgainstOracle: random column types — the FFT2D
// receive type contig(C)<resized(0,L)<hvector(R,1,S)<contig(L)<byte>>>>
// with element lengths around the kernels' 4, 8, 16 and 32 bytes, column
// counts that do and do not fill groups of four, fewer and more rows than
// the assembly kernel prefetches ahead and strides of both signs, some too
// short to be a transpose — equal the naive interpreter on every path.
func TestTransposeTypesAgainstOracle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l := rapid.SampledFrom([]int{4, 8, 12, 16, 32}).Draw(rt, "elem")
		cols := rapid.IntRange(1, 13).Draw(rt, "cols")
		rows := rapid.IntRange(1, 3*transposePrefetchRows+5).Draw(rt, "rows")
		stride := cols*l + rapid.IntRange(-l, 3*l).Draw(rt, "gap")
		if rapid.Bool().Draw(rt, "negative") {
			stride = -stride
		}
		ty := MustParse(fmt.Sprintf("contig(%d)<resized(0,%d)<hvector(%d,1,%d)<contig(%d)<byte>>>>", cols, l, rows, stride, l))
		count := rapid.IntRange(1, 2).Draw(rt, "count")
		checkOracle(rt, ty, count, drawPlan(rt, count*ty.Size()))
	})
}

// TestTransposeKernelBounds runs the 16-byte transpose through the fast
// path (the assembly kernel where there is one, then the Go kernel for
// the columns left over) and through the Go kernel alone, in both
// directions, and checks that both give the same bytes and that nothing
// outside the elements changes on either side.
func TestTransposeKernelBounds(t *testing.T) {
	const guard = 64
	rapid.Check(t, func(rt *rapid.T) {
		cols := rapid.IntRange(0, 11).Draw(rt, "cols")
		rows := rapid.IntRange(0, 2*transposePrefetchRows+3).Draw(rt, "rows")
		rowStride := cols*16 + 16*rapid.IntRange(0, 3).Draw(rt, "gap")
		if rapid.Bool().Draw(rt, "negative") {
			rowStride = -rowStride
		}
		span := max(0, rows-1) * abs(rowStride)
		origin := guard // row 0 of column 0 in the user buffer
		if rowStride < 0 {
			origin += span
		}
		userLen := 2*guard + span + cols*16
		packedLen := 2*guard + cols*rows*16
		for _, pack := range []bool{true, false} {
			var out [2][2][]byte // [fast, generic][user, packed]
			for k := range out {
				user, packed := fill(userLen), fill(packedLen)
				for i := range packed {
					packed[i] ^= 0x5a // a pattern unlike user's
				}
				u := add(unsafe.Pointer(unsafe.SliceData(user)), origin)
				p := add(unsafe.Pointer(unsafe.SliceData(packed)), guard)
				j := 0
				if k == 0 {
					j = transpose16Wide(u, p, cols, rows, rowStride, pack)
				}
				transposeT[w16](add(u, j*16), add(p, j*rows*16), cols-j, rows, rowStride, pack)
				out[k] = [2][]byte{user, packed}
			}
			if !bytes.Equal(out[0][0], out[1][0]) || !bytes.Equal(out[0][1], out[1][1]) {
				rt.Fatalf("pack=%v cols %d rows %d rowStride %d: fast path differs from the Go kernel", pack, cols, rows, rowStride)
			}
			// The Go kernel touches only the elements; check that too.
			user, packed := out[1][0], out[1][1]
			ref, refp := fill(userLen), fill(packedLen)
			for i := range refp {
				refp[i] ^= 0x5a
			}
			for c := range cols {
				for r := range rows {
					uo, po := origin+r*rowStride+c*16, guard+(c*rows+r)*16
					if pack {
						copy(refp[po:po+16], ref[uo:uo+16])
					} else {
						copy(ref[uo:uo+16], refp[po:po+16])
					}
				}
			}
			if !bytes.Equal(user, ref) || !bytes.Equal(packed, refp) {
				rt.Fatalf("pack=%v cols %d rows %d rowStride %d: wrong bytes or bytes outside the elements changed", pack, cols, rows, rowStride)
			}
		}
	})
}
