package report

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

// With two or three whole-number x values (node counts), the x ticks are
// whole numbers only — never 2.5 nodes — and label every data value when
// the range is short; there are still at least four of them.
func TestFewWholeXValuesGetWholeTicks(t *testing.T) {
	for _, tc := range []struct {
		xs      []float64
		labeled []float64 // data values that must carry a tick
	}{
		{[]float64{2, 4}, []float64{2, 4}},
		{[]float64{2, 3}, []float64{2, 3}},
		{[]float64{1, 2, 4}, []float64{1, 2, 4}},
		{[]float64{0, 1}, []float64{0, 1}},
		{[]float64{-3, 2}, []float64{-3, 2}},
		{[]float64{2, 64}, nil},
		{[]float64{4096, 65536, 1 << 20}, nil},
	} {
		p := &Plot{Series: []Series{{Name: "a", X: tc.xs, Y: []float64{1, 2, 3}[:len(tc.xs)]}}}
		lay := PlotLayout(p)
		var vals []float64
		for _, tk := range lay.XTicks {
			if tk.Value != math.Trunc(tk.Value) {
				t.Errorf("x %v: tick %v is not a whole number", tc.xs, tk.Value)
			}
			if tk.Value < lay.XMin || tk.Value > lay.XMax {
				t.Errorf("x %v: tick %v outside the axis %v..%v", tc.xs, tk.Value, lay.XMin, lay.XMax)
			}
			vals = append(vals, tk.Value)
		}
		if len(vals) < 4 {
			t.Errorf("x %v: ticks %v, want at least four", tc.xs, vals)
		}
		for _, x := range tc.labeled {
			if !slices.Contains(vals, x) {
				t.Errorf("x %v: no tick at data value %v (ticks %v)", tc.xs, x, vals)
			}
		}
		if slices.Min(tc.xs) >= 0 && vals[0] < 0 {
			t.Errorf("x %v: negative tick %v", tc.xs, vals[0])
		}
	}
	// Fractional x values keep the fractional ticks.
	lay := PlotLayout(&Plot{Series: []Series{{Name: "a", X: []float64{0.5, 1.5}, Y: []float64{1, 2}}}})
	if slices.IndexFunc(lay.XTicks, func(tk plot.Tick) bool { return tk.Value != math.Trunc(tk.Value) }) < 0 {
		t.Errorf("x 0.5, 1.5: ticks %v, want fractional ones", lay.XTicks)
	}
}
