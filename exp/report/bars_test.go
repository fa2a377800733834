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
