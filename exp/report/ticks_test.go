package report

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strings"
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

// One x value (gpi's single batch size, 60) gets whole ticks around it,
// and the axis spans those ticks rather than the margin of a log axis
// around one value, which squeezed the four ticks into a tenth of it.
func TestOneXValueAxisSpansItsTicks(t *testing.T) {
	lay := PlotLayout(&Plot{LogX: true, Series: []Series{{Name: "a", X: []float64{60}, Y: []float64{27}}, {Name: "b", X: []float64{60}, Y: []float64{26}}}})
	lo, hi := lay.XTicks[0].Value, lay.XTicks[len(lay.XTicks)-1].Value
	if len(lay.XTicks) < 4 || lo > 60 || hi < 60 {
		t.Fatalf("ticks %v, want at least four around 60", lay.XTicks)
	}
	if span := lay.XMax - lay.XMin; span > 1.2*(hi-lo) {
		t.Errorf("axis %g..%g for ticks %g..%g: the ticks fill %.0f%% of it", lay.XMin, lay.XMax, lo, hi, 100*(hi-lo)/span)
	}
}

// A size sweep's ticks (shmemget's 1 B … 1 MiB in powers of four) label
// large powers of two in binary units, so neighbouring labels stay short
// enough not to run into each other ("65536262144 1.05e6" before).
func TestSizeTicksInBinaryUnits(t *testing.T) {
	var xs []float64
	for v := 1.0; v <= 1<<20; v *= 4 {
		xs = append(xs, v)
	}
	lay := PlotLayout(&Plot{LogX: true, Series: []Series{{Name: "a", X: xs, Y: xs}}})
	var labels []string
	for _, tk := range lay.XTicks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
		if len(tk.Label) > 4 {
			t.Errorf("tick label %q at %g: longer than 4 characters", tk.Label, tk.Value)
		}
	}
	for _, want := range []string{"1", "1024", "16K", "256K", "1M"} {
		if !slices.Contains(labels, want) {
			t.Errorf("ticks %q lack %q", labels, want)
		}
	}
	if got := fmtDataTick(3 << 20); got != "3.15e6" {
		t.Errorf("3 MiB (not a power of two) labelled %q, want fmtTick's 3.15e6", got)
	}
}

// A long size sweep in powers of two (ping-pong's 8 B … 16 MiB, 22 sizes)
// is ticked at powers of two, every few doublings, labelled in binary
// units ("32K", "8M"), not at decades that mixed "100000" with "1e6".
func TestLongSizeSweepTicksAtPowersOfTwo(t *testing.T) {
	var xs []float64
	for v := 8.0; v <= 16<<20; v *= 2 {
		xs = append(xs, v)
	}
	lay := PlotLayout(&Plot{LogX: true, Series: []Series{{Name: "a", X: xs, Y: xs}}})
	var labels []string
	for _, tk := range lay.XTicks {
		if v := uint64(tk.Value); float64(v) != tk.Value || v&(v-1) != 0 {
			t.Errorf("tick at %g: not a power of two", tk.Value)
		}
		if tk.Value < lay.XMin || tk.Value > lay.XMax {
			t.Errorf("tick at %g outside the axis %g..%g", tk.Value, lay.XMin, lay.XMax)
		}
		if len(tk.Label) > 4 {
			t.Errorf("tick label %q at %g: longer than 4 characters", tk.Label, tk.Value)
		}
		labels = append(labels, tk.Label)
	}
	if len(labels) < 4 || len(labels) > 8 || labels[0] != "8" ||
		!slices.ContainsFunc(labels, func(l string) bool { return strings.HasSuffix(l, "K") }) ||
		!slices.ContainsFunc(labels, func(l string) bool { return strings.HasSuffix(l, "M") }) {
		t.Errorf("ticks %q: want 4 to 8 from 8, some in K and some in M", labels)
	}
}
