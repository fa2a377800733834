package exp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// GIOBenchSpec holds the knobs of the GIO microbenchmarks (the dissertation
// §10.1).
type GIOBenchSpec struct {
	Sizes      []int    `toml:"sizes" doc:"latency vs size: bytes per message (multiples of 8)" src:"DEFAULT"`
	Strategies []string `toml:"strategies" doc:"latency vs size: GNN_GIO and its baselines, HDN = Inter-K-Empty, GHN_DGPU = IKN (default, as the GIO slides run them: CPU, HDN, GHN_DGPU, GNN_GIO)" src:"DOC"`
	WGs        []int    `toml:"wgs" doc:"work-group scaling: work-groups issuing puts" src:"DEFAULT"`
	Small      int      `toml:"small" doc:"work-group scaling: the small message (network not saturated), bytes" src:"DEFAULT"`
	Large      int      `toml:"large" doc:"work-group scaling: the large message (network saturated), bytes" src:"DEFAULT"`
	Timing     string   `toml:"timing" doc:"work-group scaling: per-wg (ROC_SHMEM's put tester, primitive_tester.cpp: each work-group's own clock around its loop of blocking puts and a quiet, after its set-up and warm-up, mean per put) or end-to-end (initiator kernel launch to the target seeing the last flag, the dispatcher's start of the work-groups included); latency vs size is always end to end, the one definition its MPI and kernel-boundary cells share" src:"DEFAULT"`
	Iters      int      `toml:"iters" doc:"per-wg timing: timed blocking puts per work-group (ROC_SHMEM's put tester: loop = 100)" src:"DEFAULT"`
	ItersLarge int      `toml:"iters_large" doc:"per-wg timing: timed puts per work-group for messages above 32 KiB (ROC_SHMEM's put tester: loop_large = 25)" src:"DEFAULT"`
	Skip       int      `toml:"skip" doc:"per-wg timing: untimed warm-up puts per work-group before its clock starts (ROC_SHMEM's put tester: skip = 10)" src:"DEFAULT"`
}

// testerLargeMessage is ROC_SHMEM's put tester's large_message_size:
// messages above it run iters_large timed puts.
const testerLargeMessage = 32768

func defaultGIOBench() GIOBenchSpec {
	return GIOBenchSpec{Sizes: []int{8, 64, 512, 4096, 32768, 262144}, Strategies: []string{"CPU", "HDN", "GHN_DGPU", "GNN_GIO"},
		WGs: []int{1, 2, 4, 8, 16, 32}, Small: 64, Large: 65536, Timing: "per-wg", Iters: 100, ItersLarge: 25, Skip: 10}
}

// putLatency is the workload of one cell: size bytes from each of wgs
// work-groups, timed as g.Timing says.
func (g GIOBenchSpec) putLatency(size, wgs int) workload.PutLatency {
	p := workload.PutLatency{Size: unit.Bytes(size), WGs: wgs}
	if g.Timing == "per-wg" {
		p.Timing, p.Iters, p.Skip = workload.PerWG, g.Iters, g.Skip
		if size > testerLargeMessage {
			p.Iters = g.ItersLarge
		}
	}
	return p
}

func (g GIOBenchSpec) validate() error {
	var errs []error
	listInRange(&errs, "giobench.sizes", g.Sizes, 8, 1<<28)
	for _, s := range g.Sizes {
		if s%8 != 0 {
			errs = append(errs, fmt.Errorf("giobench.sizes contains %d: sizes must be multiples of 8 bytes", s))
			break
		}
	}
	errs = append(errs, checkStrategies("giobench.strategies", g.Strategies, workloadStrategies("putlatency")))
	listInRange(&errs, "giobench.wgs", g.WGs, 1, 1024)
	for _, f := range []struct {
		name string
		v    int
	}{{"giobench.small", g.Small}, {"giobench.large", g.Large}} {
		if f.v < 8 || f.v%8 != 0 || f.v > 1<<28 {
			errs = append(errs, fmt.Errorf("%s = %d: must be a multiple of 8 in [8, 268435456]", f.name, f.v))
		}
	}
	if g.Timing != "end-to-end" && g.Timing != "per-wg" {
		errs = append(errs, fmt.Errorf("giobench.timing = %q: must be end-to-end or per-wg", g.Timing))
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"giobench.iters", g.Iters, 1}, {"giobench.iters_large", g.ItersLarge, 1}, {"giobench.skip", g.Skip, 0}} {
		if f.v < f.min || f.v > 100000 {
			errs = append(errs, fmt.Errorf("%s = %d: must be in [%d, 100000]", f.name, f.v, f.min))
		}
	}
	return errors.Join(errs...)
}

// runGIOBench is latency vs size for GNN_GIO and its baselines, and the
// work-group scaling of GNN_GIO and GHN_DGPU (the GIO slides).
func runGIOBench(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := cfg.GIOBench
	type job struct {
		s         strategy.Strategy
		size, wgs int
		scaling   bool
	}
	var jobs []job
	for _, name := range g.Strategies {
		s, _ := strategy.Parse(name)
		for _, size := range g.Sizes {
			jobs = append(jobs, job{s, size, 1, false})
		}
	}
	for _, s := range []strategy.Strategy{strategy.GNNGIO, strategy.GHNDGPU} {
		for _, size := range []int{g.Small, g.Large} {
			for _, w := range g.WGs {
				jobs = append(jobs, job{s, size, w, true})
			}
		}
	}
	results := make([]workload.PutLatencyResult, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		c, err := newRun(cfg, env, fmt.Sprintf("%s %dB×%d", j.s, j.size, j.wgs), 2, j.s)
		if err != nil {
			return err
		}
		defer c.Engine.Close()
		p := workload.PutLatency{Size: unit.Bytes(j.size), WGs: j.wgs}
		if j.scaling {
			p = g.putLatency(j.size, j.wgs)
		}
		results[i], err = p.Run(c, j.s, strategyConfig(cfg))
		return err
	})
	if err != nil {
		return nil, err
	}
	lat := report.Table{Name: "latency", Columns: []string{"strategy", "size_B", "latency_us", "gio_template_stalls", "verified"}}
	scale := report.Table{Name: "wg-scaling", Columns: []string{"strategy", "size_B", "wgs", "latency_us", "verified"}}
	plot := &report.Plot{Title: fmt.Sprintf("Put latency vs size, one work-group, preset %s", cfg.Run.Preset),
		XLabel: "message size (B)", YLabel: "latency (us)", LogX: true}
	idx := map[strategy.Strategy]int{}
	for i, j := range jobs {
		r := results[i]
		if j.scaling {
			scale.Rows = append(scale.Rows, []any{string(j.s), j.size, j.wgs, round3(r.Time.Micros()), r.Verified})
			continue
		}
		lat.Rows = append(lat.Rows, []any{string(j.s), j.size, round3(r.Time.Micros()), r.GIO.TemplateStalls, r.Verified})
		k, ok := idx[j.s]
		if !ok {
			plot.Series = append(plot.Series, report.Series{Name: string(j.s)})
			k = len(plot.Series) - 1
			idx[j.s] = k
		}
		plot.Series[k].X = append(plot.Series[k].X, float64(j.size))
		plot.Series[k].Y = append(plot.Series[k].Y, r.Time.Micros())
	}
	res := &report.Result{Experiment: "gio", Seed: cfg.Run.Seed, Tables: []report.Table{lat, scale}, Plot: plot}
	if cfg.Run.Preset != "gio" {
		res.Notes = append(res.Notes, fmt.Sprintf("preset %s: the documents' cluster is preset gio (--preset gio)", cfg.Run.Preset))
	}
	scaling := "wg-scaling (giobench.timing = end-to-end): the initiator's kernel launch to the target seeing the last work-group's flag, the dispatcher's start of the work-groups included"
	if g.Timing == "per-wg" {
		scaling = fmt.Sprintf("wg-scaling (giobench.timing = per-wg, as ROC_SHMEM's put tester times it): each work-group's own clock around %d blocking puts (%d above %d B) and a quiet, after its set-up and %d warm-up puts, mean over the work-groups per put; the kernel launch and the work-groups' start are not timed",
			g.Iters, g.ItersLarge, testerLargeMessage, g.Skip)
	}
	res.Notes = append(res.Notes, "latency = initiator kernel launch (MPI call for CPU) to the target seeing the last byte; HDN (Inter-K-Empty) runs an empty kernel before the send and an empty consuming kernel after the receive, each synchronized by its host",
		scaling,
		"GNN_GIO: templated WQEs, four dynamic fields, PPB flush, doorbell from the work-group; GHN_DGPU: host helper threads (IKN)",
		ghnPlacementNote(cfg))
	return res, nil
}

// ghnPlacementNote says where GHN_DGPU's queues and completion flags
// live in this run (shmem.queue_in_gpu).
func ghnPlacementNote(cfg Config) string {
	sh := cfg.Shmem
	where := "queues in GPU memory, polled by the host threads with PCIe reads (shmem.queue_in_gpu = true)"
	if !sh.QueueInGPU {
		where = "queues in host memory (the work-groups write them with PCIe posted writes, the service thread polls its cache), completion flags in GPU memory (shmem.queue_in_gpu = false, ROC_SHMEM's reverse-offload placement)"
	}
	progress := ""
	if sh.ProgressThread {
		progress = " plus an MPI progress thread"
	}
	return fmt.Sprintf("GHN_DGPU: %d service thread(s)%s; %s", sh.Threads, progress, where)
}

func quickGIOBench(cfg *Config) {
	cfg.GIOBench.Sizes, cfg.GIOBench.WGs = []int{64, 4096}, []int{1, 4}
	cfg.GIOBench.Iters, cfg.GIOBench.ItersLarge, cfg.GIOBench.Skip = 10, 5, 2
}
