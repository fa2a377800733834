package exp

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// SpTSSpec holds the knobs of the sparse triangular solve experiment
// (the GIO slides).
type SpTSSpec struct {
	Classes       []string `toml:"classes" doc:"synthetic matrix classes, the five SuiteSparse matrices of the GIO study: powerlaw (WikiTalk), circuit (ASIC_320ks), kkt (nlpkkt160), road (road_usa), road_central (road_central)" src:"DOC"`
	Rows          int      `toml:"rows" doc:"rows of every synthetic matrix (scaled down from the SuiteSparse sizes; nonzeros per row as the reference matrix's lower triangle); 0 = each matrix at its reference's real size (0.32–24 M rows: ASIC_320ks runs in minutes, the others need hours and 1–25 GB, docs/gnn.md)" src:"DEFAULT"`
	Nodes         []int    `toml:"nodes" doc:"strong scaling: node counts" src:"DOC"`
	Strategies    []string `toml:"strategies" doc:"strong scaling: strategies; the level-scheduled baselines CPU, HDN and HDN_OVERLAP may be added (default, as the GIO slides run it, against IKN alone: GNN_GIO, GHN_DGPU)" src:"DOC"`
	WGs           int      `toml:"wgs" doc:"work-groups per node, one wavefront each (device-shmem: persistent; level-scheduled: at most this many per level kernel)" src:"DEFAULT"`
	L2OffSlowdown string   `toml:"l2off_slowdown" doc:"optional calibration (gio.l2offSlowdown of the GIO slides): L2-off overhead in percent per class in the order powerlaw, circuit, kkt, road, road_central (the documents: 1, 5.5, 9.3, 7, 2.9); empty: the L2-off time comes from the uncacheable heap (the mechanism)" src:"RUN"`
}

func defaultSpTS() SpTSSpec {
	return SpTSSpec{Classes: workload.SpTSClasses(), Rows: 8192, Nodes: []int{2, 3, 4},
		Strategies: []string{"GNN_GIO", "GHN_DGPU"}, WGs: 128}
}

func quickSpTS(cfg *Config) {
	cfg.SpTS.Rows, cfg.SpTS.Nodes, cfg.SpTS.Strategies = 1024, []int{2, 4}, []string{"GNN_GIO", "GHN_DGPU"}
}

func (s SpTSSpec) validate() error {
	var errs []error
	if len(s.Classes) == 0 {
		errs = append(errs, fmt.Errorf("spts.classes is empty: must list some of %v", workload.SpTSClasses()))
	}
	for _, c := range s.Classes {
		if !slices.Contains(workload.SpTSClasses(), c) {
			errs = append(errs, fmt.Errorf("spts.classes contains %q: must be one of %v", c, workload.SpTSClasses()))
		}
	}
	if s.Rows != 0 && (s.Rows < 64 || s.Rows > 1<<22) {
		errs = append(errs, fmt.Errorf("spts.rows = %d: must be 0 (each matrix at its real size) or in [64, 4194304]", s.Rows))
	}
	listInRange(&errs, "spts.nodes", s.Nodes, 1, 64)
	errs = append(errs, checkStrategies("spts.strategies", s.Strategies, workloadStrategies("spts")))
	if s.WGs < 1 || s.WGs > 1024 {
		errs = append(errs, fmt.Errorf("spts.wgs = %d: must be in [1, 1024]", s.WGs))
	}
	if _, err := s.slowdowns(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// rowsOf is the row count of class's matrix: spts.rows, or with 0 the
// reference matrix's own.
func (s SpTSSpec) rowsOf(class string) int {
	if s.Rows == 0 {
		return int(workload.SpTSReferences()[class].Rows)
	}
	return s.Rows
}

// slowdowns parses spts.l2off_slowdown (a comma list): nil when unset, else one
// fraction per class in the order of workload.SpTSClasses.
func (s SpTSSpec) slowdowns() ([]float64, error) {
	if s.L2OffSlowdown == "" {
		return nil, nil
	}
	list := strings.Split(s.L2OffSlowdown, ",")
	if n := len(list); n != len(workload.SpTSClasses()) {
		return nil, fmt.Errorf("spts.l2off_slowdown has %d values: must be empty or one percent per class (%v)", n, workload.SpTSClasses())
	}
	out := make([]float64, len(list))
	for i, v := range list {
		pct, err := strconv.ParseFloat(v, 64)
		if err != nil || !(pct >= 0 && pct <= 1000) {
			return nil, fmt.Errorf("spts.l2off_slowdown contains %q: percents must be numbers in [0, 1000]", v)
		}
		out[i] = pct / 100
	}
	return out, nil
}

// spTSJob is one simulated solve.
type spTSJob struct {
	class string
	s     strategy.Strategy
	nodes int
	l2    bool // part of the single-GPU L2 study
	l2on  bool // in it: the heap cacheable (shader L2 maintenance)
}

// runSpTS is the strong scaling of the distributed solve and the
// single-GPU L2-off vs L2-on study (the GIO slides).
func runSpTS(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := cfg.SpTS
	var jobs []spTSJob
	for _, class := range p.Classes {
		for _, name := range p.Strategies {
			s, _ := strategy.Parse(name)
			for _, n := range p.Nodes {
				jobs = append(jobs, spTSJob{class, s, n, false, false})
			}
		}
		if spTSL2Unavailable(cfg) == nil {
			jobs = append(jobs, spTSJob{class, strategy.GNNGIO, 1, true, false}, spTSJob{class, strategy.GNNGIO, 1, true, true})
		}
	}
	mats := map[string]*workload.TriMatrix{}
	for _, class := range p.Classes {
		ref := workload.SpTSReferences()[class]
		rows := p.rowsOf(class)
		a, err := workload.GenSynthetic(rows, int(ref.LowerNNZPerRow()*float64(rows)), class, cfg.Run.Seed)
		if err != nil {
			return nil, err
		}
		mats[class] = a
	}
	results := make([]workload.SpTSResult, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		c, err := newRun(cfg, env, fmt.Sprintf("spts %s %s×%d l2on=%v", j.class, j.s, j.nodes, j.l2on), j.nodes, j.s)
		if err != nil {
			return err
		}
		defer c.Engine.Close()
		sc := strategyConfig(cfg)
		if j.l2 {
			sc.Shmem.GIO.ShaderL2Maintenance = j.l2on
		}
		results[i], err = workload.SpTS{Matrix: mats[j.class], WGs: p.WGs, Seed: cfg.Run.Seed}.Run(c, j.s, sc)
		return err
	})
	if err != nil {
		return nil, err
	}
	return spTSReport(cfg, jobs, results, mats), nil
}

// spTSReport builds the tables, the plot and the outputs.
func spTSReport(cfg Config, jobs []spTSJob, results []workload.SpTSResult, mats map[string]*workload.TriMatrix) *report.Result {
	p := cfg.SpTS
	scale := report.Table{Name: "strong-scaling", Columns: []string{"class", "stands_for", "rows", "nnz", "levels", "strategy", "nodes",
		"time_us", "vs_GHN_DGPU", "remote_values", "residual", "verified", "synthetic"}}
	l2 := report.Table{Name: "l2-off", Columns: []string{"class", "stands_for", "l2off_us", "l2on_us", "overhead_pct", "documents_pct",
		"bulk_hit_rate_off", "bulk_hit_rate_on", "source"}}
	size := fmt.Sprintf("%d rows", p.Rows)
	scaled := fmt.Sprintf("scaled down to spts.rows = %d rows (the solve is simulated a wavefront per row and a message per remote value, about 1-2 KB of memory per row: at their real 0.32-24 M rows, spts.rows = 0, only ASIC_320ks runs in minutes, the others take hours and 2.5-48 GB, docs/gnn.md)", p.Rows)
	if p.Rows == 0 {
		size, scaled = "real sizes", "each at its reference's real row count (spts.rows = 0)"
	}
	plot := &report.Plot{Title: fmt.Sprintf("SpTS strong scaling (synthetic, %s), preset %s", size, cfg.Run.Preset),
		XLabel: "nodes", YLabel: "time (us)"}
	ikn := map[[2]any]float64{}
	for i, j := range jobs {
		if j.s == strategy.GHNDGPU {
			ikn[[2]any{j.class, j.nodes}] = results[i].Time.Micros()
		}
	}
	series := map[string]int{}
	res := &report.Result{Experiment: "spts", Seed: cfg.Run.Seed}
	off := map[string]workload.SpTSResult{}
	for i, j := range jobs {
		r, a := results[i], mats[j.class]
		ref := workload.SpTSReferences()[j.class]
		if j.l2 {
			if !j.l2on {
				off[j.class] = r
				continue
			}
			l2.Rows = append(l2.Rows, spTSL2Row(p, j.class, ref, off[j.class], r))
			continue
		}
		var rel any = "" // no GHN_DGPU run to compare with
		if t := ikn[[2]any{j.class, j.nodes}]; t > 0 {
			rel = round3(r.Time.Micros() / t)
		}
		scale.Rows = append(scale.Rows, []any{j.class, ref.Matrix, a.N, a.NNZ(), r.Levels, string(j.s), j.nodes,
			round3(r.Time.Micros()), rel, r.RemoteValues, r.Residual, r.Verified, a.Synthetic})
		name := fmt.Sprintf("%s %s", j.s, j.class)
		k, ok := series[name]
		if !ok {
			plot.Series = append(plot.Series, report.Series{Name: name})
			k = len(plot.Series) - 1
			series[name] = k
		}
		plot.Series[k].X = append(plot.Series[k].X, float64(j.nodes))
		plot.Series[k].Y = append(plot.Series[k].Y, r.Time.Micros())
		if v, ok := rel.(float64); ok && j.s == strategy.GNNGIO && j.nodes == p.Nodes[len(p.Nodes)-1] {
			res.Outputs = append(res.Outputs, report.Output{Name: fmt.Sprintf("GNN_GIO time vs GHN_DGPU, %s, %d nodes", j.class, j.nodes), Value: v, Unit: "x"})
		}
	}
	for _, row := range l2.Rows {
		res.Outputs = append(res.Outputs, report.Output{Name: fmt.Sprintf("single-GPU L2-off overhead, %s", row[0]), Value: row[4].(float64), Unit: "%"})
	}
	res.Tables, res.Plot = []report.Table{scale, l2}, plot
	if cfg.Run.Preset != "gio" {
		res.Notes = append(res.Notes, fmt.Sprintf("preset %s: the documents' cluster is preset gio (--preset gio)", cfg.Run.Preset))
	}
	if slices.Contains(p.Strategies, string(strategy.GHNDGPU)) {
		res.Notes = append(res.Notes, ghnPlacementNote(cfg))
	}
	res.Notes = append(res.Notes,
		"SYNTHETIC matrices (gen_synthetic): SuiteSparse files are not used; each class stands for the matrix named, "+scaled+", with its lower-triangle nonzeros per row",
		"GNN_GIO and GHN_DGPU (IKN): one persistent kernel per node, sync-free in-degree counters, x_j put + fence + flag put from inside the kernel; HDN, CPU: level scheduling, MPI exchange per level; HDN_OVERLAP: each level's exchange overlapped with the next level's rows that need none of its remote values",
		"l2-off: one GPU, GNN_GIO with its heap (x, flags, counters) L2-uncacheable vs cacheable (shmem.gio.shader_l2_maintenance); the matrix stays cacheable")
	if err := spTSL2Unavailable(cfg); err != nil {
		res.Notes = append(res.Notes, "l2-off study not run: "+err.Error())
	}
	return res
}

// spTSL2Unavailable says why the single-GPU L2 study, which runs GIO,
// cannot run on cfg's NIC (GPU-initiated verbs: none on Cassini); nil
// when it can.
func spTSL2Unavailable(cfg Config) error {
	d, err := strategy.Lookup(string(strategy.GNNGIO))
	if err != nil {
		return err
	}
	if err := d.RunsOn(cfg.Spec); err != nil {
		return fmt.Errorf("%w (preset %s)", err, cfg.Run.Preset)
	}
	return nil
}

// spTSL2Row is one class's L2-off vs L2-on row: the mechanism's, or with
// spts.l2off_slowdown the L2-on time scaled by the calibration table.
func spTSL2Row(p SpTSSpec, class string, ref workload.SpTSReference, off, on workload.SpTSResult) []any {
	offUs, source := off.Time.Micros(), "uncacheable heap (mechanism)"
	if f, _ := p.slowdowns(); f != nil {
		k := slices.Index(workload.SpTSClasses(), class)
		offUs, source = on.Time.Micros()*(1+f[k]), "spts.l2off_slowdown (calibration)"
	}
	pct := round3(100 * (offUs/on.Time.Micros() - 1))
	return []any{class, ref.Matrix, round3(offUs), round3(on.Time.Micros()), pct, ref.L2OffPct,
		round3(off.BulkHitRate), round3(on.BulkHitRate), source}
}
