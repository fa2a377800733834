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

// Halo3DSpec holds the knobs of the 3-D halo exchange.
type Halo3DSpec struct {
	MinFace    unit.Bytes `toml:"min_face" doc:"weak scaling: smallest face per neighbour (sizes double up to max_face; edges 8*sqrt(face/8) bytes, corners 8 bytes)" src:"DEFAULT"`
	MaxFace    unit.Bytes `toml:"max_face" doc:"weak scaling: largest face per neighbour" src:"DEFAULT"`
	Nodes      []int      `toml:"nodes" doc:"machine nodes to sweep, each of node.gpus GPUs" src:"DEFAULT"`
	Neighbours []int      `toml:"neighbours" doc:"stencils to run: 6 (faces) and/or 26 (faces, edges and corners)" src:"DEFAULT"`
	Scaling    string     `toml:"scaling" doc:"weak: the face per GPU is fixed (min_face..max_face); strong: a global cube of halo3d.domain cells per dimension split over the GPUs, messages shrinking as they grow" src:"DEFAULT"`
	Domain     int        `toml:"domain" doc:"strong scaling: global cells per dimension (8 bytes each) of the cube split over the GPUs" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare (default: every one with a halo implementation that the preset's NIC runs)" src:"DEFAULT"`
	Iters      int        `toml:"iters" doc:"exchanges per run; the time is per exchange" src:"DEFAULT"`
	CommWGs    int        `toml:"comm_wgs" doc:"work-groups (SMs) of the GPU-initiated implementations' persistent kernel (device shmem, GPU-TN, device verbs), work-group w serving the directions d = w mod comm_wgs; 0 = one per direction (6 or 26), at most the GPU's CUs" src:"DEFAULT" ref:"no source"`
}

func defaultHalo3D() Halo3DSpec {
	return Halo3DSpec{MinFace: 64, MaxFace: 1 * unit.MiB, Nodes: []int{1, 4}, Neighbours: []int{6, 26}, Scaling: "weak", Domain: 512,
		Strategies: []string{"CPU", "HDN", "GDS", "GPUTN", "GNN_GIO", "GNN_GPURDMA"}, Iters: 2}
}

func (h Halo3DSpec) validate() error {
	var errs []error
	errs = append(errs, sizePair("halo3d.min_face", "halo3d.max_face", h.MinFace, h.MaxFace)...)
	errs = append(errs, checkNodeList("halo3d.nodes", h.Nodes)...)
	if len(h.Neighbours) == 0 {
		errs = append(errs, fmt.Errorf("halo3d.neighbours is empty: must list 6 and/or 26"))
	}
	if err := listedTwice("halo3d.neighbours", h.Neighbours); err != nil {
		errs = append(errs, err)
	}
	for _, n := range h.Neighbours {
		if n != 6 && n != 26 {
			errs = append(errs, fmt.Errorf("halo3d.neighbours contains %d: must be 6 or 26", n))
		}
	}
	if h.Scaling != "weak" && h.Scaling != "strong" {
		errs = append(errs, fmt.Errorf("halo3d.scaling = %q: must be weak or strong", h.Scaling))
	}
	if h.Domain < 1 || h.Domain > 1<<16 {
		errs = append(errs, fmt.Errorf("halo3d.domain = %d: must be in [1, 65536] cells per dimension", h.Domain))
	}
	if h.CommWGs < 0 || h.CommWGs > 1024 {
		errs = append(errs, fmt.Errorf("halo3d.comm_wgs = %d: must be in [0, 1024] (0: one per direction)", h.CommWGs))
	}
	if h.Iters < 1 || h.Iters > 1000 {
		errs = append(errs, fmt.Errorf("halo3d.iters = %d: must be in [1, 1000]", h.Iters))
	}
	errs = append(errs, checkStrategies("halo3d.strategies", h.Strategies, workloadStrategies("halo3d")))
	return errors.Join(errs...)
}

type halo3DPoint struct {
	Face       unit.Bytes `json:"face"`
	Neighbours int        `json:"neighbours"`
	Bytes      uint64     `json:"bytes"`
	Nodes      int        `json:"nodes"`
	Ranks      int        `json:"ranks"`
	Dims       [3]int     `json:"dims"`
	Strategy   string     `json:"strategy"`
	Impl       string     `json:"impl"`
	Time       sim.Time   `json:"time"`
	Events     uint64     `json:"events"`
	Verified   bool       `json:"verified"`
}

func halo3DPoints() Points {
	return Points{List: halo3DList, Simulate: halo3DSimulate, Assemble: halo3DAssemble}
}

func runHalo3D(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(halo3DPoints(), cfg, env)
}

func quickHalo3D(cfg *Config) {
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Nodes = 1*unit.KiB, 1*unit.KiB, []int{1, 2}
}

func halo3DList(cfg Config) ([]Point, error) {
	h := cfg.Halo3D
	faces := doublings(h.MinFace, h.MaxFace)
	if h.Scaling == "strong" {
		faces = []unit.Bytes{0} // the sizes follow from halo3d.domain and the node count
	}
	var pts []Point
	for _, nb := range h.Neighbours {
		for _, n := range h.Nodes {
			for _, f := range faces {
				for _, s := range h.Strategies {
					pc := cfg
					pc.Halo3D.Nodes, pc.Halo3D.Neighbours, pc.Halo3D.Strategies = []int{n}, []int{nb}, []string{s}
					label := fmt.Sprintf("%s nodes=%d nb=%d strong %d^3", s, n, nb, h.Domain)
					if f > 0 {
						pc.Halo3D.MinFace, pc.Halo3D.MaxFace = f, f
						label = fmt.Sprintf("%s nodes=%d nb=%d %v", s, n, nb, f)
					}
					pts = append(pts, Point{Label: label, Config: pc})
				}
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
	hw := workload.Halo3D{Face: h.MinFace, Iters: h.Iters, WGSize: 256, Neighbours: h.Neighbours[0], CommWGs: h.CommWGs}
	if h.Scaling == "strong" {
		dm := workload.Dims3(len(c.Nodes))
		for k := range 3 {
			hw.Local[k] = (h.Domain + dm[k] - 1) / dm[k]
		}
	}
	r, err := hw.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	face := h.MinFace
	if h.Scaling == "strong" {
		face = unit.Bytes(r.Largest)
	}
	return json.Marshal(halo3DPoint{Face: face, Neighbours: h.Neighbours[0], Bytes: r.Bytes, Nodes: h.Nodes[0], Ranks: len(c.Nodes), Dims: r.Dims, Strategy: string(s), Impl: r.Impl,
		Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified})
}

func halo3DAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[halo3DPoint](raw)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "halo3d", Columns: []string{"nodes", "gpus", "grid", "neighbours", "face", "sent_per_gpu_B", "strategy", "impl", "time", "time_us", "bandwidth_per_gpu_GB/s", "verified"}}
	win := report.Table{Name: "winner", Columns: []string{"nodes", "neighbours", "face", "fastest", "time_us", "runner_up", "runner_up_us"}}
	type key struct {
		n, nb int
		f     unit.Bytes
	}
	groups := map[key][]halo3DPoint{}
	var keys []key
	plot := &report.Plot{Title: fmt.Sprintf("3-D halo exchange per exchange (%s scaling), preset %s", cfg.Halo3D.Scaling, cfg.Run.Preset),
		XLabel: "face per neighbour (bytes)", YLabel: "time (us)", LogX: true}
	if cfg.Halo3D.Scaling == "strong" {
		plot.XLabel = "GPUs"
	}
	series := map[string]int{}
	for _, p := range points {
		bw := rateGBps(float64(p.Bytes), p.Time) // none (empty) for a zero time, not +Inf
		t.Rows = append(t.Rows, []any{p.Nodes, p.Ranks, fmt.Sprintf("%dx%dx%d", p.Dims[0], p.Dims[1], p.Dims[2]), p.Neighbours, p.Face, p.Bytes, p.Strategy, p.Impl,
			p.Time, round3(p.Time.Micros()), bw, checkedCell(cfg.Run.Functional, p.Verified)}) // GB/s unrounded: 3 decimals left one digit for small faces
		k := key{p.Nodes, p.Neighbours, p.Face}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
		name := fmt.Sprintf("%s %s %d-nb", p.Strategy, countOf(p.Ranks, "GPU"), p.Neighbours)
		x := float64(p.Face)
		if cfg.Halo3D.Scaling == "strong" {
			name, x = fmt.Sprintf("%s %d-nb", p.Strategy, p.Neighbours), float64(p.Ranks)
		}
		i, ok := series[name]
		if !ok {
			i = len(plot.Series)
			series[name] = i
			plot.Series = append(plot.Series, report.Series{Name: name})
		}
		plot.Series[i].X = append(plot.Series[i].X, x)
		plot.Series[i].Y = append(plot.Series[i].Y, p.Time.Micros())
	}
	for _, k := range keys {
		ps := groups[k]
		best, second := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Time })
		row := []any{k.n, k.nb, k.f, ps[best].Strategy, round3(ps[best].Time.Micros()), "", ""}
		if second >= 0 {
			row[5], row[6] = ps[second].Strategy, round3(ps[second].Time.Micros())
		}
		win.Rows = append(win.Rows, row)
	}
	res := &report.Result{Experiment: "halo3d", Seed: cfg.Run.Seed, Tables: []report.Table{t, win}, Plot: plot}
	res.Notes = append(res.Notes,
		"periodic px x py x pz grid of GPUs (x fastest: a node's GPUs are x neighbours), one message to each of 6 (faces) or 26 (faces, edges, corners) neighbours per exchange; weak: face fixed, edges 8*sqrt(face/8) bytes, corners 8 bytes; strong: halo3d.domain^3 cells of 8 bytes split over the GPUs (face = the largest message); time per exchange = every rank released together to the last rank's end, over halo3d.iters",
		"CPU packs and unpacks on the host's cores; HDN in a kernel before the sends and after the receives (kernel boundary); GDS preposts every exchange's puts and its stream packs, rings them, waits on trailing flags and unpacks; device shmem (GNN_GIO, GHN_*, COMPNET): one persistent kernel, a work-group per direction group putting and awaiting; GB/s per GPU = bytes sent / time; GPUTN: the persistent kernel fires one registered triggered put per direction with a store (gated beyond nic.trig_max_entries); GNN_GPURDMA: its work-groups post RDMA writes on gnn.qps QPs per neighbour, taking turns on a shared QP; halo3d.comm_wgs sizes the persistent kernels (0: one work-group per direction)",
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access), GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc) and a GDS stream enqueues peer copies where the workload does (ping-pong); eager MPI messages, the other stream workloads and triggered operations take their NIC path carried by the GPU fabric")
	if !cfg.Run.Functional {
		res.Notes = append(res.Notes, payloadFreeNote)
	}
	return res, nil
}

// countOf is "1 GPU", "2 GPUs": n with noun, plural when n is not 1.
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
