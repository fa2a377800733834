package report

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

// With two or three whole-number x values (node counts), the x ticks are
// whole numbers only — never 2.5 nodes — and label every data value when
// the range is short; there are still at least four of them, on a linear
// axis and on a log one.
func TestFewWholeXValuesGetWholeTicks(t *testing.T) {
	for _, tc := range []struct {
		xs      []float64
		labeled []float64 // data values that must carry a tick
	}{
		{[]float64{64}, []float64{64}},
		{[]float64{5}, []float64{5}},
		{[]float64{2, 4}, []float64{2, 4}},
		{[]float64{2, 3}, []float64{2, 3}},
		{[]float64{1, 2}, []float64{1, 2}},
		{[]float64{1, 2, 4}, []float64{1, 2, 4}},
		{[]float64{0, 1}, []float64{0, 1}},
		{[]float64{-3, 2}, []float64{-3, 2}},
		{[]float64{2, 64}, nil},
		{[]float64{4096, 65536, 1 << 20}, nil},
	} {
		for _, logX := range []bool{false, true} {
			if logX && slices.Min(tc.xs) <= 0 {
				continue
			}
			checkWholeTicks(t, tc.xs, tc.labeled, logX)
		}
	}
	// Fractional x values keep the fractional ticks.
	lay := PlotLayout(&Plot{Series: []Series{{Name: "a", X: []float64{0.5, 1.5}, Y: []float64{1, 2}}}})
	if slices.IndexFunc(lay.XTicks, func(tk plot.Tick) bool { return tk.Value != math.Trunc(tk.Value) }) < 0 {
		t.Errorf("x 0.5, 1.5: ticks %v, want fractional ones", lay.XTicks)
	}
}

func checkWholeTicks(t *testing.T, xs, labeled []float64, logX bool) {
	t.Helper()
	lay := PlotLayout(&Plot{LogX: logX, Series: []Series{{Name: "a", X: xs, Y: []float64{1, 2, 3}[:len(xs)]}}})
	var vals []float64
	for _, tk := range lay.XTicks {
		if tk.Value != math.Trunc(tk.Value) {
			t.Errorf("x %v (log %v): tick %v is not a whole number", xs, logX, tk.Value)
		}
		if tk.Value < lay.XMin || tk.Value > lay.XMax {
			t.Errorf("x %v (log %v): tick %v outside the axis %v..%v", xs, logX, tk.Value, lay.XMin, lay.XMax)
		}
		vals = append(vals, tk.Value)
	}
	if len(vals) < 4 {
		t.Errorf("x %v (log %v): ticks %v, want at least four", xs, logX, vals)
		return
	}
	for _, x := range labeled {
		if !slices.Contains(vals, x) {
			t.Errorf("x %v (log %v): no tick at data value %v (ticks %v)", xs, logX, x, vals)
		}
	}
	if slices.Min(xs) >= 0 && vals[0] < 0 || logX && vals[0] <= 0 {
		t.Errorf("x %v (log %v): tick %v below the data's sign", xs, logX, vals[0])
	}
}

// A categorical x axis (table rows) draws markers only: a line from one
// category to the next would show a trend between unrelated inputs. The
// same data on a numeric axis draws its lines.
func TestCategoricalPlotsDrawNoLines(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	mk := func(categorical bool) string {
		r := &Result{Plot: &Plot{Title: "t", XLabel: "input (table order)", YLabel: "speedup", Categorical: categorical, Series: []Series{
			{Name: "rw-cp", X: x, Y: []float64{1, 3, 2, 5, 1, 4, 2, 3}},
			{Name: "iovec", X: x, Y: []float64{2, 1, 3, 1, 2, 1, 3, 2}},
		}}}
		var b bytes.Buffer
		if err := WritePlot(&b, r, "svg"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// A polyline through a series' eight points is one path of seven
	// line-to commands.
	lines := regexp.MustCompile(`d="M[^"]*(L[^"]*){7}"`)
	if n := len(lines.FindAllString(mk(false), -1)); n < 2 {
		t.Fatalf("numeric axis: %d polylines through 8 points, want the 2 series' lines", n)
	}
	if n := len(lines.FindAllString(mk(true), -1)); n != 0 {
		t.Errorf("categorical axis: %d polylines through 8 points, want none", n)
	}
}
