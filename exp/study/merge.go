package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
)

// Merge joins the results of one experiment over sweep combinations
// (values[i] belongs to results[i]) into one result. Without sweeps it
// returns the single result unchanged, so a study of one configuration
// writes exactly what "gpunetsim run" writes. With sweeps, every table gets
// one leading column per swept parameter, holding the row's value
// (params.SweepCell: a number with its unit in the CSV header); plot
// series are named "<series> name=value ..." (one colour each) and timeline
// rows are prefixed by the combination; notes are kept once each, in
// order; the swept parameters' values read "swept: v1, v2, ...".
func Merge(sweeps []params.Sweep, values [][]string, results []*report.Result) (*report.Result, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("no results to merge")
	}
	if len(sweeps) == 0 {
		return results[0], nil
	}
	first := results[0]
	m := &report.Result{Experiment: first.Experiment, Seed: first.Seed}
	m.Params = slices.Clone(first.Params)
	for i := range m.Params {
		for _, sw := range sweeps {
			if m.Params[i].Name == sw.Name {
				m.Params[i].Value = "swept: " + strings.Join(sw.Values, ", ")
			}
		}
	}
	var names []string
	for _, sw := range sweeps {
		names = append(names, sw.Name)
	}
	for ti, t := range first.Tables {
		mt := report.Table{Name: t.Name, Columns: append(slices.Clone(names), t.Columns...), Units: t.Units}
		for ri, r := range results {
			if ti >= len(r.Tables) || !slices.Equal(r.Tables[ti].Columns, t.Columns) {
				return nil, fmt.Errorf("table %q differs between sweep combinations; cannot merge", t.Name)
			}
			for _, row := range r.Tables[ti].Rows {
				cells := make([]any, 0, len(names)+len(row))
				for k, v := range values[ri] {
					cells = append(cells, params.SweepCell(names[k], v))
				}
				mt.Rows = append(mt.Rows, append(cells, row...))
			}
		}
		m.Tables = append(m.Tables, mt)
	}
	for _, r := range results {
		for _, n := range r.Notes {
			if !slices.Contains(m.Notes, n) {
				m.Notes = append(m.Notes, n)
			}
		}
	}
	if first.Plot != nil {
		m.Plot = mergePlots(names, values, results)
	}
	return m, nil
}

// Combination prints a sweep combination as "name=value name=value".
func Combination(names, values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = names[i] + "=" + v
	}
	return strings.Join(parts, " ")
}

func mergePlots(names []string, values [][]string, results []*report.Result) *report.Plot {
	p := *results[0].Plot
	p.Title += " — swept " + strings.Join(names, ", ")
	p.Series, p.Bars = nil, nil
	for ri, r := range results {
		if r.Plot == nil {
			continue
		}
		combo := Combination(names, values[ri])
		for _, s := range r.Plot.Series {
			s.Name += " " + combo
			p.Series = append(p.Series, s)
		}
		for _, b := range r.Plot.Bars {
			b.Row = combo + " " + b.Row
			p.Bars = append(p.Bars, b)
		}
	}
	return &p
}

// facets returns each combination's result labelled by the combination.
func facets(sweeps []params.Sweep, values [][]string, results []*report.Result) []report.Facet {
	var names []string
	for _, sw := range sweeps {
		names = append(names, sw.Name)
	}
	out := make([]report.Facet, len(results))
	for i, r := range results {
		out[i] = report.Facet{Label: Combination(names, values[i]), Result: r}
	}
	return out
}
