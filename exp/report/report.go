// Package report holds the results of gpunetsim experiments and writes them
// as text tables, CSV, JSON and plots. Every result records all parameters
// (defaults included) and the seed, so a file alone says what produced it.
package report

// Param is one configuration value as it was used by a run.
type Param struct {
	Name  string `json:"name"`  // dotted name, e.g. "link.bandwidth"
	Value string `json:"value"` // printed with units, e.g. "100Gbps"
	Src   string `json:"src"`   // "DOC" (fixed by the literature), "DEFAULT" (a modelling choice) or "RUN" (run setup)
	Doc   string `json:"doc"`   // one-line description
}

// Table is a rectangular result: Columns name the cells of every row.
// Cells are string, int, int64, uint64, float64, bool or fmt.Stringer
// (sim.Time prints with its unit).
type Table struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
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
	Title  string   `json:"title"`
	XLabel string   `json:"xlabel"`
	YLabel string   `json:"ylabel"`
	LogX   bool     `json:"logx"`
	Series []Series `json:"series,omitempty"`
	Bars   []Bar    `json:"bars,omitempty"`
}

// Result is everything one experiment run produced.
type Result struct {
	Experiment string   `json:"experiment"`
	Seed       uint64   `json:"seed"`
	Params     []Param  `json:"params"`
	Tables     []Table  `json:"tables"`
	Plot       *Plot    `json:"plot,omitempty"`
	Notes      []string `json:"notes,omitempty"` // e.g. "functional: every node's result verified against a serial sum"
}
