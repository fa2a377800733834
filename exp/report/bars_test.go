package report

import (
	"bytes"
	"math"
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
