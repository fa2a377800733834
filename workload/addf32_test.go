package workload

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// addF32 gives the plain loop's float32 sums bit for bit, for any length
// (the unrolled part and the tail) and any values (NaNs, infinities,
// subnormals, negative zero included).
func TestAddF32MatchesLoop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bits := rapid.SliceOfN(rapid.Uint32(), 0, 70).Draw(t, "d")
		n := len(bits)
		d, s := make([]float32, n), make([]float32, n)
		for i := range n {
			d[i] = math.Float32frombits(bits[i])
			s[i] = math.Float32frombits(rapid.Uint32().Draw(t, "s"))
		}
		want := append([]float32(nil), d...)
		for i := range want {
			want[i] += s[i]
		}
		addF32(d, s)
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(want[i]) {
				t.Fatalf("element %d of %d: %#x, want %#x", i, n, math.Float32bits(d[i]), math.Float32bits(want[i]))
			}
		}
	})
}
