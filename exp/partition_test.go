package exp

import (
	"bytes"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// discardTracer drops every span.
type discardTracer struct{}

func (discardTracer) Span(string, string, sim.Time, sim.Time) {}

// run.partitions = 0 splits a point over the cores the sweep leaves it
// where a partitioned run pays, on one engine otherwise, and the point's
// result is byte for byte that of one engine.
func TestAutoPartitionsRunsPointsSplitWithTheSameResult(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes, cfg.Allreduce.Strategies, cfg.Allreduce.Size = []int{16}, []string{"HDN"}, 64*unit.KiB
	if cfg.Run.Partitions != 0 || !cfg.Run.Functional {
		t.Fatalf("defaults: run.partitions = %d, functional %v; want 0 (auto), functional", cfg.Run.Partitions, cfg.Run.Functional)
	}
	engines := func(env Env) int {
		c, err := newPartitionedRun(cfg, env, "p", 16, strategy.HDN)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Group == nil {
			return 1
		}
		return c.Group.Partitions()
	}
	for _, tc := range []struct {
		name string
		env  Env
		want int
	}{
		{"two free cores", Env{Cores: 2}, 2},
		{"one free core", Env{Cores: 1}, 1},
		{"tracing", Env{Cores: 2, Tracer: discardTracer{}}, 1},
	} {
		if got := engines(tc.env); got != tc.want {
			t.Errorf("%s: %d engines; want %d", tc.name, got, tc.want)
		}
	}

	if auto, one := autoAndOneEngine(t, Point{Label: "HDN n=16", Config: cfg}); !bytes.Equal(auto, one) {
		t.Errorf("auto-partitioned point:\n%s\none engine:\n%s", auto, one)
	}
}

// A point's engines run on no more threads than the cores the sweep
// gives it (Env.Cores), whether run.partitions asks for them or auto
// picks them: a sweep of several points at once must not oversubscribe.
func TestPartitionedRunThreadsWithinCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes, cfg.Allreduce.Strategies, cfg.Allreduce.Size = []int{16}, []string{"HDN"}, 64*unit.KiB
	for _, tc := range []struct {
		name             string
		partitions, core int
		engines, threads int
	}{
		{"8 engines asked, 1 core", 8, 1, 8, 1},
		{"8 engines asked, 2 cores", 8, 2, 8, 2},
		{"8 engines asked, cores unknown: GOMAXPROCS", 8, 0, 8, 4},
		{"auto, 3 cores", 0, 3, 2, 2},
	} {
		pc := cfg
		pc.Run.Partitions = tc.partitions
		c, err := newPartitionedRun(pc, Env{Cores: tc.core}, "p", 16, strategy.HDN)
		if err != nil {
			t.Fatal(err)
		}
		if c.Group == nil || c.Group.Partitions() != tc.engines || c.Group.Threads() != tc.threads {
			t.Errorf("%s: group %v; want %d engines on %d threads", tc.name, c.Group != nil, tc.engines, tc.threads)
			if c.Group != nil {
				t.Errorf("  got %d engines on %d threads", c.Group.Partitions(), c.Group.Threads())
			}
		}
		c.Close()
	}
	// Auto's many engines (GPU-TN payload-free from 1,024 nodes) on the
	// two cores given: 32 engines, two threads.
	pc := cfg
	pc.Allreduce.Nodes, pc.Allreduce.Strategies, pc.Run.Functional = []int{1024}, []string{"GPUTN"}, false
	c, err := newPartitionedRun(pc, Env{Cores: 2}, "p", 1024, strategy.GPUTN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Group == nil || c.Group.Partitions() != 32 || c.Group.Threads() != 2 {
		t.Errorf("GPU-TN payload-free at 1,024 nodes, auto on 2 cores: group %v; want 32 engines on 2 threads", c.Group != nil)
	}
}

// autoAndOneEngine returns point pt's result with run.partitions = 0 on two
// free cores and with one engine.
func autoAndOneEngine(t *testing.T, pt Point) (auto, one []byte) {
	t.Helper()
	auto, err := allreduceSimulate(pt, Env{Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	pt.Config.Run.Partitions = 1
	if one, err = allreduceSimulate(pt, Env{Cores: 2}); err != nil {
		t.Fatal(err)
	}
	return auto, one
}

// Every point auto splits gives the bytes of one engine: each
// partitionable strategy, ring and rhd (the two-sided ones), functional at
// the smallest size auto splits (16 nodes) and payload-free at 128.
func TestAutoPartitionedPointsMatchOneEngine(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		s, alg     string
		nodes      int
		functional bool
	}{
		{"CPU", "ring", 16, true}, {"HDN", "ring", 16, true}, {"GDS", "ring", 16, true}, {"GPUTN", "ring", 16, true},
		{"CPU", "rhd", 16, true}, {"HDN", "rhd", 16, true},
		{"HDN", "ring", 128, false}, {"GPUTN", "ring", 128, false},
	}
	for _, c := range cases {
		pc := cfg
		pc.Allreduce.Nodes, pc.Allreduce.Strategies, pc.Allreduce.Algorithm = []int{c.nodes}, []string{c.s}, c.alg
		pc.Allreduce.Size, pc.Run.Functional = 256*unit.KiB, c.functional
		if auto, one := autoAndOneEngine(t, Point{Label: c.s, Config: pc}); !bytes.Equal(auto, one) {
			t.Errorf("%s %s on %d nodes (functional %v): auto\n%s\none engine\n%s", c.s, c.alg, c.nodes, c.functional, auto, one)
		}
	}
}

// RunPoints leaves each point the cores its workers do not use.
func TestCoresPerRun(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	cfg.Run.Parallel = 1
	if got := coresPerRun(cfg, Env{}, 10); got != procs {
		t.Errorf("run.parallel = 1: %d cores per run; want all %d", got, procs)
	}
	cfg.Run.Parallel = 0
	if got := coresPerRun(cfg, Env{}, 1); got != procs {
		t.Errorf("one point: %d cores per run; want all %d", got, procs)
	}
	if got := coresPerRun(cfg, Env{}, 1000); got != max(1, procs/runtime.NumCPU()) {
		t.Errorf("a sweep filling every core: %d cores per run; want %d", got, max(1, procs/runtime.NumCPU()))
	}
}

// TestPartitionsDocNamesEveryPartitionedStrategy: run.partitions' doc
// (gpunetsim params, the sidecars) names every strategy whose allreduce
// runs partitioned (GHN_* for the GHN family), so it does not send a
// reader to run.partitions=1 for one that splits.
func TestPartitionsDocNamesEveryPartitionedStrategy(t *testing.T) {
	f, ok := reflect.TypeFor[RunSpec]().FieldByName("Partitions")
	if !ok {
		t.Fatal("RunSpec has no Partitions")
	}
	doc := f.Tag.Get("doc")
	names := regexp.MustCompile(`[A-Z][A-Z0-9_]*\*?`).FindAllString(doc, -1)
	for _, in := range strategy.All() {
		s := string(in.Strategy)
		if !workload.AllreducePartitionable(in.Strategy) {
			continue
		}
		if !slices.ContainsFunc(names, func(n string) bool {
			return n == s || strings.HasSuffix(n, "*") && strings.HasPrefix(s, strings.TrimSuffix(n, "*"))
		}) {
			t.Errorf("run.partitions' doc does not name %s, whose allreduce runs partitioned: %q", s, doc)
		}
	}
}
