package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// addTornado draws a tornado chart: one row per bar, the first at the top,
// a bar from 0 to Low in the first colour and from 0 to High in the second,
// and a vertical line at 0.
func addTornado(p *plot.Plot, pl *Plot) error {
	rows := len(pl.Tornado)
	xmax := 0.0
	colours := [2]color.Color{plotPalette[0], plotPalette[1]}
	legend := [2]bool{}
	for i, b := range pl.Tornado {
		y := float64(rows - 1 - i)
		for side, v := range [2]float64{b.Low, b.High} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
				continue
			}
			xmax = max(xmax, math.Abs(v))
			// Down and up share the row, each in half of it, so both show
			// when they point the same way.
			y0 := y - 0.4 + 0.4*float64(side)
			poly, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: y0}, {X: v, Y: y0}, {X: v, Y: y0 + 0.38}, {X: 0, Y: y0 + 0.38}})
			if err != nil {
				return fmt.Errorf("report: tornado bar %q: %w", b.Label, err)
			}
			poly.Color = colours[side]
			poly.LineStyle.Width = 0
			p.Add(poly)
			if !legend[side] && pl.TornadoLegend[side] != "" {
				legend[side] = true
				p.Legend.Add(pl.TornadoLegend[side], poly)
			}
		}
	}
	if xmax == 0 {
		xmax = 1
		// Every bar is 0 (no knob moves the output, no winner changes):
		// say so in the chart, which would otherwise look empty, as if
		// drawing had failed.
		if rows > 0 {
			msg, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: -1, Y: float64(rows-1) / 2}}, Labels: []string{"every bar is 0: nothing changes"}})
			if err != nil {
				return fmt.Errorf("report: tornado note: %w", err)
			}
			msg.Offset.Y = vg.Points(4) // above the row line, from the left edge
			p.Add(msg)
		}
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.6}, {X: 0, Y: float64(rows) - 0.4}})
	if err != nil {
		return fmt.Errorf("report: tornado axis: %w", err)
	}
	zero.Color = color.Black
	p.Add(zero)
	ticks := make(plot.ConstantTicks, rows)
	for i, b := range pl.Tornado {
		ticks[i] = plot.Tick{Value: float64(rows - 1 - i), Label: b.Label}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.6, float64(rows)-0.4
	p.X.Min, p.X.Max = -xmax*1.1, xmax*1.1
	p.X.Tick.Marker = plot.ConstantTicks(niceTicks(-xmax*1.1, xmax*1.1, false))
	return nil
}
