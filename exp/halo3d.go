package exp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// Halo3DSpec holds the knobs of the 6-neighbour 3-D halo exchange.
type Halo3DSpec struct {
	MinFace    unit.Bytes `toml:"min_face" doc:"smallest face per neighbour (sizes double up to max_face)" src:"DEFAULT"`
	MaxFace    unit.Bytes `toml:"max_face" doc:"largest face per neighbour" src:"DEFAULT"`
	Nodes      []int      `toml:"nodes" doc:"machine nodes to sweep, each of node.gpus GPUs (weak scaling: the face per GPU is fixed)" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare (default: the two-sided families CPU and HDN)" src:"DEFAULT"`
	Iters      int        `toml:"iters" doc:"exchanges per run; the time is per exchange" src:"DEFAULT"`
}

func defaultHalo3D() Halo3DSpec {
	return Halo3DSpec{MinFace: 64, MaxFace: 1 * unit.MiB, Nodes: []int{1, 4}, Strategies: []string{"CPU", "HDN"}, Iters: 2}
}

func (h Halo3DSpec) validate() error {
	var errs []error
	if h.MinFace < 8 || h.MinFace%8 != 0 || h.MaxFace < h.MinFace || h.MaxFace > 64*unit.MiB {
		errs = append(errs, fmt.Errorf("halo3d.min_face = %v, halo3d.max_face = %v: must be multiples of 8 bytes with 8B <= min_face <= max_face <= 64MiB", h.MinFace, h.MaxFace))
	}
	errs = append(errs, checkNodeList("halo3d.nodes", h.Nodes)...)
	if h.Iters < 1 || h.Iters > 1000 {
		errs = append(errs, fmt.Errorf("halo3d.iters = %d: must be in [1, 1000]", h.Iters))
	}
	errs = append(errs, checkStrategies("halo3d.strategies", h.Strategies, workloadStrategies("halo3d")))
	return errors.Join(errs...)
}

type halo3DPoint struct {
	Face     unit.Bytes `json:"face"`
	Nodes    int        `json:"nodes"`
	Ranks    int        `json:"ranks"`
	Dims     [3]int     `json:"dims"`
	Strategy string     `json:"strategy"`
	Impl     string     `json:"impl"`
	Time     sim.Time   `json:"time"`
	Events   uint64     `json:"events"`
	Verified bool       `json:"verified"`
}

func halo3DPoints() Points {
	return Points{List: halo3DList, Simulate: halo3DSimulate, Assemble: halo3DAssemble}
}

func runHalo3D(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(halo3DPoints(), cfg, env)
}

func quickHalo3D(cfg *Config) {
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Nodes = 1*unit.KiB, 4*unit.KiB, []int{1, 2}
}

func halo3DList(cfg Config) ([]Point, error) {
	var pts []Point
	for _, n := range cfg.Halo3D.Nodes {
		for _, f := range doublings(cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace) {
			for _, s := range cfg.Halo3D.Strategies {
				pc := cfg
				pc.Halo3D.Nodes, pc.Halo3D.MinFace, pc.Halo3D.MaxFace, pc.Halo3D.Strategies = []int{n}, f, f, []string{s}
				pts = append(pts, Point{Label: fmt.Sprintf("%s nodes=%d %v", s, n, f), Config: pc})
			}
		}
	}
	return pts, nil
}

func halo3DSimulate(p Point, env Env) ([]byte, error) {
	h := p.Config.Halo3D
	c, s, err := newNodesRun(p, env, h.Strategies[0], h.Nodes[0])
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.Halo3D{Face: h.MinFace, Iters: h.Iters, WGSize: 256}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(halo3DPoint{Face: h.MinFace, Nodes: h.Nodes[0], Ranks: len(c.Nodes), Dims: r.Dims, Strategy: string(s), Impl: r.Impl,
		Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified})
}

func halo3DAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[halo3DPoint](raw)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "halo3d", Columns: []string{"nodes", "gpus", "grid", "face", "strategy", "impl", "time", "time_us", "GB/s_per_gpu", "verified"}}
	win := report.Table{Name: "winner", Columns: []string{"nodes", "face", "fastest", "time_us", "runner_up", "runner_up_us"}}
	type key struct {
		n int
		f unit.Bytes
	}
	groups := map[key][]halo3DPoint{}
	var keys []key
	plot := &report.Plot{Title: fmt.Sprintf("3-D halo exchange (6 neighbours) per exchange, preset %s", cfg.Run.Preset),
		XLabel: "face per neighbour (bytes)", YLabel: "time (us)", LogX: true}
	series := map[string]int{}
	for _, p := range points {
		bw := 6 * float64(p.Face) / p.Time.Seconds() / 1e9
		t.Rows = append(t.Rows, []any{p.Nodes, p.Ranks, fmt.Sprintf("%dx%dx%d", p.Dims[0], p.Dims[1], p.Dims[2]), p.Face, p.Strategy, p.Impl,
			p.Time, round3(p.Time.Micros()), round3(bw), p.Verified})
		k := key{p.Nodes, p.Face}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
		name := fmt.Sprintf("%s %d GPUs", p.Strategy, p.Ranks)
		i, ok := series[name]
		if !ok {
			i = len(plot.Series)
			series[name] = i
			plot.Series = append(plot.Series, report.Series{Name: name})
		}
		plot.Series[i].X = append(plot.Series[i].X, float64(p.Face))
		plot.Series[i].Y = append(plot.Series[i].Y, p.Time.Micros())
	}
	for _, k := range keys {
		ps := groups[k]
		best, second := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Time })
		row := []any{k.n, k.f, ps[best].Strategy, round3(ps[best].Time.Micros()), "", ""}
		if second >= 0 {
			row[4], row[5] = ps[second].Strategy, round3(ps[second].Time.Micros())
		}
		win.Rows = append(win.Rows, row)
	}
	res := &report.Result{Experiment: "halo3d", Seed: cfg.Run.Seed, Tables: []report.Table{t, win}, Plot: plot}
	res.Notes = append(res.Notes,
		"periodic px x py x pz grid of GPUs (x fastest: a node's GPUs are x neighbours), one face to each of 6 neighbours per exchange; time per exchange = every rank released together to the last rank's end, over halo3d.iters",
		"CPU packs and unpacks on the host's cores; HDN in a kernel before the sends and after the receives (kernel boundary); GB/s per GPU = 6 faces / time",
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access) GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc) and a GDS stream enqueues peer copies where the workload does (ping-pong); eager MPI messages, the other stream workloads and triggered operations take their NIC path carried by the GPU fabric")
	return res, nil
}
