package exp

import (
	"encoding/json"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// latencyPoints splits the latency decomposition into one point per
// strategy.
func latencyPoints() Points {
	return Points{List: latencyList, Simulate: latencySimulate, Assemble: latencyAssemble}
}

// runLatency decomposes the one-message latency of each strategy.
func runLatency(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(latencyPoints(), cfg, env)
}

// latencyStrategies parses latency.strategies.
func latencyStrategies(cfg Config) ([]strategy.Strategy, error) {
	var strats []strategy.Strategy
	for _, name := range cfg.Latency.Strategies {
		s, err := strategy.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("latency.strategies: %w", err)
		}
		strats = append(strats, s)
	}
	return strats, nil
}

func latencyList(cfg Config) ([]Point, error) {
	if _, err := latencyStrategies(cfg); err != nil {
		return nil, err
	}
	pts := make([]Point, len(cfg.Latency.Strategies))
	for i, s := range cfg.Latency.Strategies {
		pc := cfg
		pc.Latency.Strategies = []string{s}
		pts[i] = Point{Label: s, Config: pc}
	}
	return pts, nil
}

func latencySimulate(p Point, env Env) ([]byte, error) {
	s, err := strategy.Parse(p.Config.Latency.Strategies[0])
	if err != nil {
		return nil, err
	}
	c, err := newRun(p.Config, env, string(s), 2, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.Latency{Size: p.Config.Latency.Size}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

func latencyAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	strats, err := latencyStrategies(cfg)
	if err != nil {
		return nil, err
	}
	results, err := decodeResults[workload.LatencyResult](raw)
	if err != nil {
		return nil, err
	}
	timeline := report.Table{Name: "timeline", Columns: []string{"strategy", "node", "phase", "start", "end", "duration"}}
	summary := report.Table{Name: "end-to-end", Columns: []string{"strategy", "end_to_end", "end_to_end_us", "verified"}}
	plot := &report.Plot{Title: fmt.Sprintf("Latency decomposition, %v message, preset %s", cfg.Latency.Size, cfg.Run.Preset),
		XLabel: "time (us)"}
	for i, s := range strats {
		r := results[i]
		for _, seg := range r.Segments {
			timeline.Rows = append(timeline.Rows, []any{string(s), seg.Node, seg.Phase, seg.Start, seg.End, seg.End - seg.Start})
			plot.Bars = append(plot.Bars, report.Bar{Row: string(s) + " " + seg.Node, Phase: seg.Phase,
				Start: seg.Start.Micros(), End: seg.End.Micros()})
		}
		summary.Rows = append(summary.Rows, []any{string(s), r.EndToEnd, round3(r.EndToEnd.Micros()), r.Verified})
	}
	res := &report.Result{Experiment: "latency", Seed: cfg.Run.Seed, Tables: []report.Table{summary, timeline}, Plot: plot}
	res.Notes = append(res.Notes, "end-to-end = initiator kernel enqueue to target detect; segments share one absolute time axis")
	return res, nil
}

// runStrategies prints the characteristic table (no simulation).
func runStrategies(cfg Config, env Env) (*report.Result, error) {
	t := report.Table{Name: "strategies", Columns: []string{"strategy", "aliases", "kernel boundary", "GPU triggered", "GPU overhead", "CPU overhead", "capabilities", "preset", "summary"}}
	for _, d := range strategy.Registry() {
		in := d.Info
		t.Rows = append(t.Rows, []any{string(in.Strategy), in.Aliases, in.KernelBoundary, in.GPUTriggered, in.GPUOverhead, in.CPUOverhead, d.Caps.String(), d.Preset, in.Summary})
	}
	return &report.Result{Experiment: "strategies", Seed: cfg.Run.Seed, Tables: []report.Table{t}}, nil
}
