package exp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// HostCPUSpec holds the knobs of the host streaming study (the dissertation).
type HostCPUSpec struct {
	Size    unit.Bytes `toml:"size" doc:"bytes one OpenMP-style region streams" src:"RUN"`
	Threads []int      `toml:"threads" doc:"team sizes to sweep (may exceed cpu.cores: threads then share cores)" src:"RUN"`
}

func (h HostCPUSpec) validate() error {
	var errs []error
	if h.Size < 64 || h.Size > 16*unit.GiB {
		errs = append(errs, fmt.Errorf("hostcpu.size = %v: must be in [64B, 16GiB]", h.Size))
	}
	if len(h.Threads) == 0 {
		errs = append(errs, errors.New("hostcpu.threads is empty: give at least one team size"))
	}
	for _, n := range h.Threads {
		if n < 1 || n > 1024 {
			errs = append(errs, fmt.Errorf("hostcpu.threads contains %d: team sizes must be in [1, 1024]", n))
			break
		}
	}
	return errors.Join(errs...)
}

// hostVariants are the streaming models the study compares: the
// configuration as given, with the prefetcher flipped, the flat rate, and
// the configuration with a polling helper thread pinned to core 1.
var hostVariants = []string{"configured", "prefetch flipped", "flat rate", "polling helper on core 1"}

// hostPoint is one region: a team size under a variant.
type hostPoint struct {
	time    sim.Time
	latency sim.Duration // mean loaded latency a miss saw
	util    float64      // mean core utilisation over the region
}

// runHostCPU streams hostcpu.size over each team size under each variant
// on one node's CPU and memory, and reports the rate, the loaded latency
// and the core utilisation.
func runHostCPU(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := cfg.HostCPU
	points := make([]hostPoint, len(h.Threads)*len(hostVariants))
	err := forEach(cfg, env, len(points), func(i int) error {
		p, err := hostRegion(cfg.Spec, hostVariants[i%len(hostVariants)], h.Size, h.Threads[i/len(hostVariants)], cfg.Run.Seed)
		points[i] = p
		return err
	})
	if err != nil {
		return nil, err
	}
	return hostReport(cfg, points), nil
}

// hostRegion runs one region on a fresh engine.
func hostRegion(spec cluster.Spec, variant string, size unit.Bytes, threads int, seed uint64) (hostPoint, error) {
	s := spec.CPU
	switch variant {
	case "prefetch flipped":
		s.Prefetch = !s.Prefetch
	case "flat rate":
		s.ComputeModel = cpu.ModelFlat
	}
	e := sim.New(seed)
	m := mem.New("node.mem", false)
	c := cpu.New(e, "node.cpu", s, m, mem.NewServer(float64(s.DRAMBandwidth)))
	stop := m.AllocData(mem.Host, 8, "stop")
	var end sim.Time
	c.Spawn("app", func(t *cpu.Thread) {
		t.Compute(uint64(size), threads)
		end = t.Now()
		t.Store(stop, 1)
	})
	if variant == "polling helper on core 1" && s.Cores > 1 {
		if _, err := c.SpawnOn(1, "helper", func(t *cpu.Thread) {
			t.WaitWord(stop, "end of the region", func(v uint64) bool { return v != 0 })
		}); err != nil {
			return hostPoint{}, err
		}
	}
	if err := e.Run(); err != nil {
		return hostPoint{}, fmt.Errorf("hostcpu %s, %d threads: %w", variant, threads, err)
	}
	var busy sim.Duration
	for _, k := range c.CoreStats() {
		busy += min(k.Busy, end)
	}
	return hostPoint{time: end, latency: c.Stats().LoadedLatency(s.Outstanding()),
		util: float64(busy) / float64(end) / float64(s.Cores)}, nil
}

func hostReport(cfg Config, points []hostPoint) *report.Result {
	h, s := cfg.HostCPU, cfg.CPU
	t := report.Table{Name: "host streaming", Columns: []string{"threads", "variant", "time", "bandwidth_GB/s", "loaded_latency_ns", "core_utilisation"}}
	plot := &report.Plot{Title: fmt.Sprintf("Host streaming of %v, preset %s (DRAM %v)", h.Size, cfg.Run.Preset, s.DRAMBandwidth),
		XLabel: "threads", YLabel: "bandwidth (GB/s)"}
	series := make([]report.Series, len(hostVariants))
	for i, v := range hostVariants {
		series[i].Name = v
	}
	var outs []report.Output
	for i, p := range points {
		n, v := h.Threads[i/len(hostVariants)], i%len(hostVariants)
		rate := float64(h.Size) / p.time.Seconds() / 1e9
		var lat any = round3(float64(p.latency) / 1e3)
		if hostVariants[v] == "flat rate" && s.ComputeModel != cpu.ModelFlat {
			lat = "-" // the flat model keeps no misses in flight
		}
		t.Rows = append(t.Rows, []any{n, hostVariants[v], p.time, round3(rate), lat, round3(p.util)})
		series[v].X = append(series[v].X, float64(n))
		series[v].Y = append(series[v].Y, rate)
		outs = append(outs, report.Output{Name: fmt.Sprintf("%s rate with %d threads", hostVariants[v], n), Value: rate, Unit: "GB/s"})
	}
	dram := report.Series{Name: "DRAM bandwidth"}
	for _, n := range h.Threads {
		dram.X = append(dram.X, float64(n))
		dram.Y = append(dram.Y, float64(s.DRAMBandwidth)/1e9)
	}
	plot.Series = append(series, dram)
	res := &report.Result{Experiment: "hostcpu", Seed: cfg.Run.Seed, Plot: plot,
		Tables:  []report.Table{t, report.CrossoverTable("crossovers (rate)", "threads", "lower", series)},
		Outputs: append(outs, report.CrossoverOutputs("threads", "lower", series)...)}
	little := float64(s.Outstanding()) * float64(s.LineSize) / s.MissLatency().Seconds() / 1e9
	res.Notes = append(res.Notes,
		fmt.Sprintf("one core by Little's law: %d misses × %v / %v = %.3g GB/s (issue bound %.3g GB/s); the team saturates at the DRAM's %.4g GB/s", s.Outstanding(), s.LineSize, s.MissLatency(), little, s.StreamBPC*float64(s.Freq)/1e9, float64(s.DRAMBandwidth)/1e9),
		"variants: the configuration as given; with cpu.prefetch flipped; cpu.compute_model = flat; the configuration with a thread pinned to core 1 polling a word until the region ends (it takes turns with the team thread placed there)",
		fmt.Sprintf("loaded latency = time × misses in flight / misses (Little's law; '-' for the flat rate, which keeps no misses in flight); core utilisation = busy core time / (time × %d cores)", s.Cores))
	return res
}
