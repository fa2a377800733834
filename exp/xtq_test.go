package exp

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/exp/report"

	"github.com/gpunetsim/gpunetsim/unit"
)

func xtqConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := DefaultConfig("xtq")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The task spawn verifies every point, and its breakdown has a bar per
// phase for 64 B and 4 KiB under every strategy, on one time axis.
func TestTaskSpawnExperiment(t *testing.T) {
	cfg := xtqConfig(t)
	cfg.TaskSpawn.MaxSize = 4 * unit.KiB
	cfg.TaskSpawn.Strategies = []string{"CPU", "HDN", "HSA", "XTQ"}
	res, err := runTaskSpawn(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Tables[0].Rows); got != 7*6 {
		t.Fatalf("%d end-to-end rows, want 42 (4 strategies + CPU tasks under HSA and XTQ, 7 sizes)", got)
	}
	for _, row := range res.Tables[0].Rows {
		if row[len(row)-1] != true {
			t.Errorf("row %v not verified", row)
		}
	}
	rows := map[string]bool{}
	for _, b := range res.Plot.Bars {
		rows[b.Row] = true
		if b.Start < 0 || b.End < b.Start {
			t.Errorf("bar %+v", b)
		}
	}
	for _, r := range []string{"CPU 64B", "HSA 4KiB", "XTQ 64B", "XTQ 4KiB", "XTQ cpu-task 64B", "HSA cpu-task 4KiB"} {
		if !rows[r] {
			t.Errorf("no timeline row %q in %v", r, rows)
		}
	}
}

func TestXtqConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.TaskSpawn.MaxSize = 32 }, "taskspawn.max_size = 32B"},
		{func(c *Config) { c.TaskSpawn.Strategies = []string{"GDS"} }, `taskspawn.strategies contains "GDS"`},
	} {
		cfg := xtqConfig(t)
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to name %q", err, c.want)
		}
	}
}

// BenchmarkXtqAllreduceSweep is the XTQ chapter's main sweep: 4 MiB
// Allreduce strong-scaled over the xtq preset's node counts (2 to 64 in powers of two) under
// CPU, HSA and XTQ (the dissertation's XTQ chapter), functional, on every core. Besides
// wall time it reports the process's CPU seconds per sweep (user + system:
// on a shared machine the wall time depends on the other load, the CPU
// time does not) and the simulated events.
func BenchmarkXtqAllreduceSweep(b *testing.B) {
	cfg, err := DefaultConfig("xtq")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Allreduce.Size = 4 * unit.MiB
	cfg.Allreduce.Strategies = []string{"CPU", "HSA", "XTQ"}
	var events float64
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		res, err := runAllreduce(cfg, Env{})
		if err != nil {
			b.Fatal(err)
		}
		for _, row := range res.Tables[1].Rows {
			events += float64(row[5].(uint64))
		}
	}
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(events/float64(b.N), "events/op")
	b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N), "cpu-s/op")
}

// cpuSeconds returns the user and system CPU time the process has used.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func TestAccumulateAndReduceExperiments(t *testing.T) {
	cfg := xtqConfig(t)
	cfg.Accumulate.MinSize, cfg.Accumulate.MaxSize, cfg.Accumulate.Epochs, cfg.Accumulate.PerEpoch = 8, 64*unit.KiB, 3, 2
	cfg.Reduce.MinSize, cfg.Reduce.MaxSize, cfg.Reduce.Nodes = 8, 64*unit.KiB, 3
	for _, run := range []func(Config, Env) (*report.Result, error){runAccumulate, runReduce} {
		res, err := run(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		rows := res.Tables[0].Rows
		if len(rows) != 14*3 {
			t.Fatalf("%s: %d rows, want 42", res.Experiment, len(rows))
		}
		for _, row := range rows {
			if row[len(row)-1] != true {
				t.Errorf("%s: row %v not verified", res.Experiment, row)
			}
		}
		if len(res.Plot.Series) != 3 || !strings.Contains(strings.Join(res.Notes, "\n"), "functional") {
			t.Errorf("%s: plot %d series, notes %v", res.Experiment, len(res.Plot.Series), res.Notes)
		}
	}
	cfg.Accumulate.Distribution = "nwchem"
	res, err := runAccumulate(cfg, Env{})
	if err != nil || len(res.Tables[0].Rows) != 3 {
		t.Fatalf("nwchem mix: %v %v", res, err)
	}
}

// The experiments of the other strategies keep working on preset xtq.
func TestAllreduceAndLatencyOnXtqPreset(t *testing.T) {
	cfg := xtqConfig(t)
	cfg.Allreduce.Nodes, cfg.Allreduce.Size = []int{2, 3}, 96*unit.KiB
	cfg.Allreduce.Strategies = []string{"CPU", "HDN", "GDS", "GPUTN", "HSA", "XTQ"}
	res, err := runAllreduce(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Tables[1].Rows); got != 12 {
		t.Fatalf("allreduce: %d rows, want 12", got)
	}
	if _, err := runLatency(cfg, Env{}); err != nil {
		t.Fatal(err)
	}
}

func TestNWChemSizesFollowTheDistribution(t *testing.T) {
	sizes := nwchemSizes(1, 20000)
	small := 0
	for _, s := range sizes {
		if s < 8 || s > 1<<20 || s%8 != 0 {
			t.Fatalf("size %v outside [8B, 1MiB] or not a float64 multiple", s)
		}
		if s <= 4096 {
			small++
		}
	}
	if frac := float64(small) / float64(len(sizes)); frac < 0.48 || frac > 0.52 {
		t.Errorf("%.3f of the sizes are ≤ 4KiB, want about half (median 4KiB)", frac)
	}
}
