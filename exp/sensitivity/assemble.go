package sensitivity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
)

// threshold is the smallest change, in percent, the per-output table
// lists: below it a knob does not move the output in any way that matters
// for a comparison.
const threshold = 0.5

// topPerOutput is how many knobs the per-output table lists per output.
const topPerOutput = 3

// tornadoBars is how many knobs the tornado plot shows.
const tornadoBars = 15

// effect is what moving one knob did to one output.
type effect struct {
	knob      string
	low, high float64 // the output with the knob divided / multiplied (NaN: absent or not run)
	lowRun    bool    // the divided run exists
	highRun   bool
}

// change returns the change of v from base as a percentage, and whether
// the output exists on both sides. A crossover that vanishes or appears
// counts as a 100% change.
func change(base, v float64) (float64, bool) {
	bNaN, vNaN := math.IsNaN(base), math.IsNaN(v)
	switch {
	case bNaN && vNaN:
		return 0, false
	case bNaN || vNaN:
		return 100, true
	case base == 0:
		return 0, v == 0
	}
	return (v - base) / math.Abs(base) * 100, true
}

// changeCell is one side's change of output o as a table cell: a
// Quantity in percent (the CSV's "change at ÷2 [%]" column), its text
// "+12.34%", or for a crossover its shift in its own unit with the
// percentage ("-2.59 nodes (-25.9%)"); "-" (an empty CSV cell) where there
// is no change to give, which flag then names.
func changeCell(o report.Output, v float64, ran bool) any {
	if !ran || math.IsNaN(o.Value) || math.IsNaN(v) {
		return "-"
	}
	pct, _ := change(o.Value, v)
	if o.Value == 0 {
		return "-" // a change from 0 has no percentage (flag: "from 0")
	}
	text := fmt.Sprintf("%+.2f%%", pct)
	if o.Crossover {
		text = fmt.Sprintf("%+.3g %s (%+.1f%%)", v-o.Value, o.Unit, pct)
	}
	return report.Quantity{Text: text, Value: round2(pct), Unit: "%"}
}

// valueCell is the output's value on one side as a table cell: a
// Quantity in the output's unit, "-" (empty) where it has none.
func valueCell(o report.Output, v float64, ran bool) any {
	if !ran || math.IsNaN(v) {
		return "-"
	}
	return report.Quantity{Text: strings.TrimSpace(fmt.Sprintf("%.4g %s", v, o.Unit)), Value: v, Unit: o.Unit}
}

// flag says in words why one side has no change in percent, "" when it
// has one: "not run" (the perturbed run was not made), "none" (the output
// exists on neither side), "vanishes", "appears" (a crossover), "from 0"
// (the base is 0, so no percentage).
func flag(o report.Output, v float64, ran bool) string {
	switch {
	case !ran:
		return "not run"
	case math.IsNaN(o.Value) && math.IsNaN(v):
		return "none"
	case math.IsNaN(v):
		return "vanishes"
	case math.IsNaN(o.Value):
		return "appears"
	case o.Value == 0:
		return "from 0"
	}
	return ""
}

// note joins the two sides' flags ("÷2 vanishes; ×2 not run"), "" when
// neither has one.
func note(o report.Output, e effect, factor float64) string {
	var parts []string
	if f := flag(o, e.low, e.lowRun); f != "" {
		parts = append(parts, fmt.Sprintf("÷%g %s", factor, f))
	}
	if f := flag(o, e.high, e.highRun); f != "" {
		parts = append(parts, fmt.Sprintf("×%g %s", factor, f))
	}
	return strings.Join(parts, "; ")
}

// outputs returns r's outputs: those the experiment declares, else every
// numeric cell of its first table, named by table, column and row key,
// without the table's rounded copies of durations (X_us beside X: one
// quantity, as in the CSV files) and with a value a row repeats once.
func outputs(r *report.Result) []report.Output {
	if len(r.Outputs) > 0 || len(r.Tables) == 0 {
		return r.Outputs
	}
	t := report.DropRoundedCopies(r.Tables[0])
	var out []report.Output
	for _, row := range t.Rows {
		if len(row) == 0 {
			continue
		}
		seen := map[float64]bool{} // a value a row repeats is one output
		for j := 1; j < len(row) && j < len(t.Columns); j++ {
			if v, ok := number(row[j]); ok && !seen[v] {
				seen[v] = true
				out = append(out, report.Output{Name: fmt.Sprintf("%s: %s at %s = %v", t.Name, t.Columns[j], t.Columns[0], row[0]), Value: v})
			}
		}
	}
	return out
}

func number(c any) (float64, bool) {
	switch v := c.(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	case sim.Time:
		return v.Micros(), true
	}
	return 0, false
}

// byName indexes outputs by name.
func byName(os []report.Output) map[string]float64 {
	m := make(map[string]float64, len(os))
	for _, o := range os {
		m[o.Name] = o.Value
	}
	return m
}

// baseOutputs returns the base run's outputs plus, valued NaN, every
// crossover that only a perturbed run has.
func baseOutputs(runs []*run) []report.Output {
	base := outputs(runs[0].res)
	have := byName(base)
	for _, r := range runs[1:] {
		for _, o := range outputs(r.res) {
			if _, ok := have[o.Name]; !ok && o.Crossover {
				have[o.Name] = math.NaN()
				base = append(base, report.Output{Name: o.Name, Value: math.NaN(), Unit: o.Unit, Crossover: true})
			}
		}
	}
	return base
}

// effects returns, per output, what each knob did to it.
func effects(outs []report.Output, ks []params.Info, runs []*run) [][]effect {
	vals := make(map[*run]map[string]float64, len(runs))
	for _, r := range runs[1:] {
		vals[r] = byName(outputs(r.res))
	}
	out := make([][]effect, len(outs))
	for i, o := range outs {
		for _, k := range ks {
			e := effect{knob: k.Name, low: math.NaN(), high: math.NaN()}
			for _, r := range runs[1:] {
				if r.knob != k.Name {
					continue
				}
				v, ok := vals[r][o.Name]
				if !ok {
					v = math.NaN()
				}
				if r.up {
					e.high, e.highRun = v, true
				} else {
					e.low, e.lowRun = v, true
				}
			}
			out[i] = append(out[i], e)
		}
	}
	return out
}

// size returns the larger absolute change of e, in percent.
func (e effect) size(base float64) float64 {
	m := 0.0
	for _, side := range []struct {
		v   float64
		ran bool
	}{{e.low, e.lowRun}, {e.high, e.highRun}} {
		if c, ok := change(base, side.v); ok && side.ran {
			m = max(m, math.Abs(c))
		}
	}
	return m
}

// hasOutput reports an error naming the outputs when outs has none named
// name. It is bad input (a noSuchOutput), though only the base run can
// name the outputs: a mistyped --output exited 1, as a failed run does.
func hasOutput(outs []report.Output, name string) error {
	if !slices.ContainsFunc(outs, func(x report.Output) bool { return x.Name == name }) {
		return noSuchOutput(fmt.Sprintf("--output %q: the experiment has no such output; it has %s", name, names(outs)))
	}
	return nil
}

// noSuchOutput is the error of an --output the experiment lacks: a
// configuration the run cannot serve (sim.ErrConfig, bad input).
type noSuchOutput string

func (e noSuchOutput) Error() string        { return string(e) }
func (e noSuchOutput) Is(target error) bool { return target == sim.ErrConfig }

func assemble(cfg exp.Config, name string, o Options, ks []params.Info, runs []*run, skipped []string) (*report.Result, error) {
	outs := baseOutputs(runs)
	if len(outs) == 0 {
		return nil, fmt.Errorf("experiment %s reports no numeric output to study", name)
	}
	effs := effects(outs, ks, runs)
	focus := 0
	if o.Output != "" {
		if err := hasOutput(outs, o.Output); err != nil {
			return nil, err
		}
		focus = slices.IndexFunc(outs, func(x report.Output) bool { return x.Name == o.Output })
	}
	res := &report.Result{Experiment: "sensitivity " + name, Seed: cfg.Run.Seed, Outputs: outs,
		Tables: []report.Table{knobTable(ks, runs, outs, effs, o.Factor), outputTable(outs, effs, o.Factor)}}
	res.Plot = tornado(outs[focus], effs[focus], o.Factor)
	res.Notes = append(res.Notes,
		fmt.Sprintf("how to read: each knob was divided by %g and multiplied by %g, one at a time, with every other parameter at its value below, and experiment %s re-run (%d runs: the base and %d perturbed); a change is the output's relative change (a crossover's shift in its own unit; a crossover that vanishes or appears counts as 100%%)", o.Factor, o.Factor, name, len(runs), len(runs)-1),
		fmt.Sprintf("table 'knobs': every knob studied, with the largest change it caused in any output; table 'outputs': per output, the %d knobs that move it most (only changes ≥ %.1f%%)", topPerOutput, threshold),
		fmt.Sprintf("plot: tornado of output %q: bars show its change with each knob divided (left colour) and multiplied (right colour) by %g", outs[focus].Name, o.Factor),
		"perturbed runs carry no payload bytes (the same timing); `gpunetsim run` verifies the base configuration functionally")
	for _, s := range skipped {
		res.Notes = append(res.Notes, "not perturbed: "+s)
	}
	return res, nil
}

func names(outs []report.Output) string {
	var n []string
	for i, o := range outs {
		if i == 5 {
			n = append(n, fmt.Sprintf("… (%d in all; --json lists them)", len(outs)))
			break
		}
		n = append(n, fmt.Sprintf("%q", o.Name))
	}
	return strings.Join(n, ", ")
}

// knobTable ranks the knobs by the largest change they caused in any
// output.
func knobTable(ks []params.Info, runs []*run, outs []report.Output, effs [][]effect, factor float64) report.Table {
	t := report.Table{Name: "knobs", Columns: []string{"knob", "value", fmt.Sprintf("value ÷%g", factor), fmt.Sprintf("value ×%g", factor), "largest change", "of output", "outputs moved ≥ 1%"},
		Units: map[string]string{"largest change": "%"}}
	type row struct {
		cells   []any
		largest float64
	}
	var rows []row
	for ki, k := range ks {
		// Values as numbers with units in the CSV (report.ParseQuantity);
		// "-", an empty CSV cell, for a run that was not made.
		low, high := any("-"), any("-")
		for _, r := range runs[1:] {
			if r.knob == k.Name && r.up {
				high = report.ParseQuantity(r.value)
			} else if r.knob == k.Name {
				low = report.ParseQuantity(r.value)
			}
		}
		largest, which, moved := 0.0, "-", 0
		for oi, o := range outs {
			sz := effs[oi][ki].size(o.Value)
			if sz >= 1 {
				moved++
			}
			if sz > largest {
				largest, which = sz, o.Name
			}
		}
		rows = append(rows, row{[]any{k.Name, report.ParseQuantity(k.Value), low, high, round2(largest), which, moved}, largest})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.largest, a.largest) })
	for _, r := range rows {
		t.Rows = append(t.Rows, r.cells)
	}
	return t
}

// outputTable lists, per output, the knobs that move it most: the
// change in percent on each side (numbers in the CSV, "change at ÷2 [%]"),
// a note naming in words what has no number, and the output's value on
// each side beside its unit (a run not made, a crossover that vanishes or
// appears), so that no CSV column mixes text and numbers.
func outputTable(outs []report.Output, effs [][]effect, factor float64) report.Table {
	down, up := fmt.Sprintf("÷%g", factor), fmt.Sprintf("×%g", factor)
	t := report.Table{Name: "outputs", Columns: []string{"output", "base", "knob", "change at " + down, "change at " + up, "note", "at " + down, "at " + up},
		// The changes are Quantities in percent; Units keeps the CSV
		// header's unit when no row has a change to give.
		Units: map[string]string{"change at " + down: "%", "change at " + up: "%"}}
	for oi, o := range outs {
		es := slices.Clone(effs[oi])
		slices.SortStableFunc(es, func(a, b effect) int { return cmp.Compare(b.size(o.Value), a.size(o.Value)) })
		// The base value prints with its unit; the CSV holds the number
		// beside a unit column, outputs of every kind sharing the column.
		base := valueCell(o, o.Value, true)
		listed := 0
		for _, e := range es {
			if listed == topPerOutput || e.size(o.Value) < threshold {
				break
			}
			t.Rows = append(t.Rows, []any{o.Name, base, e.knob,
				changeCell(o, e.low, e.lowRun), changeCell(o, e.high, e.highRun), note(o, e, factor),
				valueCell(o, e.low, e.lowRun), valueCell(o, e.high, e.highRun)})
			listed++
		}
		if listed == 0 {
			t.Rows = append(t.Rows, []any{o.Name, base, "-", "-", "-", fmt.Sprintf("no knob moves it by %.1f%% or more", threshold), "-", "-"})
		}
	}
	return t
}

// tornado draws output o's change with every knob that moves it, largest
// span at the top.
func tornado(o report.Output, es []effect, factor float64) *report.Plot {
	p := &report.Plot{Title: fmt.Sprintf("What moves %s (%.4g %s)", o.Name, o.Value, o.Unit), XLabel: "change of the output (%)"}
	if o.Crossover {
		p.XLabel = "shift of the crossover (%, vanishing = ±100)"
	}
	type bar struct {
		knob      string
		low, high float64
	}
	var bars []bar
	for _, e := range es {
		lo, _ := change(o.Value, e.low)
		hi, _ := change(o.Value, e.high)
		if !e.lowRun {
			lo = 0
		}
		if !e.highRun {
			hi = 0
		}
		if math.Max(math.Abs(lo), math.Abs(hi)) >= 0.01 {
			bars = append(bars, bar{e.knob, lo, hi})
		}
	}
	slices.SortStableFunc(bars, func(a, b bar) int {
		return cmp.Compare(math.Max(math.Abs(b.low), math.Abs(b.high)), math.Max(math.Abs(a.low), math.Abs(a.high)))
	})
	if len(bars) > tornadoBars {
		bars = bars[:tornadoBars]
	}
	for _, b := range bars {
		p.Tornado = append(p.Tornado, report.TornadoBar{Label: b.knob, Low: b.low, High: b.high})
	}
	p.TornadoLegend = [2]string{fmt.Sprintf("knob ÷ %g", factor), fmt.Sprintf("knob × %g", factor)}
	return p
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
