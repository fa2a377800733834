package report

import (
	"math"
	"testing"
)

// A synthetic sweep with known crossovers: every one must be found, with
// the right order and the interpolated point.
func TestCrossoversOnASyntheticSweep(t *testing.T) {
	xs := []float64{0, 2, 4, 6, 8, 10}
	line := func(name string, f func(x float64) float64) Series {
		s := Series{Name: name, X: xs}
		for _, x := range xs {
			s.Y = append(s.Y, f(x))
		}
		return s
	}
	series := []Series{
		line("rising", func(x float64) float64 { return x }),
		line("falling", func(x float64) float64 { return 10 - x }),
		line("flat", func(float64) float64 { return 20 }),
		// x²/4 - 2x + 4.5 = (x-2)(x-7)/4 + 1: below "rising" between the
		// roots of x²/4 - 3x + 4.5, i.e. 6 ∓ √18 ≈ 1.76 and 10.24 (out of
		// range), so one crossover with rising between 0 and 2.
		line("bowl", func(x float64) float64 { return x*x/4 - 2*x + 4.5 }),
	}
	got := Crossovers(&Plot{Series: series})
	// Above is the series above at X0 and below at X1. rising - falling =
	// 2x - 10: -2 at 4, +2 at 6, zero at 5 (falling becomes the lower one).
	// rising - bowl = -x²/4 + 3x - 4.5: -4.5 at 0, +0.5 at 2. falling - bowl
	// = -x²/4 + x + 5.5: +2.5 at 6, -2.5 at 8, zero at 7.
	want := []Crossover{
		{Above: "falling", Below: "rising", X0: 4, X1: 6, X: 5},
		{Above: "bowl", Below: "rising", X0: 0, X1: 2, X: 2 * 4.5 / 5},
		{Above: "falling", Below: "bowl", X0: 6, X1: 8, X: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d crossovers %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Above != w.Above || g.Below != w.Below || g.X0 != w.X0 || g.X1 != w.X1 || math.Abs(g.X-w.X) > 1e-12 {
			t.Errorf("crossover %d: %+v, want %+v", i, g, w)
		}
	}
	tab := CrossoverTable("crossovers", "x", "lower", series)
	if len(tab.Rows) != 3 || tab.Rows[0][0] != "falling" || tab.Rows[0][1] != "rising" || tab.Rows[0][4] != 5.0 {
		t.Errorf("table rows %v: want falling becoming lower than rising at 5 first", tab.Rows)
	}
}

// The table lists lasting crossovers only: a pair that crosses, crosses
// back and crosses again has one row, its last crossing.
func TestCrossoverTableListsLastingCrossovers(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	tab := CrossoverTable("crossovers", "nodes", "faster", []Series{
		{Name: "A", X: x, Y: []float64{5, 1, 5, 1}},
		{Name: "B", X: x, Y: []float64{3, 3, 3, 3}},
	})
	if len(tab.Rows) != 1 || tab.Rows[0][2] != 3.0 || tab.Rows[0][3] != 4.0 {
		t.Errorf("rows %v, want one: A becoming faster than B between 3 and 4", tab.Rows)
	}
}
