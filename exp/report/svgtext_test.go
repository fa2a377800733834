package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// fittedSVG states, for each string drawn, the width the layout's font
// measures for it, in drawing order, and HTML-escaped text does not
// disturb the count.
func TestFittedSVGStatesMeasuredWidths(t *testing.T) {
	face := font.DefaultCache.Lookup(plot.DefaultFont, vg.Points(12))
	c := newFittedSVG(vg.Points(300), vg.Points(100))
	strs := []string{"short", "a much longer label <&> of text", "µs"}
	for i, s := range strs {
		c.FillString(face, vg.Point{X: 10, Y: vg.Length(20 * (i + 1))}, s)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	rest := b.String()
	for _, s := range strs {
		want := fmt.Sprintf(`<text textLength="%.2f" lengthAdjust="spacingAndGlyphs" `, face.Width(s).Points())
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("no %q for %q in\n%s", want, s, b.String())
		}
		rest = rest[i+len(want):]
	}
	if w0, w1 := face.Width(strs[0]), face.Width(strs[1]); w1 <= w0 {
		t.Errorf("widths %v, %v: the longer string is not wider", w0, w1)
	}
}
