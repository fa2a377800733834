package exp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

func quickConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes = []int{2, 3, 5}
	cfg.Allreduce.Size = 96 * unit.KiB
	return cfg
}

// Same configuration and seed give identical results, however many
// workers run the sweep.
func TestAllreduceIsDeterministicAcrossWorkers(t *testing.T) {
	var out []string
	for _, workers := range []int{1, 2, 1} {
		cfg := quickConfig(t)
		cfg.Run.Parallel = workers
		res, err := runAllreduce(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if out[0] != out[1] || out[1] != out[2] {
		t.Fatal("results differ between runs with the same seed")
	}
	if !strings.Contains(out[0], "matched the serial") {
		t.Fatalf("functional verification note missing: %s", out[0])
	}
}

func TestAllreduceReportsSpeedupAgainstCPU(t *testing.T) {
	res, err := runAllreduce(quickConfig(t), Env{})
	if err != nil {
		t.Fatal(err)
	}
	long := res.Tables[1]
	if long.Columns[4] != "speedup_vs_CPU" || len(long.Rows) != 3*5 {
		t.Fatalf("columns %v, %d rows", long.Columns, len(long.Rows))
	}
	for _, row := range long.Rows {
		if row[1] == "CPU" && row[4] != 1.0 {
			t.Errorf("CPU speedup %v, want 1", row[4])
		}
		if row[6] != true {
			t.Errorf("row %v not verified", row)
		}
	}
	if res.Plot == nil || len(res.Plot.Series) != 5 || len(res.Plot.Series[0].X) != 3 {
		t.Fatalf("plot %+v", res.Plot)
	}
}

func TestInvalidConfigsAreRejected(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"one node":        func(c *Config) { c.Allreduce.Nodes = []int{1} },
		"too many wgs":    func(c *Config) { c.Allreduce.WGs = 17 },
		"odd size":        func(c *Config) { c.Allreduce.Size = 6 },
		"more nodes than": func(c *Config) { c.Allreduce.Size = 16; c.Allreduce.Nodes = []int{8} },
		"bad strategy":    func(c *Config) { c.Allreduce.Strategies = []string{"XYZ"} },
		"zero bandwidth":  func(c *Config) { c.Link.Bandwidth = 0 },
		"wg too large":    func(c *Config) { c.Allreduce.WGSize = 2048 },
		"out of order":    func(c *Config) { c.Topology.Kind, c.Topology.LeafSize, c.Topology.InOrder = "fattree", 2, false },
		"not resident":    func(c *Config) { c.GPU.CUs = 1; c.GPU.WavesPerSIMD = 1; c.Allreduce.WGSize = 256; c.Allreduce.WGs = 16 },
	} {
		cfg := quickConfig(t)
		mut(&cfg)
		if _, err := runAllreduce(cfg, Env{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLatencyExperiment(t *testing.T) {
	cfg := quickConfig(t)
	res, err := runLatency(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables[0].Rows) != 3 || len(res.Tables[1].Rows) < 15 {
		t.Fatalf("tables %+v", res.Tables)
	}
}

// The matrix lists every registered (workload, strategy) cell: applicable
// cells ran and verified, the baseline's speedup is 1, and every other
// cell carries the workload's written reason.
func TestMatrixExperiment(t *testing.T) {
	cfg := quickConfig(t)
	res, err := runMatrix(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Tables[0].Rows
	cells := 0
	for _, r := range rows {
		w, _ := workload.Lookup(r[0].(string))
		s, _ := strategy.Lookup(r[2].(string))
		im, ok := w.Impl(s)
		if r[13] != "group baseline" {
			cells++
		}
		switch {
		case !ok && r[14] != w.NotApplicable[s.Strategy]:
			t.Errorf("%v: not-applicable cell without its reason", r)
		case ok && (r[3] != im.Name || r[9] != true):
			t.Errorf("%v: want impl %s, verified", r, im.Name)
		case ok && s.Strategy == w.Baseline && r[11] != 1.0:
			t.Errorf("%v: the baseline's speedup is not 1", r)
		case ok && r[4] != w.Preset:
			t.Errorf("%v: ran on %v, want the workload's preset %s (matrix.hardware = workload)", r, r[4], w.Preset)
		}
	}
	if want := len(workload.Registry()) * len(strategy.Registry()); cells != want {
		t.Fatalf("%d cells, want %d", cells, want)
	}
}

// Whatever matrix.hardware says, a speedup is the baseline's time on the
// same hardware (preset and memory mode) over the cell's: every group of
// a workload with a speedup has its baseline row on that hardware, and no
// ratio divides times from two machines.
func TestMatrixSpeedupsOnOneHardware(t *testing.T) {
	for _, mode := range []string{"workload", "strategy", "run"} {
		t.Run(mode, func(t *testing.T) {
			cfg := quickConfig(t)
			cfg.Matrix.Hardware = mode
			cfg.Matrix.Workloads = []string{"allreduce", "latency", "putlatency"}
			res, err := runMatrix(cfg, Env{})
			if err != nil {
				t.Fatal(err)
			}
			rows := res.Tables[0].Rows
			type key struct{ w, hw string }
			base := map[key]sim.Time{}
			groups := map[string][]string{}
			for _, r := range rows {
				if r[14] != "" {
					continue
				}
				w, _ := workload.Lookup(r[0].(string))
				k := key{r[0].(string), r[1].(string)}
				if r[2] == string(w.Baseline) {
					base[k] = r[7].(sim.Time)
				}
				p, err := cluster.Preset(r[4].(string))
				if err != nil {
					t.Fatal(err)
				}
				if label := r[1].(string); !strings.HasPrefix(label, r[4].(string)) ||
					strings.Contains(label, "gpu.mode="+r[5].(string)) != (p.GPU.Mode != r[5]) {
					t.Errorf("%v: hardware label %q does not name preset %v and mode %v", r, label, r[4], r[5])
				}
				groups[r[0].(string)] = append(groups[r[0].(string)], r[1].(string))
			}
			for _, r := range rows {
				if r[14] != "" {
					continue
				}
				b, ok := base[key{r[0].(string), r[1].(string)}]
				if !ok {
					t.Errorf("%v: no baseline row on hardware %v", r, r[1])
					continue
				}
				if want := round3(float64(b) / float64(r[7].(sim.Time))); r[11] != want {
					t.Errorf("%v: speedup %v, want %v (baseline on the same hardware)", r, r[11], want)
				}
			}
			if mode == "strategy" && len(slices.Compact(slices.Sorted(slices.Values(groups["allreduce"])))) < 3 {
				t.Errorf("strategy mode: allreduce groups %v, want one per hardware the strategies need", groups["allreduce"])
			}
		})
	}
}

// The strategies table is the registry, with each strategy's capabilities.
func TestStrategiesTableFromRegistry(t *testing.T) {
	res, err := runStrategies(quickConfig(t), Env{})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Tables[0].Rows
	if len(rows) != len(strategy.Registry()) {
		t.Fatalf("%d rows for %d strategies", len(rows), len(strategy.Registry()))
	}
	for i, d := range strategy.Registry() {
		if rows[i][0] != string(d.Strategy) || rows[i][6] != d.Caps.String() {
			t.Errorf("row %v, want %s with %v", rows[i], d.Strategy, d.Caps)
		}
	}
}

func quickJacobi(t *testing.T) Config {
	t.Helper()
	cfg := quickConfig(t)
	cfg.Jacobi.Sizes = []int{8, 24}
	cfg.Jacobi.Procs = "2x3"
	cfg.Jacobi.MaxWGs = 4
	cfg.Jacobi1D.Nodes = 3
	cfg.Jacobi1D.Log2Elems = []int{6, 9}
	cfg.JacobiScale.Grids = []int{24, 48}
	cfg.JacobiScale.Nodes = []int{1, 2, 4, 6}
	cfg.JacobiScale.WeakSize = 12
	cfg.JacobiScale.Iters = 3
	return cfg
}

// Every Jacobi study runs on every registered strategy that runs Jacobi,
// verifies each point against the serial run, and gives the baseline a
// speedup of 1; weak scaling is normalized to the baseline at the fewest
// nodes.
func TestJacobiExperiments(t *testing.T) {
	cfg := quickJacobi(t)
	for _, name := range []string{"jacobi", "jacobi1d", "jacobistrong", "jacobiweak"} {
		ex, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ex.Run(cfg, Env{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tab := res.Tables[0]
		for _, r := range tab.Rows {
			if r[13] != true {
				t.Errorf("%s: row %v not verified", name, r)
			}
			base := cfg.Jacobi.Baseline
			if name == "jacobi1d" {
				base = cfg.Jacobi1D.Baseline // GHN_DGPU since it runs Jacobi (§6.1)
			}
			if r[3] == base && r[12] != 1.0 {
				t.Errorf("%s: %s row %v: speedup vs itself %v", name, base, r, r[12])
			}
		}
		if len(res.Plot.Series) == 0 {
			t.Errorf("%s: no plot", name)
		}
		if name == "jacobiweak" && res.Plot.Series[1].Name == "HDN" && res.Plot.Series[1].Y[0] != 1 {
			t.Errorf("weak scaling: HDN at 1 node normalized to %v", res.Plot.Series[1].Y[0])
		}
	}
}

// Points above jacobi.verify_max_points run payload-free and say so: their
// verified cell is "-" (nothing was compared), not false (a failed check).
func TestJacobiVerifyLimit(t *testing.T) {
	cfg := quickJacobi(t)
	cfg.Jacobi.VerifyMax = 100 // 8×8 = 64 points verify, 24×24 do not
	res, err := jacobiRun("nxn")(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Tables[0].Rows {
		var want any = true
		if r[0] != 8 {
			want = "-"
		}
		if r[13] != want {
			t.Errorf("row %v: verified %v, want %v", r, r[13], want)
		}
	}
}

func TestJacobiBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"procs syntax":     {func(c *Config) { c.Jacobi.Procs = "4by4" }, "jacobi.procs"},
		"small N":          {func(c *Config) { c.Jacobi.Sizes = []int{2} }, "jacobi.sizes contains 2"},
		"baseline":         {func(c *Config) { c.Jacobi.Baseline = "GDS"; c.Jacobi.Strategies = []string{"HDN"} }, "jacobi.baseline"},
		"strategy":         {func(c *Config) { c.Jacobi.Strategies = []string{"HDN", "NOPE"} }, "jacobi.strategies"},
		"grid not divided": {func(c *Config) { c.JacobiScale.Grids = []int{25} }, "jacobiscale.grids contains 25"},
		"1d size":          {func(c *Config) { c.Jacobi1D.Log2Elems = []int{2} }, "jacobi1d.log2_elements"},
	} {
		cfg := quickJacobi(t)
		tc.mut(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestExperimentNamesUnique guards the registry against a name listed
// twice (a merge leaves both copies and Lookup silently takes the first).
func TestExperimentNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range List() {
		if seen[e.Name] {
			t.Errorf("experiment %q registered twice", e.Name)
		}
		seen[e.Name] = true
	}
}

// The GDS wait-value poll period is a printed knob that the stream model
// uses: a slower command-processor poll delays every GDS step that waits
// for an arrival flag.
func TestGDSWaitPollIsAKnob(t *testing.T) {
	run := func(poll sim.Time) sim.Time {
		cfg := quickConfig(t)
		cfg.Allreduce.Nodes, cfg.Allreduce.Strategies = []int{3}, []string{"GDS"}
		cfg.GPU.WaitPoll = poll
		res, err := runAllreduce(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Tables[1].Rows[0][2].(sim.Time)
	}
	if fast, slow := run(100*sim.Nanosecond), run(20*sim.Microsecond); slow <= fast+20*sim.Microsecond {
		t.Errorf("GDS allreduce %v with a 100ns CP poll, %v with 20us: the poll period does not act", fast, slow)
	}
}

// On a present-day preset the matrix still compares every strategy on the
// documents' presets (matrix.hardware = workload: GPU-TN's cells run), and
// on the run's own hardware a cell the machine cannot hold (its NIC lacks
// triggered operations; its rails take whole 8-GPU nodes) is a row that
// says why, not a failed matrix.
func TestMatrixOnPresentDayPreset(t *testing.T) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Matrix.Workloads, cfg.Matrix.Strategies = []string{"latency"}, []string{"HDN", "GPUTN"}
	for _, mode := range []string{"workload", "run"} {
		cfg.Matrix.Hardware = mode
		res, err := runMatrix(cfg, Env{})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, r := range res.Tables[0].Rows {
			if r[2] != "GPUTN" {
				continue
			}
			switch {
			case mode == "workload" && (r[1] != "gputn" || r[9] != true):
				t.Errorf("workload mode: GPU-TN row %v, want a verified cell on gputn", r)
			case mode == "run" && (r[13] != "hardware cannot run it" || !strings.Contains(r[14].(string), "triggered")):
				t.Errorf("run mode on h100-cx7: GPU-TN row %v, want a row saying the NIC lacks triggered operations", r)
			}
		}
	}
}

// The matrix on preset spin's own hardware runs the GPU-TN allreduce to a
// verified cell (it once deadlocked there: an early trigger stalled the
// trigger FIFO while registrations held all 16 entries; workload
// TestGPUTNAllreduceOnSpinFourNodes has the details).
func TestMatrixGPUTNAllreduceOnSpin(t *testing.T) {
	cfg, err := DefaultConfig("spin")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Matrix.Hardware = "run"
	cfg.Matrix.Workloads, cfg.Matrix.Strategies = []string{"allreduce"}, []string{"GPUTN"}
	res, err := runMatrix(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	cells := 0
	for _, r := range res.Tables[0].Rows {
		if r[2] != "GPUTN" {
			continue
		}
		cells++
		if r[1] != "spin" || r[9] != true {
			t.Errorf("GPU-TN row %v, want a verified cell on spin", r)
		}
	}
	if cells != 1 {
		t.Fatalf("%d GPU-TN cells, want 1", cells)
	}
}
