package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestTimelinePlotHasRowsAndPhases(t *testing.T) {
	r := &Result{Plot: &Plot{Title: "t", XLabel: "time (us)", Bars: []Bar{
		{Row: "GPUTN initiator", Phase: "kernel body", Start: 0, End: 1.5},
		{Row: "GPUTN target", Phase: "detect", Start: 2, End: 2.1},
		{Row: "GPUTN target", Phase: "bogus", Start: math.NaN(), End: 3},
	}}}
	var buf bytes.Buffer
	if err := WritePlot(&buf, r, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"GPUTN initiator", "GPUTN target", "kernel body", "detect"} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline SVG lacks %q", want)
		}
	}
	if strings.Contains(svg, "bogus") {
		t.Error("a bar with a NaN start was drawn")
	}
}

// A phase that takes no time anywhere is not drawn; its legend entry says
// so instead of naming a colour the reader cannot find (the latency plot's
// "CP network post" and "GPU trigger store").
func TestTimelineLegendMarksPhasesOfNoTime(t *testing.T) {
	r := &Result{Plot: &Plot{Title: "t", XLabel: "time (us)", Bars: []Bar{
		{Row: "GDS initiator", Phase: "kernel body", Start: 0, End: 1.5},
		{Row: "GDS initiator", Phase: "CP network post", Start: 1.5, End: 1.5},
		{Row: "GDS target", Phase: "kernel body", Start: 2, End: 2},
	}}}
	var buf bytes.Buffer
	if err := WritePlot(&buf, r, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, ">CP network post (0 ns)<") {
		t.Error("the legend does not mark the phase that takes no time")
	}
	if !strings.Contains(svg, ">kernel body<") || strings.Contains(svg, "kernel body (0 ns)") {
		t.Error("a phase with one timed bar is marked as taking no time")
	}
}

// The legend rows of a tornado and a timeline lie at least a line of text
// apart: before, their filled boxes set the rows 10.2 px apart for 12 px
// text, so the two tornado labels overlapped in a browser.
func TestBoxLegendRowsDoNotOverlap(t *testing.T) {
	for name, pl := range map[string]*Plot{
		"tornado": {Title: "t", XLabel: "change (%)", TornadoLegend: [2]string{"knob ÷ 2", "knob × 2"},
			Tornado: []TornadoBar{{Label: "a", Low: -1, High: 2}, {Label: "b", Low: 0.5, High: -0.5}}},
		"timeline": {Title: "t", XLabel: "time (us)", Bars: []Bar{
			{Row: "r", Phase: "post", Start: 0, End: 1}, {Row: "r", Phase: "transfer", Start: 1, End: 2}, {Row: "r", Phase: "signal", Start: 2, End: 3}}},
	} {
		var buf bytes.Buffer
		if err := WritePlot(&buf, &Result{Plot: pl}, "svg"); err != nil {
			t.Fatal(err)
		}
		var ys []float64
		size := 0.0
		for _, m := range legendText.FindAllStringSubmatch(buf.String(), -1) {
			if !strings.Contains("knob ÷ 2 knob × 2 post transfer signal", m[3]) || len(m[3]) < 4 {
				continue
			}
			y, _ := strconv.ParseFloat(m[1], 64)
			size, _ = strconv.ParseFloat(m[2], 64)
			ys = append(ys, y)
		}
		if len(ys) < 2 {
			t.Fatalf("%s: found %d legend labels in\n%s", name, len(ys), buf.String())
		}
		for i := 1; i < len(ys); i++ {
			if d := math.Abs(ys[i] - ys[i-1]); d < size {
				t.Errorf("%s: legend rows %.2f apart for %.0f px text: they overlap", name, d, size)
			}
		}
	}
}

// legendText matches an SVG text element: its y, font size and text.
var legendText = regexp.MustCompile(`<text[^>]* y="(-?[0-9.]+)"[^>]*\n?\s*style="[^"]*font-size:([0-9.]+)px">([^<]*)</text>`)

// A tornado whose every bar is 0 (today's trust chart when no value flips
// a winner) says so in the chart instead of drawing an empty frame.
func TestTornadoOfZerosSaysSo(t *testing.T) {
	for _, bars := range [][]TornadoBar{{{Label: "a"}, {Label: "b"}}, {{Label: "a", Low: -1, High: 1}}} {
		var buf bytes.Buffer
		if err := WritePlot(&buf, &Result{Plot: &Plot{Title: "t", XLabel: "change (%)", Tornado: bars}}, "svg"); err != nil {
			t.Fatal(err)
		}
		zero := bars[0].Low == 0 && bars[0].High == 0
		if got := strings.Contains(buf.String(), ">every bar is 0: nothing changes<"); got != zero {
			t.Errorf("bars %v: the note %v, want %v", bars, got, zero)
		}
	}
}
