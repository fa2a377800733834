package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// allreducePoint is the result of one (nodes, strategy) simulation, as the
// study cache stores it.
type allreducePoint struct {
	Nodes    int               `json:"nodes"`
	Strategy strategy.Strategy `json:"strategy"`
	Time     sim.Time          `json:"time"`
	Events   uint64            `json:"events"`
	Verified bool              `json:"verified"`
	Slices   int               `json:"slices"`
	Cores    []cpu.CoreStats   `json:"cores"`          // node 0's host cores at the end of the run
	Energy   float64           `json:"service_energy"` // joules, device-shmem strategies
}

// allreducePoints splits the allreduce sweep into one point per (node
// count, strategy).
func allreducePoints() Points {
	return Points{List: xtqTableChecked(allreduceList, func(c Config) []string { return c.Allreduce.Strategies }), Simulate: allreduceSimulate, Assemble: allreduceAssemble,
		Memory: allreducePointMemory}
}

// runAllreduce sweeps node counts × strategies and reports time and speedup
// against the CPU baseline.
func runAllreduce(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(allreducePoints(), cfg, env)
}

// validateAlgorithm checks allreduce.algorithm and that every strategy in
// allreduce.strategies runs it.
func (a AllreduceSpec) validateAlgorithm() error {
	switch a.Algorithm {
	case workload.AlgRing:
		return nil
	case workload.AlgRHD:
	default:
		return fmt.Errorf("allreduce.algorithm = %q: must be %s or %s", a.Algorithm, workload.AlgRing, workload.AlgRHD)
	}
	var errs []error
	for _, name := range a.Strategies {
		s, err := strategy.Parse(name)
		if err != nil {
			continue // allreduce.strategies reports it
		}
		if why := workload.RHDRefusal(s); why != "" {
			errs = append(errs, errors.New(why))
		}
	}
	return errors.Join(errs...)
}

// allreduceStrategies parses allreduce.strategies.
func allreduceStrategies(cfg Config) ([]strategy.Strategy, error) {
	strats := make([]strategy.Strategy, len(cfg.Allreduce.Strategies))
	for i, name := range cfg.Allreduce.Strategies {
		s, err := strategy.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("allreduce.strategies: %w", err)
		}
		strats[i] = s
	}
	return strats, nil
}

func allreduceList(cfg Config) ([]Point, error) {
	if _, err := allreduceStrategies(cfg); err != nil {
		return nil, err
	}
	if err := allreducePartitions(cfg); err != nil {
		return nil, err
	}
	if err := allreduceCQs(cfg); err != nil {
		return nil, err
	}
	var pts []Point
	for _, n := range cfg.Allreduce.Nodes {
		for _, s := range cfg.Allreduce.Strategies {
			pc := cfg
			pc.Allreduce.Nodes = []int{n}
			pc.Allreduce.Strategies = []string{s}
			pts = append(pts, Point{Label: fmt.Sprintf("%s n=%d", s, n), Config: pc})
		}
	}
	return pts, nil
}

func allreduceSimulate(p Point, env Env) ([]byte, error) {
	cfg := p.Config
	a := cfg.Allreduce
	s, err := strategy.Parse(a.Strategies[0])
	if err != nil {
		return nil, err
	}
	n := a.Nodes[0]
	w := workload.Allreduce{Size: a.Size, WGs: a.WGs, MaxWGs: cfg.maxSlices(), WGSize: a.WGSize, CPUThreads: a.CPUThreads, Algorithm: a.Algorithm,
		SyncPerRound: cfg.XTQ.SyncPerRound}
	c, err := newPartitionedRun(cfg, env, p.Label, n, s)
	if err != nil {
		return nil, err
	}
	defer c.Close() // release daemon coroutines (the GPUs' CPs) and their memory
	if env.Arena != nil {
		for _, nd := range c.Nodes {
			nd.Mem.UseArena(env.Arena)
		}
	}
	res, err := w.Run(c, s, strategyConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("%s on %d nodes: %w", s, n, err)
	}
	return json.Marshal(allreducePoint{n, s, res.Time, c.Events(), res.Verified, res.Slices, c.Nodes[0].CPU.CoreStatsAt(c.Now()), res.ServiceEnergy})
}

func allreduceAssemble(cfg Config, results [][]byte) (*report.Result, error) {
	strats, err := allreduceStrategies(cfg)
	if err != nil {
		return nil, err
	}
	points, err := decodeResults[allreducePoint](results)
	if err != nil {
		return nil, err
	}
	return allreduceReport(cfg, strats, points), nil
}

func allreduceReport(cfg Config, strats []strategy.Strategy, points []allreducePoint) *report.Result {
	base := strats[0]
	if slices.Contains(strats, strategy.CPU) {
		base = strategy.CPU
	}
	baseline := map[int]sim.Time{}
	for _, p := range points {
		if p.Strategy == base {
			baseline[p.Nodes] = p.Time
		}
	}
	long := report.Table{Name: "allreduce", Columns: []string{"nodes", "strategy", "time", "time_us", "speedup_vs_" + string(base), "events", "verified", "wgs", "service_energy_uj"}}
	wide := report.Table{Name: "speedup vs " + string(base), Columns: []string{"nodes"}}
	for _, s := range strats {
		wide.Columns = append(wide.Columns, string(s)+" time", string(s)+" speedup")
	}
	plot := &report.Plot{Title: fmt.Sprintf("Allreduce %v float32 SUM, preset %s", cfg.Allreduce.Size, cfg.Run.Preset),
		XLabel: "nodes", YLabel: "speedup vs " + string(base)}
	series := map[strategy.Strategy]*report.Series{}
	for _, s := range strats {
		series[s] = &report.Series{Name: string(s)}
	}
	allVerified := true
	for i, p := range points {
		sp := float64(baseline[p.Nodes]) / float64(p.Time)
		checked := any("-") // payload-free: nothing was compared (no check, not a failed one)
		if cfg.Run.Functional {
			checked = p.Verified
		}
		long.Rows = append(long.Rows, []any{p.Nodes, string(p.Strategy), p.Time, round3(p.Time.Micros()), round3(sp), p.Events, checked, p.Slices, round3(p.Energy * 1e6)})
		if i%len(strats) == 0 {
			wide.Rows = append(wide.Rows, []any{p.Nodes})
		}
		row := &wide.Rows[len(wide.Rows)-1]
		*row = append(*row, p.Time, round3(sp))
		series[p.Strategy].X = append(series[p.Strategy].X, float64(p.Nodes))
		series[p.Strategy].Y = append(series[p.Strategy].Y, sp)
		allVerified = allVerified && p.Verified
	}
	for _, s := range strats {
		plot.Series = append(plot.Series, *series[s])
	}
	times := allreduceTimes(strats, points)
	res := &report.Result{Experiment: "allreduce", Seed: cfg.Run.Seed, Plot: plot,
		Tables: []report.Table{wide, long, coreTable(points), report.CrossoverTable("crossovers (time)", "nodes", "faster", times)}}
	res.Outputs = allreduceOutputs(strats, base, plot.Series, times)
	res.Notes = append(res.Notes, fmt.Sprintf("time = until the last node holds the full result; speedup = %s time / strategy time", base))
	if cfg.Run.Functional && allVerified {
		res.Notes = append(res.Notes, "functional: every node's result matched the serial float32 sum exactly (inputs are multiples of 1/8, so every order of summation is exact)")
	} else if !cfg.Run.Functional {
		res.Notes = append(res.Notes, "payload-free run: buffers carry no bytes (same timing); results not verified")
	}
	if slices.Contains(strats, "XTQ") {
		when := "once, before the first XtqPut, every round's receive resources posted up front"
		if cfg.XTQ.SyncPerRound {
			when = "before every XtqPut round, each target re-posting its receive buffer"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("XTQ resource-ready sync (xtq.sync_per_round = %t): %s", cfg.XTQ.SyncPerRound, when))
	}
	if slices.Contains(strats, "GHN_APU") {
		res.Notes = append(res.Notes, "GHN_APU stands for the GPU-TN chapter's GHN, which the dissertation bases on the ComP-Net chapter's APU runtime (the multi-ring allreduce with host helper threads); on which hardware it ran is not stated: here it runs on this run's preset in APU mode (a choice)")
	}
	for _, st := range strats {
		if d, err := strategy.Lookup(string(st)); err == nil && d.Caps.Has(strategy.DeviceShmem) {
			res.Notes = append(res.Notes, energyNote(cfg))
			break
		}
	}
	return res
}

// allreduceTimes returns each strategy's time (µs) against node count.
func allreduceTimes(strats []strategy.Strategy, points []allreducePoint) []report.Series {
	out := make([]report.Series, len(strats))
	for i, s := range strats {
		out[i].Name = string(s)
		for _, p := range points {
			if p.Strategy == s {
				out[i].X = append(out[i].X, float64(p.Nodes))
				out[i].Y = append(out[i].Y, p.Time.Micros())
			}
		}
	}
	return out
}

// allreduceOutputs names the scalar results: the last strategy's speedup
// at the largest node count first (the headline), then every speedup and
// time, then every crossover of the times.
func allreduceOutputs(strats []strategy.Strategy, base strategy.Strategy, speedups, times []report.Series) []report.Output {
	var out []report.Output
	last := speedups[len(speedups)-1]
	if n := len(last.X); n > 0 && strats[len(strats)-1] != base {
		out = append(out, report.Output{Name: fmt.Sprintf("%s speedup vs %s at %g nodes", last.Name, base, last.X[n-1]), Value: last.Y[n-1], Unit: "x"})
	}
	for _, s := range speedups {
		if s.Name == string(base) {
			continue
		}
		for i, x := range s.X {
			name := fmt.Sprintf("%s speedup vs %s at %g nodes", s.Name, base, x)
			if len(out) == 0 || out[0].Name != name {
				out = append(out, report.Output{Name: name, Value: s.Y[i], Unit: "x"})
			}
		}
	}
	for _, s := range times {
		for i, x := range s.X {
			out = append(out, report.Output{Name: fmt.Sprintf("%s time at %g nodes", s.Name, x), Value: s.Y[i], Unit: "us"})
		}
	}
	return append(out, report.CrossoverOutputs("nodes", "faster", times)...)
}

// coreTable reports how busy node 0's host cores were over each run:
// running, polling or switching, as a fraction of the run's time.
func coreTable(points []allreducePoint) report.Table {
	t := report.Table{Name: "host core utilisation (node 0)", Columns: []string{"nodes", "strategy", "polling_share"}}
	if len(points) == 0 {
		return t
	}
	for k := range points[0].Cores {
		t.Columns = append(t.Columns, fmt.Sprintf("core%d", k))
	}
	for _, p := range points {
		var busy, polling sim.Duration
		row := []any{p.Nodes, string(p.Strategy), 0.0}
		for _, c := range p.Cores {
			busy, polling = busy+c.Busy, polling+c.Polling
			row = append(row, round3(c.Utilization(p.Time)))
		}
		if busy > 0 {
			row[2] = round3(float64(polling) / float64(busy))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// round3 rounds v to three decimals (half up), as every table prints its
// ratios and derived values.
func round3(v float64) float64 { return roundScaled(v, 1e3) }

// roundScaled rounds v to the multiple of 1/scale nearest it (half up).
// A value whose scaled form passes 2^53 has no fraction left to round, and
// one past int64 wrapped through the conversion (an energy ratio against a
// base of 1e-20 W printed -9.2e15): such values, and NaN and ±Inf, are
// returned as they are.
func roundScaled(v, scale float64) float64 {
	x := v*scale + 0.5
	if !(math.Abs(x) < 1<<53) {
		return v
	}
	return float64(int64(x)) / scale
}

// reportNodes is the allreduce's size in "gpunetsim report": node counts
// doubling from 2 to 64, as the no-argument run.
func reportNodes(cfg *Config) { cfg.Allreduce.Nodes = []int{2, 4, 8, 16, 32, 64} }

// quickAllreduce is a seconds-long allreduce for tests: 96KiB on 2 and 4
// nodes.
func quickAllreduce(cfg *Config) {
	cfg.Allreduce.Nodes = []int{2, 4}
	cfg.Allreduce.Size = 96 * unit.KiB
}

// allreduceCQs refuses, before any work, a device-verbs allreduce
// (GNN_GPURDMA) on more nodes than its GPI queues' CQs can serve: each
// is sized for a QP to every rank (gpi.CQEntries), and a CQ holds at most
// nic.MaxCQEntries.
func allreduceCQs(cfg Config) error {
	for _, name := range cfg.Allreduce.Strategies {
		sd, err := strategy.Lookup(name)
		if err != nil {
			continue // allreduce.strategies reports it
		}
		if im, ok := workload.AllreduceDef().Impl(sd); !ok || im.Name != "device-verbs" {
			continue
		}
		for _, n := range cfg.Allreduce.Nodes {
			// A CQ for e completions is a ring of the next power of two
			// above e slots (verbs.CQRing), at most nic.MaxCQEntries.
			if e, most := gpi.CQEntries(n, cfg.GNN.QPDepth), nic.MaxCQEntries-1; e > most {
				return fmt.Errorf("%w: allreduce.nodes = %d: %s's GPI sizes each queue's CQ for a QP to every rank, 2(n-1) x gnn.qp_depth = %d entries, more than a CQ holds (%d); use gnn.qp_depth <= %d or at most %d nodes",
					sim.ErrConfig, n, name, e, most, most/(2*(n-1)), most/(2*cfg.GNN.QPDepth)+1)
			}
		}
	}
	return nil
}
