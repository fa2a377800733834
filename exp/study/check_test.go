package study

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A study (and so "gpunetsim study" and "gpunetsim report") refuses a
// result holding a negative time, as "gpunetsim run" does, whether the
// points were simulated now or read from the cache: the experiment's
// Assemble here stands for a model that broke its invariant.
func TestStudyRefusesNegativeTimes(t *testing.T) {
	e, err := exp.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	pts := *e.Points
	assemble := pts.Assemble
	pts.Assemble = func(cfg exp.Config, raw [][]byte) (*report.Result, error) {
		r, err := assemble(cfg, raw)
		if err != nil {
			return nil, err
		}
		r.Tables[0].Rows[0] = append([]any(nil), r.Tables[0].Rows[0]...)
		for j, c := range r.Tables[0].Rows[0] {
			if _, ok := c.(sim.Time); ok {
				r.Tables[0].Rows[0][j] = sim.Time(-1)
			}
		}
		return r, nil
	}
	e.Points = &pts
	s, err := Single(e, params.Options{Sets: []string{"allreduce.nodes=2", "allreduce.size=96KiB", "allreduce.strategies=CPU"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cache := openCache(t, t.TempDir())
	for _, pass := range []string{"simulated", "cached"} {
		_, err := Execute(context.Background(), expand(t, s), Options{Cache: cache, Parallel: 1})
		if err == nil || !strings.Contains(err.Error(), "holds the negative time -1ps") {
			t.Errorf("%s points: err = %v, want the negative time named", pass, err)
		}
	}
}

// An entry whose own lists cross into more points than the memory limit
// can plan is refused before its points are listed (listing them is what
// would exhaust the memory), naming the lists; a run check (the CLI's
// memory estimate of the run's simulations) runs before the listing too.
func TestOwnListsRefusedBeforeListing(t *testing.T) {
	e, err := exp.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	pts := *e.Points
	pts.List = func(exp.Config) ([]exp.Point, error) {
		t.Fatal("points listed before the memory check")
		return nil, nil
	}
	e.Points = &pts
	s, err := Single(e, params.Options{Sets: []string{"allreduce.nodes=2-20001", "allreduce.strategies=CPU,HDN"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ExpandWithin(s, testVersion, MemLimit{Bytes: 512 << 20, What: "test limit"})
	if err == nil || !strings.Contains(err.Error(), "allreduce.nodes (20000 values) × allreduce.strategies (2 values): up to 4e+04 points") {
		t.Errorf("err = %v, want the lists named", err)
	}
	refuse := errors.New("the run's simulations do not fit")
	_, err = ExpandWithin(s, testVersion, MemLimit{Run: func(name string, cfg exp.Config) error {
		if name != "allreduce" || len(cfg.Allreduce.Nodes) != 20000 {
			t.Errorf("run check of %s with %d node counts", name, len(cfg.Allreduce.Nodes))
		}
		return refuse
	}})
	if !errors.Is(err, refuse) {
		t.Errorf("err = %v, want the run check's", err)
	}
}

// The bound follows how an experiment expands its lists: gio adds a
// work-group scaling (giobench.wgs) to its strategies × sizes, so 4 × 2000
// + 1000 points fit where their 8 million cross product would not; a
// list the experiment does not read (mlproj and allreduce.nodes) counts
// for nothing; a cross product still is one.
func TestOwnListsBoundFollowsTheExpansion(t *testing.T) {
	lim := MemLimit{Bytes: 512 << 20, What: "test limit"}
	load := func(sets ...string) exp.Config {
		t.Helper()
		cfg, err := params.Load(params.Options{Sets: sets})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	gio := load("giobench.sizes=8-16000/8", "giobench.wgs=1-1000")
	if err := ListRefusal("gio", gio, 0, lim); err != nil {
		t.Errorf("additive gio lists refused: %v", err)
	}
	if terms, n := params.OwnLists("gio", gio); n != 4*2000+1000 || terms.String() != "giobench.strategies (4 values) × giobench.sizes (2000 values) + giobench.wgs (1000 values)" {
		t.Errorf("gio: %v, %g points", terms, n)
	}
	if err := ListRefusal("mlproj", load("allreduce.nodes=2-40001"), 0, lim); err != nil {
		t.Errorf("mlproj refused for a list it does not read: %v", err)
	}
	err := ListRefusal("allreduce", load("allreduce.nodes=2-40001", "allreduce.strategies=CPU,HDN"), 0, lim)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "allreduce.nodes (40000 values) × allreduce.strategies (2 values): up to 8e+04 points") {
		t.Errorf("cross product: err = %v, want one line naming the lists", err)
	}
}

// A value of one sweep that is bad on its own is refused before the
// cross product is planned: with 300 × 300 latency configurations and the
// bad size last in the outer sweep, the refusal came after planning the
// 89,700 before it (over 5 minutes and 2.3 GB at load). Each sweep's values
// are loaded first beside the other sweeps' first values (configurations
// of the plan, so nothing valid is refused), so a cross product of n × m
// costs n + m loads before its refusal.
func TestBadSweepValueRefusedBeforeTheCrossProduct(t *testing.T) {
	e, err := exp.Lookup("latency")
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]string, 0, 41)
	for i := 1; i <= 40; i++ {
		sizes = append(sizes, fmt.Sprintf("%dB", 8*i))
	}
	sizes = append(sizes, "12B") // not a multiple of 8: bad on its own
	costs := make([]string, 0, 40)
	for i := 1; i <= 40; i++ {
		costs = append(costs, fmt.Sprintf("%dns", i))
	}
	s, err := Single(e, params.Options{}, []params.Sweep{{Name: "latency.size", Values: sizes}, {Name: "nic.match_cost", Values: costs}})
	if err != nil {
		t.Fatal(err)
	}
	loads := 0
	_, err = ExpandWithin(s, testVersion, MemLimit{Run: func(string, exp.Config) error { loads++; return nil }})
	if err == nil || !strings.Contains(err.Error(), "latency latency.size=12B nic.match_cost=1ns: ") || !strings.Contains(err.Error(), "latency.size = 12B") {
		t.Errorf("err = %v, want the bad size named with its sweep value", err)
	}
	if loads > len(sizes)+len(costs) {
		t.Errorf("%d configurations checked before the refusal, want at most %d (each sweep's values alone)", loads, len(sizes)+len(costs))
	}
}
