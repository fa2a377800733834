package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrNoPlot reports a plot request for a result that has no plot.
var ErrNoPlot = errors.New("report: the result has no plot")

// plotFormats lists the file extensions WritePlot understands.
var plotFormats = []string{"svg", "png", "pdf"}

// PlotFormat returns the plot format implied by path's extension ("svg",
// "png" or "pdf"), or an error naming the allowed extensions.
func PlotFormat(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range plotFormats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("plot file %q: unknown extension %q: want .svg, .png or .pdf", path, filepath.Ext(path))
}

// plotPalette holds distinguishable line colours (Okabe–Ito).
var plotPalette = []color.Color{
	color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255}, color.RGBA{240, 228, 66, 255},
}

// WritePlot draws r.Plot as a line plot with points, one line per series,
// 6×4 inches, in format ("svg", "png" or "pdf"; see PlotFormat). Points with
// a non-finite coordinate, or a non-positive x on a log axis, are left out.
func WritePlot(w io.Writer, r *Result, format string) error {
	if r.Plot == nil {
		return ErrNoPlot
	}
	p := plot.New()
	p.Title.Text = r.Plot.Title
	p.X.Label.Text = r.Plot.XLabel
	p.Y.Label.Text = r.Plot.YLabel
	if r.Plot.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Title.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(2)
	var xs []float64
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, s := range r.Plot.Series {
		var pts plotter.XYs
		x, y := finitePoints(s.X, s.Y)
		for j := range x {
			if r.Plot.LogX && x[j] <= 0 {
				continue
			}
			pts = append(pts, plotter.XY{X: x[j], Y: y[j]})
			if !slices.Contains(xs, x[j]) {
				xs = append(xs, x[j])
			}
			ymin, ymax = min(ymin, y[j]), max(ymax, y[j])
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("report: plot series %q: %w", s.Name, err)
		}
		c := plotPalette[i%len(plotPalette)]
		line.Color = c
		line.Width = vg.Points(1.5)
		points.Color = c
		points.Shape = plotShapes[i%len(plotShapes)]
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	if ymax > ymin || ymax > 0 {
		// Start at zero when the data are positive, and leave the top
		// quarter for the legend.
		if ymin >= 0 {
			p.Y.Min = 0
		}
		p.Y.Max = ymax + (ymax-p.Y.Min)*0.25*float64(min(len(r.Plot.Series), 8))/4
	}
	if ticks := dataTicks(xs); ticks != nil {
		p.X.Tick.Marker = ticks
	}
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("report: plot: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("report: plot: %w", err)
	}
	return nil
}

var plotShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// dataTicks puts x ticks at the data's own x values when they are a few
// whole numbers (node counts), else returns nil for the default ticks.
func dataTicks(xs []float64) plot.Ticker {
	if len(xs) == 0 || len(xs) > 12 {
		return nil
	}
	slices.Sort(xs)
	ticks := make(plot.ConstantTicks, len(xs))
	for i, x := range xs {
		if x != math.Trunc(x) || math.Abs(x) > 1e15 {
			return nil
		}
		ticks[i] = plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)}
	}
	return ticks
}
