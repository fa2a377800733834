package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
	Hardware   string   `toml:"hardware" doc:"workload = every cell of a workload on the preset the documents run that workload on; strategy = each strategy on its own registry preset; run = every cell on this run's hardware (--preset, --set). In each, a strategy whose memory mode changes the hardware forms its own comparison group, with the workload's baseline run again on that hardware: speedups never divide times from two machines" src:"RUN"`
}

// The values of matrix.hardware.
const (
	matrixOnWorkload = "workload"
	matrixOnStrategy = "strategy"
	matrixOnRun      = "run"
)

func defaultMatrix() MatrixSpec {
	m := MatrixSpec{Hardware: matrixOnWorkload}
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
	if m.Hardware != matrixOnWorkload && m.Hardware != matrixOnStrategy && m.Hardware != matrixOnRun {
		errs = append(errs, fmt.Errorf("matrix.hardware = %q: must be workload, strategy or run", m.Hardware))
	}
	return errors.Join(errs...)
}

// matrixCell is one cell's result as the study cache stores it.
type matrixCell struct {
	Workload string            `json:"workload"`
	Strategy strategy.Strategy `json:"strategy"`
	// Hardware names the machine the cell ran on (its comparison group):
	// the preset, with the memory mode when the strategy changed it and
	// "modified" when --set or --config changed the preset's values.
	Hardware string `json:"hardware"`
	Preset   string `json:"preset"`
	GPUMode  string `json:"gpu_mode"`
	// Added marks a baseline run only to give a comparison group its own
	// baseline (the baseline strategy is not in matrix.strategies, or runs
	// on other hardware).
	Added   bool   `json:"added,omitempty"`
	Applies bool   `json:"applies"`
	Reason  string `json:"reason,omitempty"`
	// Unfit says why this run's hardware cannot hold an applicable cell.
	Unfit string        `json:"unfit,omitempty"`
	Cell  workload.Cell `json:"cell"`
}

func matrixPoints() Points {
	return Points{List: matrixList, Simulate: matrixSimulate, Assemble: matrixAssemble}
}

// runMatrix runs every (workload, strategy) cell of the matrix.
func runMatrix(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(matrixPoints(), cfg, env)
}

// matrixHardware returns the preset and the hardware cell (w, s) runs on
// under cfg.Matrix.Hardware, the strategy's memory mode applied.
func matrixHardware(cfg Config, w workload.Def, s strategy.Def) (string, cluster.Spec, error) {
	preset, hw := cfg.Run.Preset, cfg.Spec
	switch cfg.Matrix.Hardware {
	case matrixOnWorkload, matrixOnStrategy:
		preset = w.Preset
		if cfg.Matrix.Hardware == matrixOnStrategy {
			preset = s.Preset
		}
		var err error
		if hw, err = cluster.Preset(preset); err != nil {
			return "", hw, err
		}
	}
	return preset, s.Adjust(hw), nil
}

// hardwareLabel names hardware hw started from preset: the preset's name,
// the memory mode when it differs from the preset's, and "modified" when
// other values differ.
func hardwareLabel(preset string, hw cluster.Spec) string {
	p, err := cluster.Preset(preset)
	if err != nil {
		return preset + " (modified)"
	}
	label := preset
	if hw.GPU.Mode != p.GPU.Mode {
		label += " gpu.mode=" + hw.GPU.Mode
		p.GPU.Mode = hw.GPU.Mode
	}
	if !reflect.DeepEqual(p, hw) {
		label += " (modified)"
	}
	return label
}

// matrixPoint is the point of cell (w, s) on preset and hardware hw: the
// configuration carries the hardware itself (matrix.hardware = run), so a
// point's cache key is what it ran.
func matrixPoint(cfg Config, w workload.Def, s strategy.Def, preset string, hw cluster.Spec, added bool) Point {
	pc := cfg
	pc.Matrix.Workloads, pc.Matrix.Strategies = []string{w.Name}, []string{string(s.Strategy)}
	pc.Matrix.Hardware = matrixOnRun
	pc.Run.Preset, pc.Spec = preset, hw
	label := w.Name + " × " + string(s.Strategy) + " on " + hardwareLabel(preset, hw)
	if added {
		label += " (group baseline)"
	}
	return Point{Label: label, Config: pc}
}

func matrixList(cfg Config) ([]Point, error) {
	pts, _, err := matrixPlan(cfg)
	return pts, err
}

// matrixPlan lists, per workload, every strategy's cell on its hardware,
// then for every comparison group (hardware) without the workload's
// baseline, the baseline run on that hardware (added[i] marks those).
func matrixPlan(cfg Config) (pts []Point, added []bool, err error) {
	for _, wn := range cfg.Matrix.Workloads {
		w, err := workload.Lookup(wn)
		if err != nil {
			return nil, nil, err
		}
		type group struct {
			preset string
			hw     cluster.Spec
		}
		var groups []group
		haveBase := map[string]bool{}
		for _, sn := range cfg.Matrix.Strategies {
			s, err := strategy.Lookup(sn)
			if err != nil {
				return nil, nil, err
			}
			preset, hw, err := matrixHardware(cfg, w, s)
			if err != nil {
				return nil, nil, err
			}
			pts, added = append(pts, matrixPoint(cfg, w, s, preset, hw, false)), append(added, false)
			if _, ok := w.Impl(s); !ok {
				continue
			}
			label := hardwareLabel(preset, hw)
			if !slices.ContainsFunc(groups, func(g group) bool { return hardwareLabel(g.preset, g.hw) == label }) {
				groups = append(groups, group{preset, hw})
			}
			if s.Strategy == w.Baseline {
				haveBase[label] = true
			}
		}
		b, err := strategy.Lookup(string(w.Baseline))
		if err != nil {
			return nil, nil, err
		}
		for _, g := range groups {
			// A baseline whose own memory mode would change the group's
			// hardware cannot serve as its baseline: the group then has no
			// speedups (the report says so).
			if label := hardwareLabel(g.preset, g.hw); !haveBase[label] && reflect.DeepEqual(b.Adjust(g.hw), g.hw) {
				pts, added = append(pts, matrixPoint(cfg, w, b, g.preset, g.hw, true)), append(added, true)
			}
		}
	}
	return pts, added, nil
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
	out := matrixCell{Workload: w.Name, Strategy: s.Strategy}
	if _, ok := w.Impl(s); !ok {
		out.Reason = w.NotApplicable[s.Strategy]
		return json.Marshal(out)
	}
	preset, hw, err := matrixHardware(cfg, w, s)
	if err != nil {
		return nil, err
	}
	out.Preset, out.GPUMode, out.Hardware = preset, hw.GPU.Mode, hardwareLabel(preset, hw)
	// A cell the run's hardware cannot hold (its NIC lacks the strategy's
	// mechanism, or its topology cannot join the instance's node count)
	// is a row saying so, not a failed matrix.
	if err := s.RunsOn(hw); err != nil {
		out.Unfit = err.Error()
		return json.Marshal(out)
	}
	cell, err := w.Small(s, hw, strategyConfig(cfg), cfg.Run.Seed, cfg.Run.Functional)
	if errors.Is(err, workload.ErrHardwareShape) {
		out.Unfit = err.Error()
		return json.Marshal(out)
	}
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
	_, added, err := matrixPlan(cfg) // listing does not simulate
	if err != nil {
		return nil, err
	}
	if len(added) != len(cells) {
		return nil, fmt.Errorf("matrix: %d results for %d points", len(cells), len(added))
	}
	type key struct{ workload, hardware string }
	base := map[key]sim.Time{}
	for i, c := range cells {
		cells[i].Added = added[i]
		if w, _ := workload.Lookup(c.Workload); c.Applies && w.Baseline == c.Strategy {
			base[key{c.Workload, c.Hardware}] = c.Cell.Time
		}
	}
	t := report.Table{Name: "matrix", Columns: []string{"workload", "hardware", "strategy", "impl", "preset", "gpu_mode", "nodes", "time", "time_us",
		"verified", "baseline", "speedup_vs_baseline", "events", "row", "not_applicable"}}
	allVerified, applicable := true, 0
	var groupsWithout []string
	// Report order: per workload, its comparison groups in order of first
	// appearance (each with its cells, the added baseline included), then
	// its cells that do not apply.
	for _, wn := range cfg.Matrix.Workloads {
		w, _ := workload.Lookup(wn)
		var hws []string
		for _, c := range cells {
			if c.Workload == wn && c.Applies && !slices.Contains(hws, c.Hardware) {
				hws = append(hws, c.Hardware)
			}
		}
		for _, hwl := range hws {
			b, hasBase := base[key{wn, hwl}]
			if !hasBase {
				groupsWithout = append(groupsWithout, wn+" on "+hwl)
			}
			for _, c := range cells {
				if c.Workload != wn || !c.Applies || c.Hardware != hwl {
					continue
				}
				applicable++
				speedup := any("-")
				if hasBase && c.Cell.Time > 0 {
					speedup = round3(float64(b) / float64(c.Cell.Time))
				}
				row := "cell"
				if c.Added {
					row = "group baseline"
				}
				checked := any("-") // payload-free: nothing was compared (no check, not a failed one)
				if cfg.Run.Functional {
					checked = c.Cell.Verified
				}
				t.Rows = append(t.Rows, []any{c.Workload, c.Hardware, string(c.Strategy), c.Cell.Impl, c.Preset, c.GPUMode, c.Cell.Nodes, c.Cell.Time,
					round3(c.Cell.Time.Micros()), checked, string(w.Baseline), speedup, c.Cell.Events, row, ""})
				allVerified = allVerified && c.Cell.Verified
			}
		}
		for _, c := range cells {
			switch {
			case c.Workload == wn && c.Unfit != "":
				t.Rows = append(t.Rows, []any{c.Workload, c.Hardware, string(c.Strategy), "-", c.Preset, c.GPUMode, "-", "-", "-", "-", string(w.Baseline), "-", "-", "hardware cannot run it", c.Unfit})
			case c.Workload == wn && !c.Applies:
				t.Rows = append(t.Rows, []any{c.Workload, "-", string(c.Strategy), "-", "-", "-", "-", "-", "-", "-", string(w.Baseline), "-", "-", "not applicable", c.Reason})
			}
		}
	}
	res := &report.Result{Experiment: "matrix", Seed: cfg.Run.Seed, Tables: []report.Table{t}}
	onWhat := map[string]string{
		matrixOnWorkload: "each workload's cells on the preset the documents run it on (matrix.hardware = workload)",
		matrixOnStrategy: "each strategy on its registry preset (matrix.hardware = strategy)",
		matrixOnRun:      "every cell on this run's hardware (matrix.hardware = run)",
	}[cfg.Matrix.Hardware]
	res.Notes = append(res.Notes,
		"one small instance per (workload, strategy) cell; impl = the workload's implementation for the strategy's capabilities; "+onWhat,
		"hardware = the comparison group: the preset, with the GPU memory mode where the strategy sets its own; speedup_vs_baseline = the workload's baseline time on the same hardware / the cell's time, never a ratio of two machines",
		"row = group baseline: the workload's baseline run again so a group on other hardware has its own baseline; row = hardware cannot run it: this run's hardware lacks the strategy's NIC mechanism or cannot join the instance's node count (the reason says which)")
	if cfg.Run.Functional && allVerified {
		res.Notes = append(res.Notes, fmt.Sprintf("functional: all %d applicable cells matched their serial references", applicable))
	}
	if len(groupsWithout) > 0 {
		res.Notes = append(res.Notes, "no baseline on the same hardware (speedups blank) for: "+fmt.Sprint(groupsWithout))
	}
	if cfg.Matrix.Hardware == matrixOnRun && cfg.Node.GPUs > 1 {
		res.Notes = append(res.Notes, "a small instance of fewer GPUs than whole nodes (nodes column): "+placementText(cfg))
	}
	if n := unusedHardwareNote(cfg); n != "" {
		res.Notes = append(res.Notes, n)
	}
	return res, nil
}

// unusedHardwareNote says, when the cells run on the workloads' or the
// strategies' presets, that hardware values the user changed from this
// run's preset (--set, --config) were not used: the parameter list marks
// them as set, so without the note a changed value would look applied.
func unusedHardwareNote(cfg Config) string {
	if cfg.Matrix.Hardware == matrixOnRun {
		return ""
	}
	p, err := cluster.Preset(cfg.Run.Preset)
	if err != nil || reflect.DeepEqual(p, cfg.Spec) {
		return ""
	}
	return "hardware values set for this run (--set, --config) are not used: each cell runs on its " +
		map[string]string{matrixOnWorkload: "workload's", matrixOnStrategy: "strategy's"}[cfg.Matrix.Hardware] +
		" preset; --set matrix.hardware=run runs every cell on this run's hardware"
}
