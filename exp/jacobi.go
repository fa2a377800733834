package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// JacobiSpec holds the knobs shared by the Jacobi studies (the dissertation)
// and those of the one-iteration N×N sweep of §6.2.
type JacobiSpec struct {
	Strategies []string `toml:"strategies" doc:"N×N sweep: strategies to compare (default, as the GPU-TN chapter's Jacobi runs them: CPU, HDN, GDS, GHN_APU, GPUTN)" src:"DOC"`
	Baseline   string   `toml:"baseline" doc:"strategy the N×N sweep's speedups are against (the GPU-TN chapter's Jacobi: HDN)" src:"DOC"`
	Procs      string   `toml:"procs" doc:"N×N sweep: process grid rows x cols (the GPU-TN chapter does not give it; 4x4 = 16 nodes)" src:"DEFAULT"`
	Sizes      []int    `toml:"sizes" doc:"N×N sweep: local N (each node holds N×N points)" src:"DEFAULT"`
	Iters      int      `toml:"iters" doc:"iterations of the N×N and 1-D sweeps (the documents report one)" src:"DOC"`
	WGSize     int      `toml:"wg_size" doc:"work-items per work-group" src:"DEFAULT"`
	MaxWGs     int      `toml:"max_wgs" doc:"work-groups per kernel, or of the persistent kernel (at most what is resident); 0 = two per CU" src:"DEFAULT"`
	CPUThreads int      `toml:"cpu_threads" doc:"CPU strategy: OpenMP-style threads of the stencil" src:"DEFAULT"`
	VerifyMax  int      `toml:"verify_max_points" doc:"points per node up to which a run carries real bytes and is checked against the serial run; larger points are timed payload-free (same timing)" src:"RUN"`
}

// Jacobi1DSpec holds the knobs of the 1-D elements-per-node sweep (§6.1).
type Jacobi1DSpec struct {
	Nodes      int      `toml:"nodes" doc:"nodes (a row decomposition over nodes × 1)" src:"DOC"`
	Log2Elems  []int    `toml:"log2_elements" doc:"log2 of the points per node to sweep" src:"DEFAULT"`
	Strategies []string `toml:"strategies" doc:"strategies to compare (default, as the ComP-Net chapter's 1-D Jacobi runs them: CPU, HDN, GHN_DGPU, GHN_APU, COMPNET)" src:"DOC"`
	Baseline   string   `toml:"baseline" doc:"strategy the speedups are against (the ComP-Net chapter's 1-D Jacobi: GHN_DGPU)" src:"DOC"`
}

// JacobiScaleSpec holds the knobs of the strong and weak scaling studies
// with the time breakdown (§6.3).
type JacobiScaleSpec struct {
	Grids      []int    `toml:"grids" doc:"strong scaling: global grids G (G×G points); the GIO slides do not give theirs: a sweep of powers of two, 1K to 32K" src:"DEFAULT"`
	Nodes      []int    `toml:"nodes" doc:"strong scaling: node counts (process grids as square as the count allows; each must divide every grid)" src:"DOC"`
	WeakNodes  []int    `toml:"weak_nodes" doc:"weak scaling: node counts (the GIO slides: 1 to 4)" src:"DOC"`
	WeakSize   int      `toml:"weak_size" doc:"weak scaling: points per node on a side" src:"DOC"`
	Iters      int      `toml:"iters" doc:"iterations timed (the documents: 1000, or convergence; 20 keeps the default sweep to a minute: at large grids per-iteration time is steady, at small ones the first iterations carry start-up costs: 1024² on 4 nodes GNN_GIO 17.2 µs per iteration at 20, 16.7 at 100, GHN_DGPU 16.5 and 15.0)" src:"DEFAULT"`
	Strategies []string `toml:"strategies" doc:"strategies to compare, against jacobi.baseline (default, as the GIO slides' Jacobi runs them: CPU, HDN, HDN_OVERLAP, GHN_DGPU, GNN_GIO)" src:"DOC"`
}

// defaultJacobi returns the Jacobi studies' defaults: each study's
// strategies and baseline as the document whose figure it reproduces ran
// them (the N×N sweep: the GPU-TN chapter, GHN being GHN_APU there; the
// 1-D sweep: the ComP-Net chapter; strong and weak scaling: the GIO
// slides, Inter-K = HDN, Inter-K-Overlap = HDN_OVERLAP, IKN = GHN_DGPU).
// The device-shmem strategies' service threads poll through the whole
// run, every poll simulated, so their large points take minutes (the
// report's quick size cuts the sweeps).
func defaultJacobi() (JacobiSpec, Jacobi1DSpec, JacobiScaleSpec) {
	j := JacobiSpec{Strategies: []string{"CPU", "HDN", "GDS", "GHN_APU", "GPUTN"}, Baseline: "HDN", Procs: "4x4",
		Sizes: []int{32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}, Iters: 1, WGSize: 256, CPUThreads: 8, VerifyMax: 1 << 20}
	d1 := Jacobi1DSpec{Nodes: 8, Log2Elems: []int{10, 12, 14, 16, 18, 20, 22, 24, 26},
		Strategies: []string{"CPU", "HDN", "GHN_DGPU", "GHN_APU", "COMPNET"}, Baseline: "GHN_DGPU"}
	sc := JacobiScaleSpec{Grids: []int{1024, 2048, 4096, 8192, 16384, 32768}, Nodes: []int{1, 2, 4}, WeakNodes: []int{1, 2, 3, 4}, WeakSize: 2048, Iters: 20,
		Strategies: []string{"CPU", "HDN", "HDN_OVERLAP", "GHN_DGPU", "GNN_GIO"}}
	return j, d1, sc
}

// jacobiStrategies returns the strategies of Jacobi experiment kind.
func jacobiStrategies(cfg Config, kind string) []string {
	switch kind {
	case "1d":
		return cfg.Jacobi1D.Strategies
	case "strong", "weak":
		return cfg.JacobiScale.Strategies
	}
	return cfg.Jacobi.Strategies
}

// parseProcs reads "RxC".
func parseProcs(s string) (int, int, error) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	r, err1 := strconv.Atoi(strings.TrimSpace(a))
	c, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || r < 1 || c < 1 || r > 65536 || c > 65536 || r*c > 65536 { // each side first: r*c wraps int64 (2^32 x 2^32 = 0)
		return 0, 0, fmt.Errorf("jacobi.procs = %q: must be rows x cols, e.g. 4x4 or 3x5, at most 65536 nodes", s)
	}
	return r, c, nil
}

// squareGrid is the most square process grid of n nodes (rows ≤ cols).
func squareGrid(n int) (int, int) {
	r := 1
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			r = d
		}
	}
	return r, n / r
}

func (j JacobiSpec) validate() error {
	var errs []error
	allowed := workloadStrategies("jacobi")
	listErr := checkStrategies("jacobi.strategies", j.Strategies, allowed)
	errs = append(errs, listErr, checkMember("jacobi.baseline", j.Baseline, "jacobi.strategies", j.Strategies, listErr, allowed, ""))
	if _, _, err := parseProcs(j.Procs); err != nil {
		errs = append(errs, err)
	}
	if len(j.Sizes) == 0 {
		errs = append(errs, errors.New("jacobi.sizes is empty: give at least one local N"))
	}
	for _, n := range j.Sizes {
		if n < 3 || n > 1<<16 {
			errs = append(errs, fmt.Errorf("jacobi.sizes contains %d: local N must be in [3, 65536] (a halo row and column on each side of an interior point)", n))
		}
	}
	if j.Iters < 1 || j.Iters > 1<<20 {
		errs = append(errs, fmt.Errorf("jacobi.iters = %d: must be in [1, 1048576]", j.Iters))
	}
	if j.WGSize < 1 || j.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("jacobi.wg_size = %d: must be in [1, 1024]", j.WGSize))
	}
	if j.MaxWGs < 0 || j.MaxWGs > 1<<16 {
		errs = append(errs, fmt.Errorf("jacobi.max_wgs = %d: must be in [0, 65536] (0 = two per CU)", j.MaxWGs))
	}
	if j.CPUThreads < 1 || j.CPUThreads > 1024 {
		errs = append(errs, fmt.Errorf("jacobi.cpu_threads = %d: must be in [1, 1024]", j.CPUThreads))
	}
	if j.VerifyMax < 0 {
		errs = append(errs, fmt.Errorf("jacobi.verify_max_points = %d: must be ≥ 0", j.VerifyMax))
	}
	return errors.Join(errs...)
}

func (d Jacobi1DSpec) validate() error {
	var errs []error
	allowed := workloadStrategies("jacobi")
	listErr := checkStrategies("jacobi1d.strategies", d.Strategies, allowed)
	errs = append(errs, listErr)
	if d.Nodes < 1 || d.Nodes > 65536 {
		errs = append(errs, fmt.Errorf("jacobi1d.nodes = %d: must be in [1, 65536]", d.Nodes))
	}
	if len(d.Log2Elems) == 0 {
		errs = append(errs, errors.New("jacobi1d.log2_elements is empty: give at least one size"))
	}
	for _, e := range d.Log2Elems {
		if e < 4 || e > 30 {
			errs = append(errs, fmt.Errorf("jacobi1d.log2_elements contains %d: must be in [4, 30] (at least a 4×4 block per node)", e))
		}
	}
	errs = append(errs, checkMember("jacobi1d.baseline", d.Baseline, "jacobi1d.strategies", d.Strategies, listErr, allowed, ""))
	return errors.Join(errs...)
}

func (s JacobiScaleSpec) validate() error {
	var errs []error
	errs = append(errs, checkStrategies("jacobiscale.strategies", s.Strategies, workloadStrategies("jacobi")))
	if len(s.Grids) == 0 || len(s.Nodes) == 0 {
		errs = append(errs, errors.New("jacobiscale.grids and jacobiscale.nodes must not be empty"))
	}
	if len(s.WeakNodes) == 0 {
		errs = append(errs, errors.New("jacobiscale.weak_nodes must not be empty"))
	}
	for _, n := range s.WeakNodes {
		if n < 1 || n > 4096 {
			errs = append(errs, fmt.Errorf("jacobiscale.weak_nodes contains %d: must be in [1, 4096]", n))
		}
	}
	// A grid's own range (blocks of 3 to 65536 points a side on 1 to
	// 4096 nodes), checked whatever the node counts: checked only
	// against valid ones, a grid bad on its own went unreported beside a
	// bad node count.
	grids := make([]int, 0, len(s.Grids))
	for _, g := range s.Grids {
		if g < 3 || g > 1<<22 {
			errs = append(errs, fmt.Errorf("jacobiscale.grids contains %d: must be in [3, 4194304] (blocks of 3 to 65536 points a side on 1 to 4096 nodes)", g))
			continue
		}
		grids = append(grids, g)
	}
	for _, n := range s.Nodes {
		if n < 1 || n > 4096 {
			errs = append(errs, fmt.Errorf("jacobiscale.nodes contains %d: must be in [1, 4096]", n))
			continue
		}
		r, c := squareGrid(n)
		for _, g := range grids {
			if g%r != 0 || g%c != 0 || g/c < 3 || g/r < 3 {
				errs = append(errs, fmt.Errorf("jacobiscale.grids contains %d: the %dx%d process grid of %d nodes must divide it into blocks of at least 3×3", g, r, c, n))
			} else if g/c > 1<<16 || g/r > 1<<16 {
				// The same bound as weak_size: a node's block side at most
				// 65536 (larger blocks run for hours).
				errs = append(errs, fmt.Errorf("jacobiscale.grids contains %d: the %dx%d process grid of %d nodes gives blocks of %d×%d; the block side must be at most 65536", g, r, c, n, g/r, g/c))
			}
		}
	}
	if s.WeakSize < 3 || s.WeakSize > 1<<16 {
		errs = append(errs, fmt.Errorf("jacobiscale.weak_size = %d: must be in [3, 65536]", s.WeakSize))
	}
	if s.Iters < 1 || s.Iters > 1<<20 {
		errs = append(errs, fmt.Errorf("jacobiscale.iters = %d: must be in [1, 1048576]", s.Iters))
	}
	return errors.Join(errs...)
}

// jacobiCase is one simulation of a Jacobi experiment.
type jacobiCase struct {
	kind, strategy string
	size           int // local N, log2 points per node, or global G
	w              workload.Jacobi
}

// jacobiCases lists the simulations of Jacobi experiment kind ("nxn",
// "1d", "strong", "weak") in report order: sizes (and node counts) outer,
// strategies inner.
func jacobiCases(cfg Config, kind string) []jacobiCase {
	j := cfg.Jacobi
	mk := func(rows, cols, pr, pc, iters int) workload.Jacobi {
		return workload.Jacobi{Rows: rows, Cols: cols, PRows: pr, PCols: pc, Iters: iters, WGSize: j.WGSize, MaxWGs: j.MaxWGs, CPUThreads: j.CPUThreads}
	}
	var out []jacobiCase
	add := func(size int, w workload.Jacobi) {
		for _, s := range jacobiStrategies(cfg, kind) {
			out = append(out, jacobiCase{kind, s, size, w})
		}
	}
	sc := cfg.JacobiScale
	switch kind {
	case "nxn":
		pr, pc, _ := parseProcs(j.Procs)
		for _, n := range j.Sizes {
			add(n, mk(n*pr, n*pc, pr, pc, j.Iters))
		}
	case "1d":
		d := cfg.Jacobi1D
		for _, e := range d.Log2Elems {
			lx := 1 << ((e + 1) / 2) // the block as square as a power of two allows
			add(e, mk(d.Nodes*(1<<e)/lx, lx, d.Nodes, 1, j.Iters))
		}
	case "strong":
		for _, g := range sc.Grids {
			for _, n := range sc.Nodes {
				r, c := squareGrid(n)
				add(g, mk(g, g, r, c, sc.Iters))
			}
		}
	case "weak":
		for _, n := range sc.WeakNodes {
			r, c := squareGrid(n)
			add(sc.WeakSize, mk(sc.WeakSize*r, sc.WeakSize*c, r, c, sc.Iters))
		}
	}
	return out
}

// narrow returns cfg reduced to the one case c of experiment kind, so the
// point's configuration (which keys the study cache) says exactly what it
// runs. Points with more than jacobi.verify_max_points points per node run
// payload-free.
func (c jacobiCase) narrow(cfg Config) Config {
	pc := cfg
	pc.Jacobi.Strategies, pc.Jacobi1D.Strategies, pc.JacobiScale.Strategies = []string{c.strategy}, []string{c.strategy}, []string{c.strategy}
	pc.Jacobi.Baseline = c.strategy
	pc.Jacobi1D.Baseline = c.strategy
	switch c.kind {
	case "nxn":
		pc.Jacobi.Sizes = []int{c.size}
	case "1d":
		pc.Jacobi1D.Log2Elems = []int{c.size}
	case "strong":
		pc.JacobiScale.Grids = []int{c.size}
		pc.JacobiScale.Nodes = []int{c.w.PRows * c.w.PCols}
	case "weak":
		pc.JacobiScale.WeakNodes = []int{c.w.PRows * c.w.PCols}
	}
	if (c.w.Rows/c.w.PRows)*(c.w.Cols/c.w.PCols) > cfg.Jacobi.VerifyMax {
		pc.Run.Functional = false
	}
	return pc
}

// jacobiRun is the Run of Jacobi experiment kind.
func jacobiRun(kind string) func(cfg Config, env Env) (*report.Result, error) {
	return func(cfg Config, env Env) (*report.Result, error) { return RunPoints(jacobiPoints(kind), cfg, env) }
}

func jacobiPoints(kind string) Points {
	return Points{
		List: func(cfg Config) ([]Point, error) {
			var pts []Point
			for _, c := range jacobiCases(cfg, kind) {
				pts = append(pts, Point{Label: fmt.Sprintf("%s %s %d on %dx%d", kind, c.strategy, c.size, c.w.PRows, c.w.PCols),
					Config: c.narrow(cfg)})
			}
			return pts, nil
		},
		Simulate: func(p Point, env Env) ([]byte, error) { return jacobiSimulate(p, env, kind) },
		Assemble: func(cfg Config, raw [][]byte) (*report.Result, error) { return jacobiAssemble(cfg, kind, raw) },
	}
}

func jacobiSimulate(p Point, env Env, kind string) ([]byte, error) {
	cs := jacobiCases(p.Config, kind)
	if len(cs) != 1 {
		return nil, fmt.Errorf("jacobi point %s: %d cases, want 1", p.Label, len(cs))
	}
	c := cs[0]
	s, err := strategy.Parse(c.strategy)
	if err != nil {
		return nil, err
	}
	n := c.w.PRows * c.w.PCols
	cl, err := newRun(p.Config, env, p.Label, n, s)
	if err != nil {
		return nil, err
	}
	defer cl.Engine.Close()
	r, err := c.w.Run(cl, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err // RunPoints and the study name the point
	}
	pt := jacobiPoint{Kind: kind, Size: c.size, Nodes: n, Procs: fmt.Sprintf("%dx%d", c.w.PRows, c.w.PCols), Strategy: s,
		Impl: r.Impl, Iters: c.w.Iters, Time: r.Time, Events: cl.Engine.Events(), Verified: r.Verified,
		Payload: p.Config.Run.Functional, Phases: r.Phases}
	if len(r.Residuals) > 0 {
		pt.Residual = r.Residuals[len(r.Residuals)-1]
	}
	return json.Marshal(pt)
}

// jacobiPoint is one simulation's result, as the study cache stores it.
type jacobiPoint struct {
	Kind     string              `json:"kind"`
	Size     int                 `json:"size"`
	Nodes    int                 `json:"nodes"`
	Procs    string              `json:"procs"`
	Strategy strategy.Strategy   `json:"strategy"`
	Impl     string              `json:"impl"`
	Iters    int                 `json:"iters"`
	Time     sim.Time            `json:"time"`
	Events   uint64              `json:"events"`
	Verified bool                `json:"verified"`
	Payload  bool                `json:"payload"` // carried real bytes (and so was checked)
	Residual float32             `json:"residual"`
	Phases   map[string]sim.Time `json:"phases,omitempty"`
}

// jacobiBaseline is the strategy kind's speedups are against.
func jacobiBaseline(cfg Config, kind string) strategy.Strategy {
	if kind == "1d" {
		return strategy.Strategy(cfg.Jacobi1D.Baseline)
	}
	return strategy.Strategy(cfg.Jacobi.Baseline)
}

// jacobiKey groups the points that share a baseline: same kind, size and
// node count.
type jacobiKey struct {
	size, nodes int
}

func jacobiAssemble(cfg Config, kind string, raw [][]byte) (*report.Result, error) {
	pts, err := decodeResults[jacobiPoint](raw)
	if err != nil {
		return nil, err
	}
	base := jacobiBaseline(cfg, kind)
	baseTime := map[jacobiKey]sim.Time{}
	for _, p := range pts {
		if p.Strategy == base {
			baseTime[jacobiKey{p.Size, p.Nodes}] = p.Time
		}
	}
	sizeCol := map[string]string{"nxn": "local_n", "1d": "log2_points_per_node", "strong": "grid", "weak": "points_per_node_side"}[kind]
	long := report.Table{Name: "jacobi " + kind, Columns: []string{sizeCol, "nodes", "procs", "strategy", "impl", "iters", "time", "time_us",
		"per_iter_us", "comp_us", "launch_us", "comm_us", "speedup_vs_" + string(base), "verified", "events", "residual"}}
	series := map[string]*report.Series{}
	var order []string
	verified, payloadFree := 0, 0
	for _, p := range pts {
		sp := any("-")
		if b, ok := baseTime[jacobiKey{p.Size, p.Nodes}]; ok && p.Time > 0 {
			sp = round3(float64(b) / float64(p.Time))
		}
		per := p.Time.Micros() / float64(p.Iters)
		phase := func(k string) any {
			v, ok := p.Phases[k]
			if !ok {
				return "-"
			}
			return round3(v.Micros() / float64(p.Iters))
		}
		residual := any("-") // a payload-free run's residual is computed on no data
		checked := any("-")  // and nothing was compared: no check, not a failed one
		if p.Payload {
			residual = float64(p.Residual)
			checked = p.Verified
		}
		long.Rows = append(long.Rows, []any{p.Size, p.Nodes, p.Procs, string(p.Strategy), p.Impl, p.Iters, p.Time, round3(p.Time.Micros()),
			round3(per), phase("comp"), phase("launch"), phase("comm"), sp, checked, p.Events, residual})
		name, x, y := jacobiSeries(kind, p, sp, baseTime, base, pts)
		if _, ok := series[name]; !ok {
			series[name] = &report.Series{Name: name}
			order = append(order, name)
		}
		series[name].X = append(series[name].X, x)
		series[name].Y = append(series[name].Y, y)
		if p.Verified {
			verified++
		}
		if !p.Payload {
			payloadFree++
		}
	}
	plot := jacobiPlot(cfg, kind, base)
	for _, n := range order {
		plot.Series = append(plot.Series, *series[n])
	}
	res := &report.Result{Experiment: jacobiExperimentName(kind), Seed: cfg.Run.Seed, Tables: []report.Table{long}, Plot: plot}
	res.Notes = append(res.Notes,
		"time = first node's start of work to the last node's end, iterations included; per_iter = time / iters",
		"comp/launch/comm = node 0's host timeline per iteration (compute or kernel bodies it waits for, kernel launch and teardown it waits through, MPI halo exchange and residual allreduce); '-' where the implementation does not separate them (stream-triggered, triggered)",
		fmt.Sprintf("speedup = %s time / strategy time at the same size and node count", base))
	res.Notes = append(res.Notes, "convergence check: "+workload.JacobiResidualSchedule)
	res.Notes = append(res.Notes, fmt.Sprintf("verified: %d of %d points matched the serial run bit for bit (values and every iteration's residual); %d points above jacobi.verify_max_points = %d points per node (or with run.functional = false) ran payload-free: same timing, not checked",
		verified, len(pts), payloadFree, cfg.Jacobi.VerifyMax))
	return res, nil
}

// jacobiSeries places point p on the plot: speedup vs size for the
// sweeps, per-iteration time vs nodes per grid for strong scaling,
// runtime normalized to the baseline's at the fewest nodes for weak
// scaling (flat = perfect scaling).
func jacobiSeries(kind string, p jacobiPoint, sp any, baseTime map[jacobiKey]sim.Time, base strategy.Strategy, pts []jacobiPoint) (string, float64, float64) {
	switch kind {
	case "strong":
		return fmt.Sprintf("%s %d²", p.Strategy, p.Size), float64(p.Nodes), p.Time.Micros() / float64(p.Iters)
	case "weak":
		ref := sim.Time(0)
		fewest := 0
		for _, q := range pts {
			if q.Strategy == base && (fewest == 0 || q.Nodes < fewest) {
				fewest, ref = q.Nodes, q.Time
			}
		}
		y := 0.0
		if ref > 0 {
			y = float64(p.Time) / float64(ref)
		}
		return string(p.Strategy), float64(p.Nodes), y
	}
	y, _ := sp.(float64)
	return string(p.Strategy), float64(p.Size), y
}

func jacobiPlot(cfg Config, kind string, base strategy.Strategy) *report.Plot {
	switch kind {
	case "nxn":
		return &report.Plot{Title: fmt.Sprintf("Jacobi 2-D, %s process grid, %d iteration(s), preset %s", cfg.Jacobi.Procs, cfg.Jacobi.Iters, cfg.Run.Preset),
			XLabel: "local N (N×N points per node)", YLabel: "speedup vs " + string(base), LogX: true}
	case "1d":
		return &report.Plot{Title: fmt.Sprintf("Jacobi 1-D decomposition, %d nodes, preset %s", cfg.Jacobi1D.Nodes, cfg.Run.Preset),
			XLabel: "log2 points per node", YLabel: "speedup vs " + string(base)}
	case "strong":
		return &report.Plot{Title: fmt.Sprintf("Jacobi strong scaling, preset %s", cfg.Run.Preset), XLabel: "nodes", YLabel: "time per iteration (us)"}
	}
	return &report.Plot{Title: fmt.Sprintf("Jacobi weak scaling, %d² points per node, preset %s", cfg.JacobiScale.WeakSize, cfg.Run.Preset),
		XLabel: "nodes", YLabel: "runtime / " + string(base) + " runtime at the fewest nodes"}
}

func jacobiExperimentName(kind string) string {
	return map[string]string{"nxn": "jacobi", "1d": "jacobi1d", "strong": "jacobistrong", "weak": "jacobiweak"}[kind]
}

// quickJacobiSizes cuts the Jacobi studies to seconds for "gpunetsim
// report --size quick": the default strategies on small grids.
func quickJacobiSizes(cfg *Config) {
	cfg.Jacobi.Procs, cfg.Jacobi.Sizes = "2x2", []int{16, 64}
	cfg.Jacobi1D.Nodes, cfg.Jacobi1D.Log2Elems = 4, []int{8, 12}
	cfg.JacobiScale.Grids, cfg.JacobiScale.Nodes, cfg.JacobiScale.WeakSize, cfg.JacobiScale.Iters = []int{64}, []int{1, 2, 4}, 32, 2
}
