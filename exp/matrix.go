package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// MatrixSpec holds the knobs of the strategy × workload matrix: every
// registered workload's small instance on every registered strategy.
type MatrixSpec struct {
	Workloads  []string `toml:"workloads" doc:"workloads of the matrix (default: every registered workload)" src:"RUN"`
	Strategies []string `toml:"strategies" doc:"strategies of the matrix (default: every registered strategy)" src:"RUN"`
	Hardware   string   `toml:"hardware" doc:"strategy = each strategy on its registry preset (as the documents run it); run = every cell on this run's hardware (--preset, --set)" src:"RUN"`
}

func defaultMatrix() MatrixSpec {
	m := MatrixSpec{Hardware: "strategy"}
	for _, w := range workload.Registry() {
		m.Workloads = append(m.Workloads, w.Name)
	}
	for _, s := range strategy.Registry() {
		m.Strategies = append(m.Strategies, string(s.Strategy))
	}
	return m
}

func (m MatrixSpec) validate() error {
	var errs []error
	if len(m.Workloads) == 0 {
		errs = append(errs, errors.New("matrix.workloads is empty: give at least one workload"))
	}
	for _, w := range m.Workloads {
		if _, err := workload.Lookup(w); err != nil {
			errs = append(errs, fmt.Errorf("matrix.workloads: %w", err))
		}
	}
	if len(m.Strategies) == 0 {
		errs = append(errs, errors.New("matrix.strategies is empty: give at least one strategy"))
	}
	for _, s := range m.Strategies {
		if _, err := strategy.Lookup(s); err != nil {
			errs = append(errs, fmt.Errorf("matrix.strategies: %w", err))
		}
	}
	if m.Hardware != "strategy" && m.Hardware != "run" {
		errs = append(errs, fmt.Errorf("matrix.hardware = %q: must be strategy or run", m.Hardware))
	}
	return errors.Join(errs...)
}

// matrixCell is one cell's result as the study cache stores it.
type matrixCell struct {
	Workload string            `json:"workload"`
	Strategy strategy.Strategy `json:"strategy"`
	Preset   string            `json:"preset"`
	Applies  bool              `json:"applies"`
	Reason   string            `json:"reason,omitempty"`
	Cell     workload.Cell     `json:"cell"`
}

func matrixPoints() Points {
	return Points{List: matrixList, Simulate: matrixSimulate, Assemble: matrixAssemble}
}

// runMatrix runs every (workload, strategy) cell of the matrix.
func runMatrix(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(matrixPoints(), cfg, env)
}

func matrixList(cfg Config) ([]Point, error) {
	var pts []Point
	for _, w := range cfg.Matrix.Workloads {
		for _, s := range cfg.Matrix.Strategies {
			pc := cfg
			pc.Matrix.Workloads, pc.Matrix.Strategies = []string{w}, []string{s}
			pts = append(pts, Point{Label: w + " × " + s, Config: pc})
		}
	}
	return pts, nil
}

func matrixSimulate(p Point, env Env) ([]byte, error) {
	cfg := p.Config
	w, err := workload.Lookup(cfg.Matrix.Workloads[0])
	if err != nil {
		return nil, err
	}
	s, err := strategy.Lookup(cfg.Matrix.Strategies[0])
	if err != nil {
		return nil, err
	}
	out := matrixCell{Workload: w.Name, Strategy: s.Strategy, Preset: cfg.Run.Preset}
	if _, ok := w.Impl(s); !ok {
		out.Reason = w.NotApplicable[s.Strategy]
		return json.Marshal(out)
	}
	hw := cfg.Spec
	if cfg.Matrix.Hardware == "strategy" {
		if hw, err = cluster.Preset(s.Preset); err != nil {
			return nil, err
		}
		out.Preset = s.Preset
	}
	cell, err := w.Small(s, s.Adjust(hw), strategyConfig(cfg), cfg.Run.Seed, cfg.Run.Functional)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", w.Name, s.Strategy, err)
	}
	out.Applies, out.Cell = true, cell
	return json.Marshal(out)
}

func matrixAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	cells, err := decodeResults[matrixCell](raw)
	if err != nil {
		return nil, err
	}
	base := map[string]sim.Time{}
	for _, c := range cells {
		if w, _ := workload.Lookup(c.Workload); c.Applies && w.Baseline == c.Strategy {
			base[c.Workload] = c.Cell.Time
		}
	}
	t := report.Table{Name: "matrix", Columns: []string{"workload", "strategy", "impl", "preset", "nodes", "time", "time_us",
		"verified", "baseline", "speedup_vs_baseline", "events", "not_applicable"}}
	allVerified, applicable := true, 0
	for _, c := range cells {
		w, _ := workload.Lookup(c.Workload)
		if !c.Applies {
			t.Rows = append(t.Rows, []any{c.Workload, string(c.Strategy), "-", "-", "-", "-", "-", "-", string(w.Baseline), "-", "-", c.Reason})
			continue
		}
		applicable++
		speedup := any("-")
		if b, ok := base[c.Workload]; ok && c.Cell.Time > 0 {
			speedup = round3(float64(b) / float64(c.Cell.Time))
		}
		t.Rows = append(t.Rows, []any{c.Workload, string(c.Strategy), c.Cell.Impl, c.Preset, c.Cell.Nodes, c.Cell.Time,
			round3(c.Cell.Time.Micros()), c.Cell.Verified, string(w.Baseline), speedup, c.Cell.Events, ""})
		allVerified = allVerified && c.Cell.Verified
	}
	res := &report.Result{Experiment: "matrix", Seed: cfg.Run.Seed, Tables: []report.Table{t}}
	res.Notes = append(res.Notes,
		"one small instance per (workload, strategy) cell; impl = the workload's implementation for the strategy's capabilities",
		"speedup_vs_baseline = the workload's baseline strategy time / the cell's time (the baseline the workload names)")
	if cfg.Run.Functional && allVerified {
		res.Notes = append(res.Notes, fmt.Sprintf("functional: all %d applicable cells matched their serial references", applicable))
	}
	if missing := matrixMissingBaselines(cfg, base); len(missing) > 0 {
		res.Notes = append(res.Notes, "no baseline in this run for: "+fmt.Sprint(missing))
	}
	return res, nil
}

// matrixMissingBaselines lists workloads whose baseline strategy is not in
// the run, so their speedups are blank.
func matrixMissingBaselines(cfg Config, base map[string]sim.Time) []string {
	var out []string
	for _, w := range cfg.Matrix.Workloads {
		if _, ok := base[w]; !ok && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
