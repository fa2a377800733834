package exp

import (
	"math"
	"testing"
)

// TestRoundKeepsWhatItCannotRound checks the tables' rounding: half up to
// its decimals inside int64's range, and a value past it (a ratio against
// a base of tiny energies), NaN or ±Inf kept as it is, never wrapped to
// -9.2e15 through the int64 conversion.
func TestRoundKeepsWhatItCannotRound(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        func(float64) float64
		in, want float64
	}{
		{"round3", round3, 1.2344, 1.234},
		{"round3", round3, 1.2345, 1.235},
		{"round3", round3, 0, 0},
		{"round3", round3, 4.5e12, 4.5e12},
		{"round3", round3, 1e16, 1e16},
		{"round3", round3, 2.9e299, 2.9e299},
		{"round3", round3, -1e17, -1e17},
		{"round3", round3, math.Inf(1), math.Inf(1)},
		{"round3", round3, math.Inf(-1), math.Inf(-1)},
		{"round6", round6, 0.1234564, 0.123456},
		{"round6", round6, 1e13, 1e13},
		{"round6", round6, 1e200, 1e200},
	} {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s(%g) = %g, want %g", c.name, c.in, got, c.want)
		}
	}
	if got := round3(math.NaN()); !math.IsNaN(got) {
		t.Errorf("round3(NaN) = %g, want NaN", got)
	}
}
