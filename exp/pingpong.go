package exp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// PingPongSpec holds the knobs of the present-day ping-pong.
type PingPongSpec struct {
	MinSize    unit.Bytes `toml:"min_size" doc:"smallest message (sizes double up to max_size); the present-day study asks for small to large messages without sizes: 8 B is a choice" src:"DEFAULT"`
	MaxSize    unit.Bytes `toml:"max_size" doc:"largest message (16 MiB: a choice, past the bandwidth knee of every preset)" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare (default: every one with a ping-pong implementation that the preset's NIC runs; the source documents run no ping-pong)" src:"DEFAULT"`
	Placement  string     `toml:"placement" doc:"rails: the two GPUs sit on different nodes (rank 0 and rank node.gpus); fabric: two GPUs of one node over the intra-node GPU fabric (rank 0 and rank 1, needs node.gpus >= 2)" src:"DEFAULT"`
	Iters      int        `toml:"iters" doc:"round trips per size, back to back; the result is half their mean" src:"DEFAULT"`
}

func defaultPingPong() PingPongSpec {
	return PingPongSpec{MinSize: 8, MaxSize: 16 * unit.MiB, Strategies: []string{"CPU", "HDN", "GDS", "GPUTN", "GNN_GIO", "GNN_GPURDMA"}, Placement: "rails", Iters: 2}
}

func (p PingPongSpec) validate() error {
	var errs []error
	errs = append(errs, sizePair("pingpong.min_size", "pingpong.max_size", p.MinSize, p.MaxSize)...)
	if p.Placement != "rails" && p.Placement != "fabric" {
		errs = append(errs, fmt.Errorf("pingpong.placement = %q: must be rails or fabric", p.Placement))
	}
	if p.Iters < 1 || p.Iters > 64 {
		errs = append(errs, fmt.Errorf("pingpong.iters = %d: must be in [1, 64]", p.Iters))
	}
	errs = append(errs, checkStrategies("pingpong.strategies", p.Strategies, workloadStrategies("pingpong")))
	return errors.Join(errs...)
}

// pingPongRanks returns the cluster size and rank 0's partner.
func pingPongRanks(cfg Config) (ranks, peer int, err error) {
	g := max(1, cfg.Node.GPUs)
	if cfg.PingPong.Placement == "fabric" {
		if g < 2 {
			// Bad input (exit 2), found as the points are listed, before
			// any simulation.
			return 0, 0, fmt.Errorf("%w: pingpong.placement = fabric: needs node.gpus >= 2, preset %s has %d (use pingpong.placement=rails)", sim.ErrConfig, cfg.Run.Preset, g)
		}
		return g, 1, nil
	}
	return 2 * g, g, nil
}

// pingPongPoint is one simulated (size, strategy).
type pingPongPoint struct {
	Size     unit.Bytes `json:"size"`
	Strategy string     `json:"strategy"`
	Impl     string     `json:"impl"`
	Half     sim.Time   `json:"half"`
	GBps     float64    `json:"gbps"`
	Events   uint64     `json:"events"`
	Verified bool       `json:"verified"`
}

func pingPongPoints() Points {
	return Points{List: pingPongList, Simulate: pingPongSimulate, Assemble: pingPongAssemble}
}

func runPingPong(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(pingPongPoints(), cfg, env)
}

func quickPingPong(cfg *Config) { cfg.PingPong.MinSize, cfg.PingPong.MaxSize = 8, 4*unit.KiB }

func pingPongList(cfg Config) ([]Point, error) {
	if _, _, err := pingPongRanks(cfg); err != nil {
		return nil, err
	}
	var pts []Point
	for _, size := range doublings(cfg.PingPong.MinSize, cfg.PingPong.MaxSize) {
		for _, s := range cfg.PingPong.Strategies {
			pc := cfg
			pc.PingPong.MinSize, pc.PingPong.MaxSize, pc.PingPong.Strategies = size, size, []string{s}
			pts = append(pts, Point{Label: fmt.Sprintf("%s %v", s, size), Config: pc})
		}
	}
	return pts, nil
}

func pingPongSimulate(p Point, env Env) ([]byte, error) {
	pp := p.Config.PingPong
	s, err := strategy.Parse(pp.Strategies[0])
	if err != nil {
		return nil, err
	}
	ranks, peer, err := pingPongRanks(p.Config)
	if err != nil {
		return nil, err
	}
	c, err := newRun(p.Config, env, p.Label, ranks, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.PingPong{Size: pp.MinSize, Iters: pp.Iters, Peer: peer}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(pingPongPoint{Size: pp.MinSize, Strategy: string(s), Impl: r.Impl, Half: r.Half, GBps: r.GBps,
		Events: c.Engine.Events(), Verified: r.Verified})
}

func pingPongAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[pingPongPoint](raw)
	if err != nil {
		return nil, err
	}
	pp := cfg.PingPong
	t := report.Table{Name: "pingpong", Columns: []string{"size", "strategy", "impl", "half_round_trip", "half_round_trip_us", "bandwidth_GB/s", "verified"}}
	win := report.Table{Name: "winner", Columns: []string{"size", "fastest", "half_round_trip_us", "runner_up", "runner_up_us"}}
	series := map[string]*report.Series{}
	bw := map[string]*report.Series{}
	var order []string
	bySize := map[unit.Bytes][]pingPongPoint{}
	var sizes []unit.Bytes
	for _, p := range points {
		t.Rows = append(t.Rows, []any{p.Size, p.Strategy, p.Impl, p.Half, round3(p.Half.Micros()), p.GBps, checkedCell(cfg.Run.Functional, p.Verified)}) // GB/s unrounded: 3 decimals left one digit at 8 B
		if series[p.Strategy] == nil {
			series[p.Strategy] = &report.Series{Name: p.Strategy}
			bw[p.Strategy] = &report.Series{Name: p.Strategy}
			order = append(order, p.Strategy)
		}
		series[p.Strategy].X = append(series[p.Strategy].X, float64(p.Size))
		series[p.Strategy].Y = append(series[p.Strategy].Y, p.Half.Micros())
		bw[p.Strategy].X = append(bw[p.Strategy].X, float64(p.Size))
		bw[p.Strategy].Y = append(bw[p.Strategy].Y, p.GBps)
		if bySize[p.Size] == nil {
			sizes = append(sizes, p.Size)
		}
		bySize[p.Size] = append(bySize[p.Size], p)
	}
	for _, size := range sizes {
		ps := bySize[size]
		best, second := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Half })
		row := []any{size, ps[best].Strategy, round3(ps[best].Half.Micros()), "", ""}
		if second >= 0 {
			row[3], row[4] = ps[second].Strategy, round3(ps[second].Half.Micros())
		}
		win.Rows = append(win.Rows, row)
	}
	where := "two GPUs on different nodes, over the rails"
	if pp.Placement == "fabric" {
		where = "two GPUs of one node, over the intra-node GPU fabric"
	}
	plot := &report.Plot{Title: fmt.Sprintf("Ping-pong half round trip, %s, preset %s", where, cfg.Run.Preset),
		XLabel: "message size (bytes)", YLabel: "half round trip (us)", LogX: true}
	for _, s := range order {
		plot.Series = append(plot.Series, *series[s])
	}
	res := &report.Result{Experiment: "pingpong", Seed: cfg.Run.Seed, Tables: []report.Table{t, win}, Plot: plot}
	res.Notes = append(res.Notes,
		fmt.Sprintf("%s; %d round trips per size back to back, half their mean reported; GB/s = size / half round trip", where, pp.Iters),
		"each GPU hop runs a kernel that copies the received message into the send buffer (GPU-TN, device shmem and device verbs: one persistent kernel per rank polling its arrival flag); CPU echoes its receive buffer",
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access), GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc) and a GDS stream enqueues peer copies where the workload does (ping-pong); eager MPI messages, the other stream workloads and triggered operations take their NIC path carried by the GPU fabric")
	if !cfg.Run.Functional {
		res.Notes = append(res.Notes, payloadFreeNote)
	}
	return res, nil
}

// fastestTwo returns the indices of the least and second-least of n
// times (second is -1 when n < 2): a winner table's winner and runner-up.
func fastestTwo(n int, time func(i int) sim.Time) (best, second int) {
	best, second = -1, -1
	for i := range n {
		switch {
		case best < 0 || time(i) < time(best):
			best, second = i, best
		case second < 0 || time(i) < time(second):
			second = i
		}
	}
	return best, second
}
