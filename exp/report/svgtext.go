package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// fittedSVG is an SVG canvas whose text keeps the width the layout
// measured. The layout measures every label in Liberation Serif; a viewer
// without that font substitutes another (DejaVu Serif on a stock Debian,
// about 15 % wider), and legends and titles ran past the figure's edge.
// Embedding the font fixed that at about 0.5 MB a file; instead each
// <text> states its measured length (textLength, with lengthAdjust
// spacingAndGlyphs), which SVG viewers honour by fitting whatever face
// they use into it, and names metric-compatible fallbacks (Times New
// Roman, Times), so the text is not squeezed where one of those is
// installed, then DejaVu Serif Condensed (Debian's, near Times' widths)
// before the generic serif.
type fittedSVG struct {
	*vgsvg.Canvas
	widths []vg.Length // each FillString's measured width, in drawing order
}

// newFittedSVG returns an empty w×h fittedSVG.
func newFittedSVG(w, h vg.Length) *fittedSVG {
	return &fittedSVG{Canvas: vgsvg.NewWith(vgsvg.UseWH(w, h))}
}

// FillString draws str as vgsvg does and records its measured width.
func (c *fittedSVG) FillString(f font.Face, pt vg.Point, str string) {
	c.widths = append(c.widths, f.Width(str))
	c.Canvas.FillString(f, pt, str)
}

// svgSerif is the font-family vgsvg writes for the figures' face, and
// svgSerifStack the list that replaces it (CSS in a style attribute).
const (
	svgSerif      = "font-family:Liberation Serif;"
	svgSerifStack = "font-family:'Liberation Serif','Times New Roman',Times,'DejaVu Serif Condensed',serif;"
)

// WriteTo writes the SVG with every text element's measured length.
func (c *fittedSVG) WriteTo(w io.Writer) (int64, error) {
	var raw bytes.Buffer
	if _, err := c.Canvas.WriteTo(&raw); err != nil {
		return 0, err
	}
	src := raw.String()
	var out strings.Builder
	out.Grow(len(src) + 48*len(c.widths))
	k := 0
	for {
		i := strings.Index(src, "<text ")
		if i < 0 {
			break
		}
		if k >= len(c.widths) {
			return 0, fmt.Errorf("report: SVG has more text elements than the %d drawn", len(c.widths))
		}
		out.WriteString(src[:i+len("<text ")])
		fmt.Fprintf(&out, `textLength="%.2f" lengthAdjust="spacingAndGlyphs" `, c.widths[k].Points())
		src = src[i+len("<text "):]
		k++
	}
	if k != len(c.widths) {
		return 0, fmt.Errorf("report: SVG has %d text elements, %d drawn", k, len(c.widths))
	}
	out.WriteString(src)
	n, err := io.WriteString(w, strings.ReplaceAll(out.String(), svgSerif, svgSerifStack))
	return int64(n), err
}
