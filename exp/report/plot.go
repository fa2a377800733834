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
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
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

// MaxSeriesPerPanel is the most line series one panel of a plot draws;
// more are split into panels (small multiples) sharing their axes.
const MaxSeriesPerPanel = 6

// plotPalette holds distinguishable colours (Okabe–Ito), the first
// MaxSeriesPerPanel distinct for every kind of colour vision.
var plotPalette = []color.Color{
	color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{0, 0, 0, 255},
	color.RGBA{86, 180, 233, 255}, color.RGBA{120, 120, 120, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{240, 228, 66, 255},
}

var plotShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{},
	draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CircleGlyph{}, draw.SquareGlyph{},
}

// denseSeries is the most points a series draws markers on.
const denseSeries = 60

// plotDashes tell the lines of dense series apart besides their colours.
var plotDashes = [][]vg.Length{
	nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
	{vg.Points(10), vg.Points(3)}, {vg.Points(3), vg.Points(3)},
}

// minPNGWidth is the narrowest PNG WritePlot makes, in pixels.
const minPNGWidth = 1600

// Panel is one panel of a line plot as WritePlot lays it out: a title
// (the value the panel's series share, "" for a single panel) and its
// series, each with the legend label and the colour/marker index it is
// drawn with.
type Panel struct {
	Title  string
	Series []Series
	Labels []string
	Style  []int
}

// Layout is how WritePlot draws a line plot: its panels, in rows of
// Cols, and the scale of the shared axes.
type Layout struct {
	Panels     []Panel
	Cols       int
	LogX, LogY bool
	// XMin … YMax bound the shared axes (data units).
	XMin, XMax, YMin, YMax float64
	// XTicks and YTicks are the labelled ticks of the shared axes.
	XTicks, YTicks []plot.Tick
}

// PlotLayout returns how WritePlot lays out p's line series (nil when p
// draws bars or a tornado): at most MaxSeriesPerPanel series a panel,
// grouped by the word of their names that splits them into the fewest
// panels (e.g. the swept value of "GPUTN link.bandwidth=25Gbps") or, when
// no word does, in consecutive runs; an axis is logarithmic when its
// values are all positive and span more than two decades (or LogX asks
// for it), and each gets at least four labelled ticks.
func PlotLayout(p *Plot) *Layout {
	if p == nil || len(p.Tornado) > 0 || len(p.Bars) > 0 {
		return nil
	}
	var series []Series
	var xs, ys []float64
	for _, s := range p.Series {
		x, y := finitePoints(s.X, s.Y)
		if len(x) == 0 {
			continue
		}
		series = append(series, Series{Name: s.Name, X: x, Y: y})
		xs, ys = append(xs, x...), append(ys, y...)
	}
	l := &Layout{Panels: facets(series)}
	if dense := denseCount(series); dense > 2 && len(series) <= 12 {
		// Long traces (occupancy over time) hide each other: one panel
		// each.
		l.Panels = nil
		for i, s := range series {
			l.Panels = append(l.Panels, Panel{Title: s.Name, Series: []Series{s}, Labels: []string{s.Name}, Style: []int{i}})
		}
	}
	l.LogX = p.LogX && anyPositive(xs) || wideSpan(xs)
	l.LogY = wideSpan(ys)
	if l.LogX {
		xs = positive(xs)
	}
	l.XMin, l.XMax = axisRange(xs, l.LogX, false)
	l.YMin, l.YMax = axisRange(ys, l.LogY, true)
	l.XTicks = dataTicks(xs, l.LogX)
	if l.XTicks == nil && l.LogX && powersOfTwo(xs) {
		// Power-of-two sizes or counts on a log axis, two or three (the
		// powers of two, doubled out to four) or more than dataTicks
		// labels (a size sweep, 8 B … 16 MiB: every few doublings, in
		// binary units, not decades mixing "100000" and "1e6").
		l.XTicks = doublingTicks(xs)
		lo, hi := l.XTicks[0].Value, l.XTicks[len(l.XTicks)-1].Value
		l.XMin, l.XMax = min(l.XMin, lo/1.25), max(l.XMax, hi*1.25)
	}
	if l.XTicks == nil && fewWhole(xs) && (!l.LogX || slices.Max(xs)-slices.Min(xs) < 12) {
		// Two or three node counts (or sizes): no fractional ticks
		// between them, on a linear axis or a log one over a short range.
		l.XTicks = wholeTicks(xs, l.LogX)
		lo, hi := l.XTicks[0].Value, l.XTicks[len(l.XTicks)-1].Value
		pad := (hi - lo) * 0.04
		l.XMin, l.XMax = min(l.XMin, lo-pad), max(l.XMax, hi+pad)
		if lo <= slices.Min(xs) && hi >= slices.Max(xs) {
			// The ticks span the data (one x value, 60, ticked 58…61):
			// the axis spans the ticks, not the default margin around one
			// value, which squeezed the ticks into a tenth of the panel.
			l.XMin, l.XMax = lo-pad, hi+pad
		}
	}
	if l.XTicks == nil {
		l.XTicks = niceTicks(l.XMin, l.XMax, l.LogX)
	}
	l.YTicks = niceTicks(l.YMin, l.YMax, l.LogY)
	// At most two columns: a page or screen shows the figure about 1100
	// pixels wide, and a third column shrank the panels' text to about
	// five pixels (more panels make the figure taller instead).
	l.Cols = min(2, max(1, len(l.Panels)))
	return l
}

// denseCount is how many series draw without markers (see denseSeries).
func denseCount(series []Series) int {
	n := 0
	for _, s := range series {
		if len(s.X) > denseSeries {
			n++
		}
	}
	return n
}

// facets splits series into panels of at most MaxSeriesPerPanel.
func facets(series []Series) []Panel {
	if len(series) <= MaxSeriesPerPanel {
		p := Panel{Series: series}
		for i, s := range series {
			p.Labels = append(p.Labels, s.Name)
			p.Style = append(p.Style, i)
		}
		return []Panel{p}
	}
	// Group by the word position whose values split the series into the
	// fewest groups of at most MaxSeriesPerPanel (later words win ties:
	// they are usually the swept value).
	words := make([][]string, len(series))
	minWords := math.MaxInt
	for i, s := range series {
		words[i] = strings.Fields(s.Name)
		minWords = min(minWords, len(words[i]))
	}
	best, bestN := -1, math.MaxInt
	for pos := range minWords {
		groups := map[string]int{}
		largest := 0
		for _, w := range words {
			groups[w[pos]]++
			largest = max(largest, groups[w[pos]])
		}
		if largest <= MaxSeriesPerPanel && len(groups) > 1 && len(groups) <= bestN {
			best, bestN = pos, len(groups)
		}
	}
	if best < 0 {
		return chunks(series)
	}
	var panels []Panel
	var rests []string
	for i, s := range series {
		key := words[i][best]
		rest := strings.Join(slices.Delete(slices.Clone(words[i]), best, best+1), " ")
		k := slices.IndexFunc(panels, func(p Panel) bool { return p.Title == key })
		if k < 0 {
			panels = append(panels, Panel{Title: key})
			k = len(panels) - 1
		}
		style := slices.Index(rests, rest)
		if style < 0 {
			rests = append(rests, rest)
			style = len(rests) - 1
		}
		panels[k].Series = append(panels[k].Series, s)
		panels[k].Labels = append(panels[k].Labels, rest)
		panels[k].Style = append(panels[k].Style, style)
	}
	if len(rests) > len(plotPalette) {
		// Too many distinct series for one colour each across the
		// panels: colour by position within each panel instead.
		for k := range panels {
			for i := range panels[k].Style {
				panels[k].Style[i] = i
			}
		}
	}
	return panels
}

// chunks splits series into balanced consecutive runs.
func chunks(series []Series) []Panel {
	n := (len(series) + MaxSeriesPerPanel - 1) / MaxSeriesPerPanel
	size := (len(series) + n - 1) / n
	var panels []Panel
	for start := 0; start < len(series); start += size {
		end := min(start+size, len(series))
		p := Panel{Title: fmt.Sprintf("series %d–%d of %d", start+1, end, len(series)), Series: series[start:end]}
		for i, s := range p.Series {
			p.Labels = append(p.Labels, s.Name)
			p.Style = append(p.Style, i)
		}
		panels = append(panels, p)
	}
	return panels
}

func anyPositive(v []float64) bool {
	return slices.ContainsFunc(v, func(x float64) bool { return x > 0 })
}

func positive(v []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(v), func(x float64) bool { return x <= 0 })
}

// wideSpan reports whether v is all positive and spans more than two
// decades.
func wideSpan(v []float64) bool {
	if len(v) == 0 || slices.ContainsFunc(v, func(x float64) bool { return x <= 0 }) {
		return false
	}
	return slices.Max(v)/slices.Min(v) > 100
}

// axisRange bounds an axis over v: from zero for non-negative linear
// values when zero is asked for, a margin either side otherwise.
func axisRange(v []float64, log, fromZero bool) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 1
	}
	lo, hi = slices.Min(v), slices.Max(v)
	if log {
		return lo / 1.25, hi * 1.25
	}
	if fromZero && lo >= 0 {
		lo = 0
	}
	if hi == lo {
		pad := math.Max(math.Abs(hi)*0.1, 1)
		return lo - pad, hi + pad
	}
	pad := (hi - lo) * 0.04
	if fromZero && lo == 0 {
		return 0, hi + pad
	}
	return lo - pad, hi + pad
}

// dataTicks puts ticks at the data's own x values when they are 4 to 12
// whole numbers (node counts), else returns nil.
func dataTicks(xs []float64, log bool) []plot.Tick {
	var vals []float64
	for _, x := range xs {
		if !slices.Contains(vals, x) {
			vals = append(vals, x)
		}
	}
	if len(vals) < 4 || len(vals) > 12 {
		return nil
	}
	slices.Sort(vals)
	ticks := make([]plot.Tick, len(vals))
	for i, x := range vals {
		if x != math.Trunc(x) || math.Abs(x) > 1e15 || (log && x <= 0) {
			return nil
		}
		ticks[i] = plot.Tick{Value: x, Label: fmtDataTick(x)}
	}
	if !log && len(vals) > 8 {
		// Evenly spaced labels only: crowded labels overlap.
		return nil
	}
	return ticks
}

// fewWhole reports whether xs holds one to three distinct values, all
// whole numbers (node counts, byte sizes).
func fewWhole(xs []float64) bool {
	var vals []float64
	for _, x := range xs {
		if x != math.Trunc(x) || math.Abs(x) > 1e15 {
			return false
		}
		if !slices.Contains(vals, x) {
			vals = append(vals, x)
		}
	}
	return len(vals) >= 1 && len(vals) <= 3
}

// wholeTicks returns ticks at whole numbers only for two or three whole
// x values (fewWhole): every whole number from the least to the greatest
// when they are at most 12 — widened by one on each side (never below
// zero when the values are not, never below one on a log axis) until there
// are four — so that every data value is labelled; else the coarsest
// whole-number step of 1, 2, 2.5 or 5 times a power of ten that gives four
// ticks.
func wholeTicks(xs []float64, log bool) []plot.Tick {
	lo, hi := slices.Min(xs), slices.Max(xs)
	floor := 0.0
	if log {
		floor = 1
	}
	if hi-lo+1 <= 12 {
		for hi-lo+1 < 4 {
			if lo > floor || (!log && slices.Min(xs) < 0) {
				lo--
			}
			if hi-lo+1 < 4 {
				hi++
			}
		}
		var ticks []plot.Tick
		for v := lo; v <= hi; v++ {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmtTick(v)})
		}
		return ticks
	}
	mag := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	var ticks []plot.Tick
	for _, step := range []float64{5 * mag, 2.5 * mag, 2 * mag, mag, mag / 2, mag / 4, mag / 5, mag / 10} {
		if step < 1 || step != math.Trunc(step) {
			continue
		}
		ticks = ticks[:0]
		for v := math.Ceil(lo/step) * step; v <= hi; v += step {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmtTick(v)})
		}
		if len(ticks) >= 4 {
			break
		}
	}
	return ticks
}

// powersOfTwo reports whether every x is a positive power of two.
func powersOfTwo(xs []float64) bool {
	for _, x := range xs {
		if x < 1 || x > 1<<62 || uint64(x)&(uint64(x)-1) != 0 {
			return false
		}
	}
	return len(xs) > 0
}

// doublingTicks returns the powers of two from the least x to the
// greatest, at most eight of them (every other one, then every fourth,
// when more), extended by doubling (and halving, not below 1) to four.
func doublingTicks(xs []float64) []plot.Tick {
	lo, hi := slices.Min(xs), slices.Max(xs)
	for n := 0; math.Log2(hi/lo)+1 < 4 && n < 4; n++ {
		if n%2 == 0 || lo <= 1 {
			hi *= 2
		} else {
			lo /= 2
		}
	}
	step := 1.0
	for (math.Log2(hi/lo))/step+1 > 8 {
		step *= 2
	}
	var ticks []plot.Tick
	for e := math.Log2(lo); e <= math.Log2(hi)+1e-9; e += step {
		v := math.Exp2(e)
		ticks = append(ticks, plot.Tick{Value: v, Label: fmtDataTick(v)})
	}
	return ticks
}

// decrowd drops, from log-axis ticks over [lo, hi], those closer than a
// fourteenth of the axis (in decades) to a kept one, keeping powers of
// ten first, then 2× and 5× them, then the rest: "900" is not printed on
// top of "1000".
func decrowd(ticks []plot.Tick, lo, hi float64) []plot.Tick {
	gap := math.Log10(hi/lo) / 14
	rank := func(v float64) int {
		m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		switch {
		case math.Abs(m-1) < 1e-9:
			return 0
		case math.Abs(m-2) < 1e-9 || math.Abs(m-5) < 1e-9:
			return 1
		}
		return 2
	}
	var kept []plot.Tick
	for r := range 3 {
		for _, t := range ticks {
			if rank(t.Value) != r {
				continue
			}
			if !slices.ContainsFunc(kept, func(k plot.Tick) bool { return math.Abs(math.Log10(k.Value/t.Value)) < gap }) {
				kept = append(kept, t)
			}
		}
	}
	slices.SortFunc(kept, func(a, b plot.Tick) int { return cmpFloat(a.Value, b.Value) })
	return kept
}

// niceTicks returns at least four labelled ticks in [lo, hi] (when the
// range is not degenerate): on a linear axis multiples of 1, 2, 2.5 or 5
// times a power of ten, the coarsest that gives four; on a log axis the
// powers of ten, with 2× and 5× them, then every multiple, when the
// powers alone are fewer than four.
func niceTicks(lo, hi float64, log bool) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: fmtTick(lo)}}
	}
	if log {
		for _, mults := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
			var ticks []plot.Tick
			for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
				for _, m := range mults {
					v := m * math.Pow(10, e)
					if v >= lo && v <= hi {
						ticks = append(ticks, plot.Tick{Value: v, Label: fmtTick(v)})
					}
				}
			}
			if len(mults) > 3 {
				ticks = decrowd(ticks, lo, hi)
			}
			if len(ticks) >= 4 {
				return ticks
			}
		}
	}
	span := hi - lo
	mag := math.Pow(10, math.Floor(math.Log10(span)))
	var ticks []plot.Tick
	for _, step := range []float64{5 * mag, 2.5 * mag, 2 * mag, mag, mag / 2, mag / 4, mag / 5, mag / 10} {
		ticks = ticks[:0]
		for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
			if log && v <= 0 {
				continue
			}
			r := math.Round(v/step) * step // no 0.30000000000000004
			ticks = append(ticks, plot.Tick{Value: r, Label: fmtTick(r)})
		}
		if len(ticks) >= 4 {
			break
		}
	}
	return ticks
}

// fmtTick prints a tick value briefly: "0.25", "2000", "1e6".
// fmtDataTick labels a tick at a data value (a message size, a node
// count): a power of two from 16384 up in binary units, 16K, 256K, 1M,
// 4M (fmtTick's "262144" and "1.05e6" ran into each other on a size
// sweep, and hid that 1.05e6 is 2^20), anything else as fmtTick.
func fmtDataTick(v float64) string {
	if v >= 16384 && v == math.Trunc(v) && v <= 1<<62 {
		if n := uint64(v); n&(n-1) == 0 {
			for _, u := range []struct {
				suffix string
				size   uint64
			}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
				if n >= u.size {
					return strconv.FormatUint(n/u.size, 10) + u.suffix
				}
			}
		}
	}
	return fmtTick(v)
}

func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e6 || a < 1e-3 {
		s := fmt.Sprintf("%.3g", v)
		s = strings.Replace(s, "e+0", "e", 1)
		s = strings.Replace(s, "e+", "e", 1)
		return strings.Replace(s, "e-0", "e-", 1)
	}
	return fmt.Sprintf("%.6g", v)
}

// figure is a drawing in the making: its size and what draws it.
type figure struct {
	w, h vg.Length
	draw func(c draw.Canvas)
}

// WritePlot draws r.Plot in format ("svg", "png" or "pdf"; see
// PlotFormat): line series as lines with markers, laid out by PlotLayout
// in panels that share their axes, each with its legend to the right of
// its data; or a timeline (Bars) or a tornado chart (Tornado), legend
// beside. One title on top, one x label below and one y label left of
// the whole figure. SVG text is set to the width the layout measured
// (fittedSVG), so it stays inside the figure in any font and the file
// carries none; PNGs are at least 1600 pixels wide; PDF text is
// encoded for the embedded fonts (Windows-1252, the characters it lacks
// spelled out), so "÷", "µ", "×" and "γ" print as themselves or as words,
// never as mojibake.
func WritePlot(w io.Writer, r *Result, format string) error {
	if r.Plot == nil {
		return ErrNoPlot
	}
	var fig figure
	var err error
	switch {
	case len(r.Plot.Tornado) > 0 || len(r.Plot.Bars) > 0:
		fig, err = singleFigure(r.Plot)
	default:
		fig, err = lineFigure(r.Plot)
	}
	if err != nil {
		return err
	}
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = newFittedSVG(fig.w, fig.h)
	case "png":
		dpi := max(200, int(math.Ceil(minPNGWidth/float64(fig.w/vg.Inch))))
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(fig.w, fig.h), vgimg.UseDPI(dpi))}
	case "pdf":
		c = pdfCanvas{vgpdf.New(fig.w, fig.h)}
	default:
		return fmt.Errorf("report: plot: unknown format %q: want svg, png or pdf", format)
	}
	fig.draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("report: plot: %w", err)
	}
	return nil
}

// Figure geometry.
var (
	panelW      = 4.6 * vg.Inch
	panelH      = 3.1 * vg.Inch
	titleBand   = 0.45 * vg.Inch
	labelBand   = 0.35 * vg.Inch
	legendGap   = 0.12 * vg.Inch
	rowGap      = 0.12 * vg.Inch
	maxLegendW  = 3.2 * vg.Inch
	legendLabel = 44 // runes; longer legend labels are shortened with "…"
)

// newPanelPlot returns a plot with the common style and no labels.
func newPanelPlot() *plot.Plot {
	p := plot.New()
	p.Add(plotter.NewGrid())
	p.Title.Padding = vg.Points(4)
	return p
}

// newLegend returns an empty legend in the common style.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.Padding = vg.Points(2)
	return l
}

// legendWidth is how wide legend l draws.
func legendWidth(l plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{})
	// Rectangle leaves out the space between icon and text.
	return r.Max.X - r.Min.X + l.TextStyle.Rectangle(" ").Max.X + vg.Points(6)
}

// shorten cuts s to n runes with "…".
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// lineFigure lays out line series (see PlotLayout).
func lineFigure(pl *Plot) (figure, error) {
	lay := PlotLayout(pl)
	var plots []*plot.Plot
	var legends []plot.Legend
	lw := vg.Length(0)
	for _, pan := range lay.Panels {
		p := newPanelPlot()
		if len(lay.Panels) > 1 {
			p.Title.Text = pan.Title
		}
		if lay.LogX {
			p.X.Scale = plot.LogScale{}
		}
		if lay.LogY {
			p.Y.Scale = plot.LogScale{}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lay.XMin, lay.XMax, lay.YMin, lay.YMax
		p.X.Tick.Marker = plot.ConstantTicks(lay.XTicks)
		p.Y.Tick.Marker = plot.ConstantTicks(lay.YTicks)
		leg := newLegend()
		entries := 0
		for i, s := range pan.Series {
			var pts plotter.XYs
			for j := range s.X {
				if (lay.LogX && s.X[j] <= 0) || (lay.LogY && s.Y[j] <= 0) {
					continue
				}
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
			if len(pts) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return figure{}, fmt.Errorf("report: plot series %q: %w", s.Name, err)
			}
			st := pan.Style[i]
			c := plotPalette[st%len(plotPalette)]
			line.Color = c
			line.Width = vg.Points(1.5)
			// A panel of one series titled by it needs no legend.
			named := len(pan.Series) == 1 && pan.Title == pan.Labels[i]
			if len(pts) > denseSeries {
				// Markers on every point of a long trace merge into a
				// blot: the line alone, told apart by its dashes.
				line.Dashes = plotDashes[st%len(plotDashes)]
				p.Add(line)
				if !named {
					leg.Add(shorten(pan.Labels[i], legendLabel), line)
					entries++
				}
				continue
			}
			points.Color = c
			points.Shape = plotShapes[st%len(plotShapes)]
			points.Radius = vg.Points(3)
			if pl.Categorical {
				// Neighbouring categories (table rows) are unrelated: a line
				// between them would draw a trend that is not there.
				points.Radius = vg.Points(4)
				p.Add(points)
				leg.Add(shorten(pan.Labels[i], legendLabel), points)
				entries++
				continue
			}
			p.Add(line, points)
			leg.Add(shorten(pan.Labels[i], legendLabel), line, points)
			entries++
		}
		if entries > 0 {
			lw = max(lw, legendWidth(leg))
		}
		plots = append(plots, p)
		legends = append(legends, leg)
	}
	lw = min(lw, maxLegendW)
	cols := lay.Cols
	rows := (len(plots) + cols - 1) / cols
	cellW := panelW + legendGap + lw
	w := labelBand + vg.Length(cols)*cellW + 0.1*vg.Inch
	h := titleBand + labelBand + vg.Length(rows)*panelH
	return figure{w: w, h: h, draw: func(c draw.Canvas) {
		drawFrame(c, pl.Title, pl.XLabel, pl.YLabel)
		for i, p := range plots {
			row, col := i/cols, i%cols
			x0 := c.Min.X + labelBand + vg.Length(col)*cellW
			y1 := c.Max.Y - titleBand - vg.Length(row)*panelH
			cell := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0, Y: y1 - panelH}, Max: vg.Point{X: x0 + panelW, Y: y1 - rowGap}}}
			p.Draw(cell)
			legCanvas := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0 + panelW + legendGap, Y: y1 - panelH}, Max: vg.Point{X: x0 + cellW, Y: y1 - vg.Points(18)}}}
			legends[i].Draw(legCanvas)
		}
	}}, nil
}

// drawFrame draws the figure's one title, x label and y label.
func drawFrame(c draw.Canvas, title, xlabel, ylabel string) {
	if title != "" {
		sty := plot.New().Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		// Shrink a title that would not fit the width.
		for size := sty.Font.Size; size > vg.Points(7) && sty.Width(title) > c.Max.X-c.Min.X-vg.Points(8); size -= vg.Points(0.5) {
			sty.Font.Size = size
		}
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - titleBand/2}, title)
	}
	lab := plot.New().X.Label.TextStyle
	if xlabel != "" {
		s := lab
		s.XAlign, s.YAlign = draw.XCenter, draw.YCenter
		c.FillText(s, vg.Point{X: (c.Min.X + labelBand + c.Max.X) / 2, Y: c.Min.Y + labelBand/2}, xlabel)
	}
	if ylabel != "" {
		s := lab
		s.Rotation = math.Pi / 2
		s.XAlign, s.YAlign = draw.XCenter, draw.YCenter
		c.FillText(s, vg.Point{X: c.Min.X + labelBand/2, Y: (c.Min.Y + labelBand + c.Max.Y - titleBand) / 2}, ylabel)
	}
}

// singleFigure draws a timeline or a tornado chart, legend to the right.
func singleFigure(pl *Plot) (figure, error) {
	p := newPanelPlot()
	var err error
	if len(pl.Tornado) > 0 {
		err = addTornado(p, pl)
	} else {
		err = addBars(p, pl.Bars)
	}
	if err != nil {
		return figure{}, err
	}
	leg := p.Legend
	p.Legend = newLegend()
	// The entries addTornado and addBars made, in the common style: its
	// padding between entries too, without which rows of filled boxes
	// sat closer than the text's height and their labels overlapped.
	leg.Top, leg.Left, leg.Padding = true, true, p.Legend.Padding
	lw := min(legendWidth(leg), maxLegendW)
	// Row labels (tornado knobs, timeline rows) widen the plot instead of
	// squeezing its data.
	labelW := vg.Length(0)
	sty := p.Y.Tick.Label
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		labelW = max(labelW, sty.Width(t.Label))
	}
	rows := 0
	if ticks, ok := p.Y.Tick.Marker.(plot.ConstantTicks); ok {
		rows = len(ticks)
	}
	pw := panelW + labelW
	ph := max(panelH, vg.Length(rows)*vg.Points(16)+vg.Inch)
	w := labelBand + pw + legendGap + lw + 0.1*vg.Inch
	h := titleBand + labelBand + ph
	return figure{w: w, h: h, draw: func(c draw.Canvas) {
		drawFrame(c, pl.Title, pl.XLabel, pl.YLabel)
		x0 := c.Min.X + labelBand
		y1 := c.Max.Y - titleBand
		p.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: y1 - ph}, Max: vg.Point{X: x0 + pw, Y: y1}}})
		leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0 + pw + legendGap, Y: y1 - ph}, Max: vg.Point{X: x0 + pw + legendGap + lw, Y: y1 - vg.Points(18)}}})
	}}, nil
}

// addBars draws a timeline: one row per distinct Bar.Row, first row at the
// top, one filled rectangle per bar coloured by phase. A phase whose every
// bar takes no time draws nothing a reader can see, so its legend entry
// says "(0 ns)" rather than name a colour that appears nowhere.
func addBars(p *plot.Plot, bars []Bar) error {
	var rows, phases []string
	timed := map[string]bool{} // phases with a bar of positive length
	for _, b := range bars {
		if !slices.Contains(rows, b.Row) {
			rows = append(rows, b.Row)
		}
		if !slices.Contains(phases, b.Phase) {
			phases = append(phases, b.Phase)
		}
		if b.End > b.Start {
			timed[b.Phase] = true
		}
	}
	legend := map[string]bool{}
	xmax := 0.0
	for _, b := range bars {
		if math.IsNaN(b.Start) || math.IsNaN(b.End) || math.IsInf(b.Start, 0) || math.IsInf(b.End, 0) {
			continue
		}
		xmax = max(xmax, b.End)
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
			label := b.Phase
			if !timed[b.Phase] {
				label += " (0 ns)"
			}
			p.Legend.Add(label, poly)
		}
	}
	ticks := make(plot.ConstantTicks, len(rows))
	for i, row := range rows {
		ticks[i] = plot.Tick{Value: float64(len(rows) - 1 - i), Label: row}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	if xmax <= 0 {
		xmax = 1
	}
	p.X.Min, p.X.Max = 0, xmax*1.04
	p.X.Tick.Marker = plot.ConstantTicks(niceTicks(0, xmax*1.04, false))
	return nil
}
