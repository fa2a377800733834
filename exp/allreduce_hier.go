package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpunetsim/gpunetsim/hw/cluster"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// AllreduceHierSpec holds the knobs of the hierarchical allreduce.
type AllreduceHierSpec struct {
	Size       unit.Bytes `toml:"size" doc:"float32 vector per GPU" src:"DEFAULT"`
	Nodes      []int      `toml:"nodes" doc:"machine nodes to sweep, each of node.gpus GPUs (ranks = nodes x node.gpus)" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare (default: CPU, HDN, GDS, GPUTN, the device-shmem GNN_GIO and the device-verbs GNN_GPURDMA, less what the preset's NIC cannot run; GHN_* and COMPNET run the device-shmem implementation too)" src:"DEFAULT"`
	WGSize     int        `toml:"wg_size" doc:"HDN: work-items per work-group of the reduction kernels" src:"DEFAULT"`
	CommWGs    int        `toml:"comm_wgs" doc:"work-groups (SMs) of the GPU-initiated persistent kernels (device shmem, device verbs, GPU-TN's triggered kernel): work-group w runs the three phases on slice w of the vector, as NCCL's channels do; each streams at most gpu.lsu_bytes per cycle" src:"DEFAULT" ref:"no source"`
	Inter      string     `toml:"inter" doc:"inter-node algorithm per rail: ring (2(N-1) steps of 1/N of the chunk; messages grow with N squared) or tree (NCCL's double binary tree, half the chunk per tree, one message per edge, no pipelining; 2 log2 N deep) or rhd (recursive halving-doubling: 2 log2 N steps, each node moves about twice its chunk). Default ring: the bandwidth-optimal algorithm the workload has always run; NCCL chooses per size and scale with its own cost model, which is not modelled" src:"DEFAULT"`
}

func defaultAllreduceHier() AllreduceHierSpec {
	return AllreduceHierSpec{Size: 1 * unit.MiB, Nodes: []int{1, 2, 4, 8}, Strategies: []string{"CPU", "HDN", "GDS", "GPUTN", "GNN_GIO", "GNN_GPURDMA"}, WGSize: 256, CommWGs: 2, Inter: workload.HierRing}
}

func (a AllreduceHierSpec) validate() error {
	var errs []error
	if a.Size < 4 || a.Size%4 != 0 || a.Size > 1*unit.GiB {
		errs = append(errs, fmt.Errorf("allreduce_hier.size = %v: must be a multiple of 4 bytes in [4B, 1GiB]", a.Size))
	}
	errs = append(errs, checkNodeList("allreduce_hier.nodes", a.Nodes)...)
	if a.WGSize < 1 || a.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("allreduce_hier.wg_size = %d: must be in [1, 1024]", a.WGSize))
	}
	if a.CommWGs < 1 || a.CommWGs > 1024 {
		errs = append(errs, fmt.Errorf("allreduce_hier.comm_wgs = %d: must be in [1, 1024]", a.CommWGs))
	}
	if a.Inter != workload.HierRing && a.Inter != workload.HierTree && a.Inter != workload.HierRHD {
		errs = append(errs, fmt.Errorf("allreduce_hier.inter = %q: must be %s, %s or %s", a.Inter, workload.HierRing, workload.HierTree, workload.HierRHD))
	}
	errs = append(errs, checkStrategies("allreduce_hier.strategies", a.Strategies, workloadStrategies("allreduce_hier")))
	return errors.Join(errs...)
}

// hierPoint is one simulated (nodes, strategy).
type hierPoint struct {
	Nodes    int         `json:"nodes"`
	Ranks    int         `json:"ranks"`
	Strategy string      `json:"strategy"`
	Impl     string      `json:"impl"`
	Time     sim.Time    `json:"time"`
	Phases   [3]sim.Time `json:"phases"`
	Events   uint64      `json:"events"`
	Verified bool        `json:"verified"`
}

func allreduceHierPoints() Points {
	return Points{List: allreduceHierList, Simulate: allreduceHierSimulate, Assemble: allreduceHierAssemble}
}

func runAllreduceHier(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(allreduceHierPoints(), cfg, env)
}

func quickAllreduceHier(cfg *Config) {
	cfg.AllreduceHier.Size, cfg.AllreduceHier.Nodes = 16*unit.KiB, []int{1, 2}
}

func allreduceHierList(cfg Config) ([]Point, error) {
	var pts []Point
	for _, n := range cfg.AllreduceHier.Nodes {
		for _, s := range cfg.AllreduceHier.Strategies {
			pc := cfg
			pc.AllreduceHier.Nodes, pc.AllreduceHier.Strategies = []int{n}, []string{s}
			pts = append(pts, Point{Label: fmt.Sprintf("%s nodes=%d", s, n), Config: pc})
		}
	}
	return pts, nil
}

func allreduceHierSimulate(p Point, env Env) ([]byte, error) {
	a := p.Config.AllreduceHier
	c, s, err := newNodesRun(p, env, a.Strategies[0], a.Nodes[0])
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.AllreduceHier{Size: a.Size, WGSize: a.WGSize, CommWGs: a.CommWGs, Inter: a.Inter}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(hierPoint{Nodes: a.Nodes[0], Ranks: len(c.Nodes), Strategy: string(s), Impl: r.Impl, Time: r.Time, Phases: r.Phases,
		Events: c.Engine.Events(), Verified: r.Verified})
}

func allreduceHierAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[hierPoint](raw)
	if err != nil {
		return nil, err
	}
	a := cfg.AllreduceHier
	t := report.Table{Name: "allreduce_hier", Columns: []string{"nodes", "gpus", "strategy", "impl", "time", "time_us",
		"intra_reduce_scatter_us", "inter_node_ring_us", "intra_allgather_us", "bus_GB/s", "verified"}}
	win := report.Table{Name: "winner", Columns: []string{"nodes", "gpus", "fastest", "time_us", "runner_up", "runner_up_us"}}
	series := map[string]*report.Series{}
	var order []string
	byNodes := map[int][]hierPoint{}
	var nodes []int
	for _, p := range points {
		// Bus bandwidth as collective benchmarks report it: 2(P−1)/P of the
		// vector per rank, over the time; none (an empty cell, not 0 GB/s)
		// for one GPU, which moves nothing in no time.
		var bus any
		if p.Ranks > 1 {
			if r, ok := rateGBps(2*float64(p.Ranks-1)/float64(p.Ranks)*float64(a.Size), p.Time).(float64); ok {
				bus = round3(r)
			}
		}
		t.Rows = append(t.Rows, []any{p.Nodes, p.Ranks, p.Strategy, p.Impl, p.Time, round3(p.Time.Micros()),
			round3(p.Phases[0].Micros()), round3(p.Phases[1].Micros()), round3(p.Phases[2].Micros()), bus, checkedCell(cfg.Run.Functional, p.Verified)})
		if series[p.Strategy] == nil {
			series[p.Strategy] = &report.Series{Name: p.Strategy}
			order = append(order, p.Strategy)
		}
		series[p.Strategy].X = append(series[p.Strategy].X, float64(p.Ranks))
		series[p.Strategy].Y = append(series[p.Strategy].Y, p.Time.Micros())
		if byNodes[p.Nodes] == nil {
			nodes = append(nodes, p.Nodes)
		}
		byNodes[p.Nodes] = append(byNodes[p.Nodes], p)
	}
	for _, n := range nodes {
		ps := byNodes[n]
		best, second := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Time })
		row := []any{n, ps[best].Ranks, ps[best].Strategy, round3(ps[best].Time.Micros()), "", ""}
		if second >= 0 {
			row[4], row[5] = ps[second].Strategy, round3(ps[second].Time.Micros())
		}
		win.Rows = append(win.Rows, row)
	}
	plot := &report.Plot{Title: fmt.Sprintf("Hierarchical allreduce, %v float32 per GPU, %s per node, preset %s", a.Size, countOf(max(1, cfg.Node.GPUs), "GPU"), cfg.Run.Preset),
		XLabel: "GPUs", YLabel: "time (us)", LogX: true}
	for _, s := range order {
		plot.Series = append(plot.Series, *series[s])
	}
	res := &report.Result{Experiment: "allreduce_hier", Seed: cfg.Run.Seed, Tables: []report.Table{t, win}, Plot: plot}
	res.Notes = append(res.Notes,
		"phases (rank 0): intra-node reduce-scatter over the GPU fabric (direct exchange), allreduce per rail across nodes (allreduce_hier.inter = "+a.Inter+"; the column inter_node_ring_us is this phase whichever the algorithm), intra-node allgather; time = every rank released together to the last rank's end",
		"HDN reduces each received chunk with its own kernel at the kernel boundary (node.gpus - 1 kernels in the first phase); CPU on the host's share of cores; device shmem (GNN_GIO, GHN_*, COMPNET): one persistent kernel per GPU of allreduce_hier.comm_wgs work-groups, each on its slice of the vector, puts every chunk and ring piece from a staging slot with a trailing flag and reduces what it awaits; device verbs (GNN_GPURDMA): the same kernel posts RDMA writes of slot and flag (WQE, fence, doorbell) on QP w mod gnn.qps; a work-group streams at most gpu.lsu_bytes per cycle; GDS: the same slots, every put pre-posted, the stream runs a staging/reduction kernel, a NIC trigger and a wait per step; GPU-TN: one persistent kernel of allreduce_hier.comm_wgs work-groups, each on its slice, stages, fires its own registered triggered puts with stores (the host registers them round-robin over the work-groups; gated beyond nic.trig_max_entries) and polls the flags",
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access), GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc) and a GDS stream enqueues peer copies where the workload does (ping-pong); eager MPI messages, the other stream workloads and triggered operations take their NIC path carried by the GPU fabric")
	if !cfg.Run.Functional {
		res.Notes = append(res.Notes, payloadFreeNote)
	}
	return res, nil
}

// checkNodeList reports an empty node list or a count outside [1, 16384]
// (the present-day workloads' node counts: GPUs per node × nodes ranks).
func checkNodeList(name string, nodes []int) []error {
	var errs []error
	if len(nodes) == 0 {
		errs = append(errs, fmt.Errorf("%s is empty: must list node counts in [1, 16384]", name))
	}
	if err := listedTwice(name, nodes); err != nil {
		errs = append(errs, err)
	}
	for _, n := range nodes {
		if n < 1 || n > 16384 {
			errs = append(errs, fmt.Errorf("%s contains %d: must be in [1, 16384]", name, n))
		}
	}
	return errs
}

// newNodesRun builds the cluster of one point of a present-day workload
// whose node count counts nodes: nodes × node.gpus ranks, under the named
// strategy.
func newNodesRun(p Point, env Env, name string, nodes int) (*cluster.Cluster, strategy.Strategy, error) {
	s, err := strategy.Parse(name)
	if err != nil {
		return nil, "", err
	}
	c, err := newRun(p.Config, env, p.Label, nodes*max(1, p.Config.Node.GPUs), s)
	return c, s, err
}
