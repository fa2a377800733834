package report

import (
	"encoding/json"
	"math"
)

// Param is one configuration value as it was used by a run.
type Param struct {
	Name  string `json:"name"`  // dotted name, e.g. "link.bandwidth"
	Value string `json:"value"` // printed with units, e.g. "100Gbps"
	Src   string `json:"src"`   // "DOC" (fixed by the literature), "DEFAULT" (a modelling choice) or "RUN" (run setup)
	Doc   string `json:"doc"`   // one-line description
	// Set marks a value the user chose: it differs from the preset's
	// default. Reports flag it ("*" in text, "set" in HTML).
	Set bool `json:"set,omitempty"`
	// NoSource marks a value nobody has published (a present-day
	// preset's "DEFAULT, no source" knob): reports list these apart, as
	// values to sweep before a result is trusted.
	NoSource bool `json:"no_source,omitempty"`
}

// Table is a rectangular result: Columns name the cells of every row.
// Cells are string, int, int64, uint64, float64, bool or fmt.Stringer
// (sim.Time prints with its unit).
type Table struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// Units names the unit of columns that hold plain numbers ("block":
	// "B"), by column name: the CSV forms head such a column "block [B]".
	// Durations (sim.Time) and sizes (unit.Bytes) need no entry.
	Units map[string]string `json:"units,omitempty"`
}

// Series is one line of a plot.
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
}

// Bar is one interval of a timeline (Gantt) plot: on row Row, phase Phase
// from Start to End (x units).
type Bar struct {
	Row   string  `json:"row"`
	Phase string  `json:"phase"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Plot describes a line plot over one or more series, or, when Bars is
// non-empty, a timeline with one row per distinct Bar.Row (top to bottom in
// order of first appearance) and one colour per phase.
type Plot struct {
	Title  string `json:"title"`
	XLabel string `json:"xlabel"`
	YLabel string `json:"ylabel"`
	LogX   bool   `json:"logx"`
	// Categorical marks an x axis that numbers categories (table rows,
	// inputs) rather than measuring a quantity: no crossovers on it.
	Categorical bool `json:"categorical,omitempty"`
	// Better says which way the y values improve: "lower" (times),
	// "higher" (speedups, rates) or "" to infer it from YLabel (see
	// BetterDirection).
	Better string   `json:"better,omitempty"`
	Series []Series `json:"series,omitempty"`
	Bars   []Bar    `json:"bars,omitempty"`
	// Tornado, when non-empty, makes the plot a tornado chart: one row per
	// bar, top to bottom, each showing the change of one output when one
	// knob is moved down (Low) and up (High); TornadoLegend names the two.
	Tornado       []TornadoBar `json:"tornado,omitempty"`
	TornadoLegend [2]string    `json:"tornado_legend,omitzero"`
}

// TornadoBar is one row of a tornado chart: the output's change (x units,
// e.g. percent) with the knob Label moved down and up.
type TornadoBar struct {
	Label string  `json:"label"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// Result is everything one experiment run produced.
type Result struct {
	Experiment string `json:"experiment"`
	Seed       uint64 `json:"seed"`
	// Provenance, set by the command that writes the result, records the
	// program, command line, host and wall time (nil inside experiments).
	Provenance *Provenance `json:"provenance,omitempty"`
	Params     []Param     `json:"params"`
	Tables     []Table     `json:"tables"`
	Plot       *Plot       `json:"plot,omitempty"`
	Notes      []string    `json:"notes,omitempty"` // e.g. "functional: every node's result verified against a serial sum"
	// Outputs are the experiment's scalar results (times, speedups,
	// crossovers), the headline first, for sensitivity studies to compare.
	Outputs []Output `json:"outputs,omitempty"`
}

// Output is one scalar result of an experiment, named so that a reader
// needs no code to know what it is, e.g. "GPUTN speedup vs CPU at 64
// nodes".
type Output struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"` // "us", "x", "nodes", …
	// Crossover marks a crossover point: it may vanish or appear when a
	// parameter moves, and its change is read in Unit, not in percent.
	Crossover bool `json:"crossover,omitempty"`
}

// MarshalJSON writes o with a value that is not a finite number (NaN: a
// crossover only a sensitivity study's perturbed runs have) as null, which
// JSON can hold: before, such an output made `sensitivity --json` fail.
func (o Output) MarshalJSON() ([]byte, error) {
	type plain Output // the same fields without this method
	if !math.IsNaN(o.Value) && !math.IsInf(o.Value, 0) {
		return json.Marshal(plain(o))
	}
	return json.Marshal(struct {
		plain
		Value *float64 `json:"value"` // shadows plain's: null
	}{plain: plain(o)})
}
