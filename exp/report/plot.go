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
	color.RGBA{0, 0, 0, 255}, color.RGBA{240, 228, 66, 255}, color.RGBA{120, 120, 120, 255},
	color.RGBA{140, 86, 75, 255},
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
	if len(r.Plot.Tornado) > 0 {
		if err := addTornado(p, r.Plot); err != nil {
			return err
		}
		return writePlot(w, p, format)
	}
	if len(r.Plot.Bars) > 0 {
		if err := addBars(p, r.Plot.Bars); err != nil {
			return err
		}
		return writePlot(w, p, format)
	}
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
	return writePlot(w, p, format)
}

func writePlot(w io.Writer, p *plot.Plot, format string) error {
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

// addBars draws a timeline: one row per distinct Bar.Row, first row at the
// top, one filled rectangle per bar coloured by phase.
func addBars(p *plot.Plot, bars []Bar) error {
	var rows, phases []string
	for _, b := range bars {
		if !slices.Contains(rows, b.Row) {
			rows = append(rows, b.Row)
		}
		if !slices.Contains(phases, b.Phase) {
			phases = append(phases, b.Phase)
		}
	}
	legend := map[string]bool{}
	xmax := 0.0
	for _, b := range bars {
		xmax = max(xmax, b.End)
		if math.IsNaN(b.Start) || math.IsNaN(b.End) || math.IsInf(b.Start, 0) || math.IsInf(b.End, 0) {
			continue
		}
		y := float64(len(rows) - 1 - slices.Index(rows, b.Row))
		end := max(b.End, b.Start)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: b.Start, Y: y - 0.35}, {X: end, Y: y - 0.35}, {X: end, Y: y + 0.35}, {X: b.Start, Y: y + 0.35}})
		if err != nil {
			return fmt.Errorf("report: timeline bar %q: %w", b.Phase, err)
		}
		c := plotPalette[slices.Index(phases, b.Phase)%len(plotPalette)]
		poly.Color = c
		poly.LineStyle.Color = color.White
		poly.LineStyle.Width = vg.Points(0.5)
		p.Add(poly)
		if !legend[b.Phase] {
			legend[b.Phase] = true
			p.Legend.Add(b.Phase, poly)
		}
	}
	ticks := make(plot.ConstantTicks, len(rows))
	for i, row := range rows {
		ticks[i] = plot.Tick{Value: float64(len(rows) - 1 - i), Label: row}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	// Room on the right for the legend, so it never hides a bar.
	p.X.Min, p.X.Max = 0, xmax*1.6
	p.Legend.Top, p.Legend.Left = true, false
	return nil
}
