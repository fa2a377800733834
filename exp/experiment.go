package exp

import (
	"errors"
	"fmt"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// ErrVerification is wrapped by the error of a run whose result does not
// match its reference (delivered bytes, counts or values): the run fails
// (exit 1), whatever its notes say.
var ErrVerification = errors.New("verification failed")

// Env is what the caller lends a run besides its configuration.
type Env struct {
	// Tracer, when non-nil, receives spans of every simulated agent.
	Tracer sim.Tracer
	// Progress, when non-nil, is told after each finished simulation how
	// much of the run is done: done of total units, each point weighing
	// its expected work (Work) when Work is set, else one unit.
	Progress func(done, total int)
	// Work, when non-nil, estimates the work of a point from its
	// configuration (e.g. ExpectedWork of the experiment), so that
	// Progress, and an ETA drawn from it, weighs large points more.
	Work func(point Config) float64
	// Cores is how many cores one simulation may use (run.partitions = 0
	// splits a large allreduce over them); 0 or 1: one. RunPoints sets it
	// to the cores its workers leave free.
	Cores int
	// Arena, when non-nil, recycles the node memories' mapped backings
	// from one simulation to the next on the same worker (mem.Arena):
	// RunPoints sets it for the points its memory budget gates.
	Arena *mem.Arena
}

// Experiment is a named, runnable study.
type Experiment struct {
	Name    string
	Summary string
	Run     func(cfg Config, env Env) (*report.Result, error)
	// Points, when set, splits Run into independent simulation points so
	// that studies cache and distribute them (Run should then be
	// RunPoints(*Points, …)). Without it a study runs Run whole, uncached.
	Points *Points
	// Sizes edit the default configuration for "gpunetsim report".
	Sizes Sizes
	// Partitions, when set, checks a configuration with run.partitions > 1
	// (partition.go); without it the experiment refuses one.
	Partitions func(cfg Config) error
	// Ranks, when set, returns the GPU counts the experiment builds its
	// clusters of and the parameter that sets them, so CheckRun refuses
	// counts the topology cannot join (or, partitioned, that are not
	// whole nodes of node.gpus) before any work, and the report says
	// where node.placement put fewer GPUs than whole nodes.
	Ranks func(cfg Config) (field string, counts []int)
	// Runs lists the strategies the experiment runs whatever its
	// strategy lists say (gpurdma's GPU-initiated verbs): CheckRun
	// refuses a preset whose NIC cannot run one (Hardware).
	Runs []strategy.Strategy
	// Check, when set, refuses what else the experiment cannot run as
	// asked (today: values it would apply to none of its presets); CheckRun
	// calls it.
	Check func(cfg Config) error
}

// Hardware reports why spec's NIC cannot run a strategy the experiment
// always runs (Runs), naming the strategy; nil when it can.
func (e Experiment) Hardware(spec cluster.Spec, preset string) error {
	for _, s := range e.Runs {
		d, err := strategy.Lookup(string(s))
		if err != nil {
			return err
		}
		if err := d.RunsOn(spec); err != nil {
			return fmt.Errorf("%s runs %s: %w (preset %s)", e.Name, s, err, preset)
		}
	}
	return nil
}

// List returns the registered experiments sorted by name.
func List() []Experiment {
	all := experiments()
	for i := range all {
		all[i] = all[i].withPlacementNote()
	}
	slices.SortFunc(all, func(a, b Experiment) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Lookup returns the named experiment.
func Lookup(name string) (Experiment, error) {
	var names []string
	for _, e := range List() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return Experiment{}, fmt.Errorf("unknown experiment %q: must be one of %s", name, strings.Join(names, ", "))
}

// withPlacementNote makes e's reports (Run, and Points.Assemble for the
// studies) say where node.placement put the ranks of a run on fewer GPUs
// than whole nodes (PlacementNote).
func (e Experiment) withPlacementNote() Experiment {
	if e.Ranks == nil {
		return e
	}
	note := func(cfg Config, res *report.Result) {
		if n := e.PlacementNote(cfg); n != "" && res != nil && !slices.Contains(res.Notes, n) {
			res.Notes = append(res.Notes, n)
		}
	}
	run := e.Run
	e.Run = func(cfg Config, env Env) (*report.Result, error) {
		res, err := run(cfg, env)
		note(cfg, res)
		return res, err
	}
	if e.Points != nil {
		ps := *e.Points
		assemble := ps.Assemble
		ps.Assemble = func(cfg Config, raw [][]byte) (*report.Result, error) {
			res, err := assemble(cfg, raw)
			note(cfg, res)
			return res, err
		}
		e.Points = &ps
	}
	return e
}
