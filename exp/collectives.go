package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// AccumulateSpec holds the knobs of the MPI Accumulate study
// (the dissertation's XTQ chapter).
type AccumulateSpec struct {
	MinSize      unit.Bytes `toml:"min_size" doc:"smallest accumulate (float64); the sweep doubles it up to max_size" src:"DEFAULT"`
	MaxSize      unit.Bytes `toml:"max_size" doc:"largest accumulate of the sweep" src:"DEFAULT"`
	Epochs       int        `toml:"epochs" doc:"passive-target epochs (Win_lock … Win_unlock) per run" src:"DEFAULT"`
	PerEpoch     int        `toml:"per_epoch" doc:"accumulates per epoch" src:"DEFAULT"`
	Distribution string     `toml:"distribution" doc:"fixed (the size sweep) or nwchem (one run per strategy, sizes log-normal: median 4KiB, sigma 1.5 in ln space, clipped to 8B-1MiB)" src:"DEFAULT"`
	Strategies   []string   `toml:"strategies" doc:"strategies to compare, speedups vs CPU and vs HSA (default, as the XTQ chapter runs them: CPU, HSA, XTQ)" src:"DOC"`
	WGSize       int        `toml:"wg_size" doc:"work-items per work-group of the accumulate kernel" src:"DEFAULT"`
	CPUThreads   int        `toml:"cpu_threads" doc:"CPU strategy: threads applying the op (1: the XTQ chapter's CPU baselines use the application thread, the dissertation's §4.3.1)" src:"DOC"`
	Window       unit.Bytes `toml:"window" doc:"target window bytes; 0 sizes it to hold every accumulate (an accumulate outside it is refused by the initiator, naming it)" src:"RUN"`
}

// ReduceSpec holds the knobs of the MPI Reduce study (the dissertation's XTQ chapter).
type ReduceSpec struct {
	MinSize    unit.Bytes `toml:"min_size" doc:"smallest vector (float64); the sweep doubles it up to max_size" src:"DEFAULT"`
	MaxSize    unit.Bytes `toml:"max_size" doc:"largest vector of the sweep" src:"DEFAULT"`
	Nodes      int        `toml:"nodes" doc:"nodes (the root and its senders)" src:"DOC"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare, speedup vs CPU (default, as the XTQ chapter runs them: CPU, HSA, XTQ)" src:"DOC"`
	WGSize     int        `toml:"wg_size" doc:"work-items per work-group of the reduction kernel" src:"DEFAULT"`
	CPUThreads int        `toml:"cpu_threads" doc:"CPU strategy: threads of the host reduction (1: the XTQ chapter's CPU baselines use the application thread, the dissertation's §4.3.1)" src:"DOC"`
}

func defaultAccumulate() AccumulateSpec {
	return AccumulateSpec{MinSize: 8, MaxSize: 4 * unit.MiB, Epochs: 100, PerEpoch: 1, Distribution: "fixed",
		Strategies: []string{"CPU", "HSA", "XTQ"}, WGSize: 256, CPUThreads: 1}
}

func defaultReduce() ReduceSpec {
	return ReduceSpec{MinSize: 8, MaxSize: 4 * unit.MiB, Nodes: 2, Strategies: []string{"CPU", "HSA", "XTQ"}, WGSize: 256, CPUThreads: 1}
}

// sizeRange checks a doubling sweep of float64 sizes.
func sizeRange(field string, lo, hi unit.Bytes) []error {
	var errs []error
	loOK := lo >= 8 && lo%8 == 0 && lo <= 64*unit.MiB
	if !loOK {
		errs = append(errs, fmt.Errorf("%s.min_size = %v: must be a multiple of 8 bytes (float64) in [8B, 64MiB]", field, lo))
	}
	switch {
	case loOK && (hi < lo || hi%8 != 0 || hi > 64*unit.MiB):
		errs = append(errs, fmt.Errorf("%s.max_size = %v: must be a multiple of 8 bytes in [%s.min_size = %v, 64MiB]", field, hi, field, lo))
	case !loOK && (hi < 8 || hi%8 != 0 || hi > 64*unit.MiB):
		// Its own range, without the bad min_size: a line naming it is
		// dropped as following from min_size's (cmd dropDerived).
		errs = append(errs, fmt.Errorf("%s.max_size = %v: must be a multiple of 8 bytes in [8B, 64MiB]", field, hi))
	}
	return errs
}

// sizePair checks a sweep's smallest and largest size, each a multiple
// of 8 bytes in [8B, 64MiB], the largest at least the smallest: that
// relation is checked only when the smallest is valid, so that a largest
// bad on its own is reported beside a bad smallest (a line naming the
// smallest is dropped as following from its own, cmd dropDerived).
func sizePair(minName, maxName string, lo, hi unit.Bytes) []error {
	var errs []error
	own := func(v unit.Bytes) bool { return v >= 8 && v%8 == 0 && v <= 64*unit.MiB }
	if !own(lo) {
		errs = append(errs, fmt.Errorf("%s = %v: must be a multiple of 8 bytes in [8B, 64MiB]", minName, lo))
	}
	switch {
	case !own(hi):
		errs = append(errs, fmt.Errorf("%s = %v: must be a multiple of 8 bytes in [8B, 64MiB]", maxName, hi))
	case own(lo) && hi < lo:
		errs = append(errs, fmt.Errorf("%s = %v: must be at least %s = %v", maxName, hi, minName, lo))
	}
	return errs
}

func (a AccumulateSpec) validate() error {
	errs := sizeRange("accumulate", a.MinSize, a.MaxSize)
	if a.Epochs < 1 || a.Epochs > 1e6 {
		errs = append(errs, fmt.Errorf("accumulate.epochs = %d: must be in [1, 1000000]", a.Epochs))
	}
	if a.PerEpoch < 1 || a.PerEpoch > 4096 {
		errs = append(errs, fmt.Errorf("accumulate.per_epoch = %d: must be in [1, 4096]", a.PerEpoch))
	}
	if a.Distribution != "fixed" && a.Distribution != "nwchem" {
		errs = append(errs, fmt.Errorf("accumulate.distribution = %q: must be fixed or nwchem", a.Distribution))
	}
	if a.WGSize < 1 || a.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("accumulate.wg_size = %d: must be in [1, 1024]", a.WGSize))
	}
	if a.CPUThreads < 1 || a.CPUThreads > 1024 {
		errs = append(errs, fmt.Errorf("accumulate.cpu_threads = %d: must be in [1, 1024]", a.CPUThreads))
	}
	if a.Window < 0 || a.Window%8 != 0 || a.Window > 4*unit.GiB {
		errs = append(errs, fmt.Errorf("accumulate.window = %v: must be 0 (fit) or a multiple of 8 bytes up to 4GiB", a.Window))
	}
	errs = append(errs, checkStrategies("accumulate.strategies", a.Strategies, workloadStrategies("accumulate")))
	return errors.Join(errs...)
}

func (r ReduceSpec) validate() error {
	errs := sizeRange("reduce", r.MinSize, r.MaxSize)
	if r.Nodes < 2 || r.Nodes > 4096 {
		errs = append(errs, fmt.Errorf("reduce.nodes = %d: must be in [2, 4096]", r.Nodes))
	}
	if r.WGSize < 1 || r.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("reduce.wg_size = %d: must be in [1, 1024]", r.WGSize))
	}
	if r.CPUThreads < 1 || r.CPUThreads > 1024 {
		errs = append(errs, fmt.Errorf("reduce.cpu_threads = %d: must be in [1, 1024]", r.CPUThreads))
	}
	errs = append(errs, checkStrategies("reduce.strategies", r.Strategies, workloadStrategies("reduce")))
	return errors.Join(errs...)
}

// nwchemSizes draws n accumulate sizes from the synthetic NWChem-like
// distribution of the dissertation's XTQ chapter: log-normal with median 4 KiB and σ 1.5
// in ln space, clipped to [8 B, 1 MiB], rounded up to whole float64s.
func nwchemSizes(seed uint64, n int) []unit.Bytes {
	rng := rand.New(rand.NewPCG(seed, 0x6e7763686d))
	out := make([]unit.Bytes, n)
	for i := range out {
		b := 4096 * math.Exp(1.5*rng.NormFloat64())
		b = min(max(b, 8), 1<<20)
		out[i] = unit.Bytes((uint64(math.Ceil(b)) + 7) &^ 7)
	}
	return out
}

// collectivePoint is one simulated (size, strategy) of Accumulate or Reduce.
type collectivePoint struct {
	Size     unit.Bytes `json:"size"`     // 0: the NWChem-like mix
	MeanSize float64    `json:"mean"`     // mean accumulate bytes
	Strategy string     `json:"strategy"` //
	Impl     string     `json:"impl"`
	Time     sim.Time   `json:"time"` // per epoch (Accumulate) or to the root's result (Reduce)
	Events   uint64     `json:"events"`
	Verified bool       `json:"verified"`
}

func accumulatePoints() Points {
	return Points{List: xtqTableChecked(accumulateList, func(c Config) []string { return c.Accumulate.Strategies }), Simulate: accumulateSimulate, Assemble: accumulateAssemble}
}

func runAccumulate(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(accumulatePoints(), cfg, env)
}

func accumulateList(cfg Config) ([]Point, error) {
	a := cfg.Accumulate
	sizes := doublings(a.MinSize, a.MaxSize)
	if a.Distribution == "nwchem" {
		sizes = []unit.Bytes{0}
	}
	var pts []Point
	for _, size := range sizes {
		for _, s := range a.Strategies {
			pc := cfg
			pc.Accumulate.Strategies = []string{s}
			label := fmt.Sprintf("%s nwchem", s)
			if size > 0 {
				pc.Accumulate.MinSize, pc.Accumulate.MaxSize = size, size
				label = fmt.Sprintf("%s %v", s, size)
			}
			pts = append(pts, Point{Label: label, Config: pc})
		}
	}
	return pts, nil
}

func accumulateSimulate(p Point, env Env) ([]byte, error) {
	a := p.Config.Accumulate
	s, err := strategy.Parse(a.Strategies[0])
	if err != nil {
		return nil, err
	}
	w := workload.Accumulate{Sizes: []unit.Bytes{a.MinSize}, PerEpoch: a.PerEpoch, Epochs: a.Epochs, Stride: a.MinSize,
		WGSize: a.WGSize, CPUThreads: a.CPUThreads, Window: a.Window}
	pt := collectivePoint{Size: a.MinSize, MeanSize: float64(a.MinSize), Strategy: string(s)}
	if a.Distribution == "nwchem" {
		w.Sizes = nwchemSizes(p.Config.Run.Seed, a.Epochs*a.PerEpoch)
		w.Stride = 1 << 20
		pt.Size, pt.MeanSize = 0, 0
		for _, b := range w.Sizes {
			pt.MeanSize += float64(b) / float64(len(w.Sizes))
		}
	}
	c, err := newRun(p.Config, env, p.Label, 2, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := w.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	pt.Impl, pt.Time, pt.Events, pt.Verified = r.Impl, r.PerEpoch, c.Engine.Events(), r.Verified
	return json.Marshal(pt)
}

func accumulateAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[collectivePoint](raw)
	if err != nil {
		return nil, err
	}
	a := cfg.Accumulate
	res := collectiveReport("accumulate", cfg, a.Strategies, points, "time per epoch",
		fmt.Sprintf("MPI Accumulate (float64 SUM), %d per epoch, %d epochs, preset %s", a.PerEpoch, a.Epochs, cfg.Run.Preset))
	res.Notes = append(res.Notes, "time per epoch = first Win_lock to last Win_unlock at the initiator, divided by the epochs; every epoch waits for one ack per accumulate")
	if a.Distribution == "nwchem" {
		res.Notes = append(res.Notes, "sizes: synthetic NWChem-like mix (log-normal, median 4KiB, sigma 1.5, clipped to 8B-1MiB), drawn from run.seed")
	}
	return res, nil
}

func reducePoints() Points {
	return Points{List: xtqTableChecked(reduceList, func(c Config) []string { return c.Reduce.Strategies }), Simulate: reduceSimulate, Assemble: reduceAssemble}
}

func runReduce(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(reducePoints(), cfg, env)
}

func reduceList(cfg Config) ([]Point, error) {
	var pts []Point
	for _, size := range doublings(cfg.Reduce.MinSize, cfg.Reduce.MaxSize) {
		for _, s := range cfg.Reduce.Strategies {
			pc := cfg
			pc.Reduce.MinSize, pc.Reduce.MaxSize, pc.Reduce.Strategies = size, size, []string{s}
			pts = append(pts, Point{Label: fmt.Sprintf("%s %v", s, size), Config: pc})
		}
	}
	return pts, nil
}

func reduceSimulate(p Point, env Env) ([]byte, error) {
	rs := p.Config.Reduce
	s, err := strategy.Parse(rs.Strategies[0])
	if err != nil {
		return nil, err
	}
	c, err := newRun(p.Config, env, p.Label, rs.Nodes, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.Reduce{Size: rs.MinSize, WGSize: rs.WGSize, CPUThreads: rs.CPUThreads}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(collectivePoint{Size: rs.MinSize, MeanSize: float64(rs.MinSize), Strategy: string(s), Impl: r.Impl,
		Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified})
}

func reduceAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[collectivePoint](raw)
	if err != nil {
		return nil, err
	}
	res := collectiveReport("reduce", cfg, cfg.Reduce.Strategies, points, "completion at the root",
		fmt.Sprintf("MPI Reduce (float64 SUM) on %d nodes, preset %s", cfg.Reduce.Nodes, cfg.Run.Preset))
	res.Notes = append(res.Notes, "time = the root posting its receive resources (after a barrier) to the root holding the sum; each sender waits for the root's zero-length resource-ready message")
	return res, nil
}

// collectiveReport tabulates time per (size, strategy) with speedups vs
// CPU and HSA and plots the time against the size.
func collectiveReport(name string, cfg Config, strats []string, points []collectivePoint, metric, title string) *report.Result {
	base := map[string]map[unit.Bytes]sim.Time{}
	for _, p := range points {
		if base[p.Strategy] == nil {
			base[p.Strategy] = map[unit.Bytes]sim.Time{}
		}
		base[p.Strategy][p.Size] = p.Time
	}
	speedup := func(vs string, p collectivePoint) any {
		t, ok := base[vs][p.Size]
		if !ok {
			return "-"
		}
		return round3(float64(t) / float64(p.Time))
	}
	t := report.Table{Name: name, Columns: []string{"size", "mean_size_B", "strategy", "impl", "time", "time_us", "speedup_vs_CPU", "speedup_vs_HSA", "events", "verified"}}
	plot := &report.Plot{Title: title, XLabel: "mean message size (bytes)", YLabel: metric + " (us)", LogX: true}
	series := map[string]*report.Series{}
	for _, s := range strats {
		series[s] = &report.Series{Name: s}
	}
	verified := true
	for _, p := range points {
		// A size as unit.Bytes: the CSV writes it as whole bytes under
		// "size [B]"; the text table prints it as before ("8B").
		var size any = "nwchem mix"
		if p.Size > 0 {
			size = p.Size
		}
		t.Rows = append(t.Rows, []any{size, round3(p.MeanSize), p.Strategy, p.Impl, p.Time, round3(p.Time.Micros()),
			speedup("CPU", p), speedup("HSA", p), p.Events, p.Verified})
		if sr := series[p.Strategy]; sr != nil {
			sr.X = append(sr.X, p.MeanSize)
			sr.Y = append(sr.Y, p.Time.Micros())
		}
		verified = verified && p.Verified
	}
	for _, s := range strats {
		plot.Series = append(plot.Series, *series[s])
	}
	res := &report.Result{Experiment: name, Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	if cfg.Run.Functional && verified {
		res.Notes = append(res.Notes, "functional: every result equals the serial float64 reference exactly (inputs are multiples of 1/2)")
	}
	if cfg.Run.Preset != "xtq" && slices.ContainsFunc(strats, func(s string) bool { return s == "XTQ" || s == "HSA" }) {
		res.Notes = append(res.Notes, "the documents run this on preset xtq (--preset xtq)")
	}
	return res
}
