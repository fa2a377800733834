package exp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
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
	// counts that are not whole nodes of node.gpus before any work.
	Ranks func(cfg Config) (field string, counts []int)
}

// List returns the registered experiments sorted by name.
func List() []Experiment {
	all := experiments()
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
