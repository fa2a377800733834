package exp

import (
	"encoding/json"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	hwmem "github.com/gpunetsim/gpunetsim/hw/mem"
)

// Point is one independent simulation of an experiment's sweep: the unit
// that a study runs, caches and distributes over Slurm tasks.
type Point struct {
	// Label names the point within its sweep, e.g. "GPUTN n=4".
	Label string
	// Config is the configuration narrowed to this point (e.g. one node
	// count and one strategy): the point's result depends on nothing else
	// besides the program, so a hash of Config keys its cached result, and
	// a larger sweep that contains the same point reuses it.
	Config Config
}

// Points splits an experiment into independent simulation points. An
// experiment that provides it gets study sweeps, the result cache and Slurm
// slices; one that does not still runs in a study, through its Run, uncached.
type Points struct {
	// List returns the points of a validated cfg's sweep, in report order.
	List func(cfg Config) ([]Point, error)
	// Simulate runs one point and returns its result encoded as JSON.
	// It must be deterministic: same Point, same bytes.
	Simulate func(p Point, env Env) ([]byte, error)
	// Assemble builds the report of cfg from the results of List(cfg), in
	// the same order. It must not simulate.
	Assemble func(cfg Config, results [][]byte) (*report.Result, error)
	// Memory, when set, estimates a point's simulation memory in bytes
	// (the process itself excluded), so that RunPoints runs at once only
	// points whose estimates fit in run.mem_budget together.
	Memory func(point Config) float64
	// Work, when set, estimates a point's expected work from the point
	// itself (an experiment whose points run other experiments, such as
	// today, knows from the label which one); without it a point weighs
	// ExpectedWork of the experiment on its configuration.
	Work func(p Point) float64
}

// PointWork is the expected work of point p of experiment e (Points.Work,
// else ExpectedWork of e on p's configuration): the weight of p in
// progress bars and ETAs.
func (e Experiment) PointWork(p Point) float64 {
	if e.Points != nil && e.Points.Work != nil {
		return e.Points.Work(p)
	}
	return ExpectedWork(e.Name, p.Config)
}

// Sizes edit an experiment's default configuration to the sizes that
// "gpunetsim report" runs. A nil edit leaves the configuration as it is.
type Sizes struct {
	// Default is the report's study size: every figure at a useful
	// resolution in reasonable time.
	Default func(cfg *Config)
	// Quick runs in seconds, for tests and CI.
	Quick func(cfg *Config)
}

// RunPoints runs every point of cfg on cfg.Run.Parallel workers and
// assembles the report: the Run of an experiment that has Points.
// Results go through their JSON form, so a report assembled from cached
// results is byte-identical to one assembled from fresh ones.
func RunPoints(ps Points, cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pts, err := ps.List(cfg)
	if err != nil {
		return nil, err
	}
	results := make([][]byte, len(pts))
	env.Cores = coresPerRun(cfg, env, len(pts))
	var weights []int
	if env.Work != nil {
		work := func(p Point) float64 { return env.Work(p.Config) }
		if ps.Work != nil {
			work = ps.Work
		}
		weights = workUnits(pts, work)
	}
	var mem []float64
	if ps.Memory != nil && cfg.Run.MemBudget > 0 && env.Tracer == nil {
		mem = make([]float64, len(pts))
		for i, p := range pts {
			mem[i] = ps.Memory(p.Config)
		}
	}
	err = forEachGated(cfg, env, len(pts), weights, mem, func(i, cores int, arena *hwmem.Arena) error {
		env := env
		if mem != nil {
			env.Cores = cores // the cores the points running beside it leave
			env.Arena = arena
		}
		r, err := ps.Simulate(pts[i], env)
		if err != nil {
			return fmt.Errorf("%s: %w", pts[i].Label, err)
		}
		results[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ps.Assemble(cfg, results)
}

// workUnits turns the points' expected work into whole progress units:
// the largest point counts 1000, none less than 1.
func workUnits(pts []Point, work func(Point) float64) []int {
	ws := make([]float64, len(pts))
	top := 0.0
	for i, p := range pts {
		ws[i] = work(p)
		top = max(top, ws[i])
	}
	units := make([]int, len(pts))
	for i, w := range ws {
		units[i] = 1
		if top > 0 {
			units[i] = max(1, int(1000*w/top+0.5))
		}
	}
	return units
}

// decodeResults decodes every point result into a T.
func decodeResults[T any](results [][]byte) ([]T, error) {
	out := make([]T, len(results))
	for i, r := range results {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("point %d: decoding its result: %w", i, err)
		}
	}
	return out, nil
}
