package datatype

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
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
