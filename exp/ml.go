package exp

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

// cntkTable is the built-in workload table of the dissertation's CNTK projection: the
// profiled fraction of time blocked in Allreduce and the call count [DOC],
// and one message size per workload, [DEFAULT] placeholders (the
// documents do not give them; "KB" read as KiB).
//
//go:embed mldata/cntk.csv
var cntkTable string

// MLSpec holds the knobs of the machine-learning projection (the dissertation
// §7).
type MLSpec struct {
	Table      string   `toml:"table" doc:"workload table CSV with columns workload, domain, blocked_pct, calls, size (empty: the built-in table of the dissertation's CNTK projection with placeholder message sizes)" src:"RUN"`
	Nodes      int      `toml:"nodes" doc:"cluster size of the projection (the table was profiled on 4; the change acts only through the Allreduce ratio)" src:"DOC"`
	Strategies []string `toml:"strategies" doc:"strategies whose Allreduce is simulated and projected (default, the GPU-TN chapter's set, its GHN being GHN_APU: CPU, HDN, GDS, GHN_APU, GPUTN)" src:"DOC"`
	Profile    string   `toml:"profile" doc:"strategy the table was profiled under: R_X = Allreduce time under X / under it" src:"DOC"`
	Baseline   string   `toml:"baseline" doc:"strategy the projected speedups are against (default CPU, as the XTQ and GPU-TN chapters report them; the ComP-Net chapter's projection is against GHN_DGPU)" src:"DOC"`
}

func defaultML() MLSpec {
	// The GPU-TN chapter's strategies (GHN = GHN_APU), as far as registered.
	m := MLSpec{Nodes: 8, Profile: "CPU", Baseline: "CPU"}
	allowed := workloadStrategies("allreduce")
	for _, s := range []string{"CPU", "HDN", "GDS", "GHN_APU", "GPUTN"} {
		if slices.Contains(allowed, s) {
			m.Strategies = append(m.Strategies, s)
		}
	}
	return m
}

// mlRow is one workload of the table.
type mlRow struct {
	Workload, Domain string
	Blocked          float64 // fraction f of the time blocked in Allreduce, in [0, 1]
	Calls            int64
	Size             unit.Bytes
}

var mlColumns = []string{"workload", "domain", "blocked_pct", "calls", "size"}

// loadMLTable reads the table named by m.Table (the built-in one when
// empty). Every problem is one error naming the field.
func (m MLSpec) loadMLTable() ([]mlRow, error) {
	name, text := "built-in table", cntkTable
	if m.Table != "" {
		b, err := ReadInputFile(m.Table, MaxInputBytes)
		if err != nil {
			return nil, fmt.Errorf("ml.table: %w", err)
		}
		name, text = m.Table, string(b)
	}
	rows, err := parseMLTable(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("ml.table %s: %w", name, err)
	}
	return rows, nil
}

// parseMLTable parses the CSV workload table.
func parseMLTable(r io.Reader) ([]mlRow, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) < 2 {
		return nil, errors.New("no workload rows: want a header line and at least one row")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, c := range mlColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("missing column %q (the columns are %s)", c, strings.Join(mlColumns, ", "))
		}
	}
	var out []mlRow
	for i, rec := range recs[1:] {
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		row := mlRow{Workload: get("workload"), Domain: get("domain")}
		where := fmt.Sprintf("row %d (%s)", i+1, row.Workload)
		pct, err := strconv.ParseFloat(get("blocked_pct"), 64)
		if err != nil || pct < 0 || pct > 100 {
			return nil, fmt.Errorf("%s: blocked_pct = %q: must be a percentage in [0, 100]", where, get("blocked_pct"))
		}
		row.Blocked = pct / 100
		if row.Calls, err = strconv.ParseInt(get("calls"), 10, 64); err != nil || row.Calls < 1 {
			return nil, fmt.Errorf("%s: calls = %q: must be a whole number ≥ 1", where, get("calls"))
		}
		if row.Size, err = unit.ParseBytes(get("size")); err != nil || row.Size < 4 || row.Size%4 != 0 || row.Size > 16*unit.GiB {
			return nil, fmt.Errorf("%s: size = %q: must be a multiple of 4 bytes (float32) in [4B, 16GiB], e.g. 256KiB", where, get("size"))
		}
		if row.Workload == "" || slices.ContainsFunc(out, func(o mlRow) bool { return o.Workload == row.Workload }) {
			return nil, fmt.Errorf("%s: workload names must be present and distinct", where)
		}
		out = append(out, row)
	}
	return out, nil
}

func (m MLSpec) validate() error {
	var errs []error
	if _, err := m.loadMLTable(); err != nil {
		errs = append(errs, err)
	}
	if m.Nodes < 2 || m.Nodes > 65536 {
		errs = append(errs, fmt.Errorf("ml.nodes = %d: must be in [2, 65536]", m.Nodes))
	}
	allowed := workloadStrategies("allreduce")
	listErr := checkStrategies("ml.strategies", m.Strategies, allowed)
	errs = append(errs, listErr,
		checkMember("ml.profile", m.Profile, "ml.strategies", m.Strategies, listErr, allowed, " (the ratios are against it)"),
		checkMember("ml.baseline", m.Baseline, "ml.strategies", m.Strategies, listErr, allowed, ""))
	return errors.Join(errs...)
}

// projectRuntime is the projected normalized runtime of a workload that
// spends fraction f of its profiled time blocked in Allreduce when every
// call takes r times as long (the dissertation's CNTK projection: T_X = (1 − f) + f·R_X,
// T_base = 1; the calls are blocking, so nothing overlaps them).
func projectRuntime(f, r float64) float64 { return (1 - f) + f*r }

// mlSizes returns the distinct message sizes of the table, in first-use
// order: each is simulated once per strategy, whatever the number of
// workloads and calls that use it.
func mlSizes(rows []mlRow) []unit.Bytes {
	var out []unit.Bytes
	for _, r := range rows {
		if !slices.Contains(out, r.Size) {
			out = append(out, r.Size)
		}
	}
	return out
}

func mlPoints() Points {
	return Points{List: mlList, Simulate: mlSimulate, Assemble: mlAssemble}
}

func runML(cfg Config, env Env) (*report.Result, error) { return RunPoints(mlPoints(), cfg, env) }

// mlList is one allreduce simulation per (distinct size, strategy) on
// ml.nodes nodes: the point's configuration is the allreduce one, so the
// study cache shares it with the allreduce experiment.
func mlList(cfg Config) ([]Point, error) {
	rows, err := cfg.ML.loadMLTable()
	if err != nil {
		return nil, err
	}
	var pts []Point
	for _, size := range mlSizes(rows) {
		for _, s := range cfg.ML.Strategies {
			pc := cfg
			pc.ML = defaultML()
			pc.Allreduce.Size, pc.Allreduce.Nodes, pc.Allreduce.Strategies = size, []int{cfg.ML.Nodes}, []string{s}
			pts = append(pts, Point{Label: fmt.Sprintf("allreduce %v %s n=%d", size, s, cfg.ML.Nodes), Config: pc})
		}
	}
	return pts, nil
}

func mlSimulate(p Point, env Env) ([]byte, error) { return allreduceSimulate(p, env) }

func mlAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	rows, err := cfg.ML.loadMLTable()
	if err != nil {
		return nil, err
	}
	pts, err := decodeResults[allreducePoint](raw)
	if err != nil {
		return nil, err
	}
	sizes := mlSizes(rows)
	strats := cfg.ML.Strategies
	at := func(size unit.Bytes, s string) allreducePoint {
		return pts[slices.Index(sizes, size)*len(strats)+slices.Index(strats, s)]
	}
	ar := report.Table{Name: "simulated allreduce", Columns: []string{"size", "nodes", "strategy", "time", "time_us", "ratio_vs_" + cfg.ML.Profile, "verified"}}
	allVerified := true
	for _, size := range sizes {
		prof := at(size, cfg.ML.Profile).Time
		for _, s := range strats {
			p := at(size, s)
			ar.Rows = append(ar.Rows, []any{size, p.Nodes, s, p.Time, round3(p.Time.Micros()), round6(float64(p.Time) / float64(prof)), p.Verified})
			allVerified = allVerified && p.Verified
		}
	}
	proj := report.Table{Name: "projection", Columns: []string{"workload", "domain", "blocked_pct", "calls", "size", "strategy",
		"per_call_base_ppm", "allreduce_ratio", "per_call_ppm", "runtime", "speedup_vs_" + cfg.ML.Baseline},
		// The runtime is relative (the profiled run's = 1): its header
		// says so, "runtime [× profiled]", not a bare "runtime" a reader
		// takes for seconds.
		Units: map[string]string{"runtime": "× profiled"}}
	wide := report.Table{Name: "speedup vs " + cfg.ML.Baseline, Columns: []string{"workload"}}
	for _, s := range strats {
		// "HDN speedup", not "HDN": the CSV of this table is the run's
		// main file, loaded without its sidecar's table name.
		wide.Columns = append(wide.Columns, s+" speedup")
	}
	plot := &report.Plot{Title: fmt.Sprintf("CNTK projection on %d nodes, preset %s (x: workloads in table order)", cfg.ML.Nodes, cfg.Run.Preset),
		XLabel: "workload (table row)", YLabel: "projected speedup vs " + cfg.ML.Baseline, Categorical: true}
	series := make([]report.Series, len(strats))
	for i, s := range strats {
		series[i].Name = s
	}
	for k, r := range rows {
		ratio := func(s string) float64 {
			return float64(at(r.Size, s).Time) / float64(at(r.Size, cfg.ML.Profile).Time)
		}
		base := projectRuntime(r.Blocked, ratio(cfg.ML.Baseline))
		wrow := []any{r.Workload}
		for i, s := range strats {
			rx := ratio(s)
			t := projectRuntime(r.Blocked, rx)
			perCall := 1e6 * r.Blocked / float64(r.Calls) // t_b in millionths of the profiled runtime
			proj.Rows = append(proj.Rows, []any{r.Workload, r.Domain, round6(100 * r.Blocked), r.Calls, r.Size, s,
				round6(perCall), round6(rx), round6(perCall * rx), round6(t), round6(base / t)})
			wrow = append(wrow, round3(base/t))
			series[i].X = append(series[i].X, float64(k+1))
			series[i].Y = append(series[i].Y, base/t)
		}
		wide.Rows = append(wide.Rows, wrow)
	}
	plot.Series = series
	res := &report.Result{Experiment: "mlproj", Seed: cfg.Run.Seed, Tables: []report.Table{wide, proj, ar}, Plot: plot}
	res.Notes = append(res.Notes,
		fmt.Sprintf("allreduce_ratio R_X = simulated Allreduce time under X / under %s at the workload's size on %d nodes; one simulation per (size, strategy): %d sizes × %d strategies",
			cfg.ML.Profile, cfg.ML.Nodes, len(sizes), len(strats)),
		"runtime [× profiled] T_X = (1 − f) + f·R_X, in multiples of the profiled runtime (blocking calls, no overlap); per_call_base [ppm] t_b = f / calls and per_call [ppm] = t_b·R_X, in millionths of the profiled runtime",
		fmt.Sprintf("speedup = T_%s / T_X", cfg.ML.Baseline))
	if cfg.Run.Functional && allVerified {
		res.Notes = append(res.Notes, "functional: every simulated Allreduce matched the serial float32 sum")
	}
	return res, nil
}

func round6(v float64) float64 { return roundScaled(v, 1e6) }
