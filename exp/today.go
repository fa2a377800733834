package exp

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// TodaySpec holds the knobs of the today study: the present-day presets
// it runs the present-day workloads on, and the tornado over the values
// nobody has published.
type TodaySpec struct {
	Presets   []string `toml:"presets" doc:"present-day presets to compare, each with its own default parameters and the strategies its NIC runs" src:"DEFAULT"`
	Workloads []string `toml:"workloads" doc:"present-day workloads to run on each preset: pingpong, allreduce_hier, halo3d, moe" src:"DEFAULT"`
	Tornado   bool     `toml:"tornado" doc:"re-run a thinned grid of every workload with each DEFAULT (no source) value of the preset divided and multiplied by today.factor, and report whether the winner changes (gpunetsim today sets it; run today leaves it off)" src:"DEFAULT"`
	Factor    float64  `toml:"factor" doc:"the plausible range of a value nobody has published: its default divided and multiplied by this factor (counts rounded, at least 1)" src:"DEFAULT"`
}

// todayWorkloads are the present-day workloads the study knows, with the
// experiment that runs each and how a winner row names its point.
type todayWorkload struct {
	name   string
	points func() Points
	// point names a winner row and returns the rest of it: fastest,
	// time_us, runner_up, runner_up_us.
	point func(row []any) (string, []any)
	// thin narrows a preset's configuration to the tornado's grid (one
	// configuration per listing).
	thin func(c Config) []Config
	// series names the series a point belongs to (the where table's
	// ranges never span two), "" for one series.
	series func(point string) string
	// strategy is the strategy a point's configuration runs.
	strategy func(c Config) string
}

var todayWorkloads = []todayWorkload{
	{"pingpong", pingPongPoints, func(r []any) (string, []any) { return fmt.Sprint(r[0]), r[1:5] },
		func(c Config) []Config {
			var out []Config
			for _, f := range thinSizes(c.PingPong.MinSize, c.PingPong.MaxSize) {
				fc := c
				fc.PingPong.MinSize, fc.PingPong.MaxSize = f, f
				out = append(out, fc)
			}
			return out
		}, nil, func(c Config) string { return c.PingPong.Strategies[0] }},
	{"allreduce_hier", allreduceHierPoints, func(r []any) (string, []any) { return counted(r[1], "GPU"), r[2:6] },
		func(c Config) []Config { c.AllreduceHier.Nodes = firstLast(c.AllreduceHier.Nodes); return []Config{c} }, nil,
		func(c Config) string { return c.AllreduceHier.Strategies[0] }},
	{"halo3d", halo3DPoints, func(r []any) (string, []any) {
		return fmt.Sprintf("%s, %v-nb, %v faces", counted(r[0], "node"), r[1], r[2]), r[3:7]
	},
		func(c Config) []Config {
			// The largest machine (intra- and inter-node neighbours), the
			// largest stencil, the smallest, middle and largest face.
			c.Halo3D.Nodes = c.Halo3D.Nodes[len(c.Halo3D.Nodes)-1:]
			c.Halo3D.Neighbours = c.Halo3D.Neighbours[len(c.Halo3D.Neighbours)-1:]
			if c.Halo3D.Scaling == "strong" {
				return []Config{c}
			}
			fs := doublings(c.Halo3D.MinFace, c.Halo3D.MaxFace)
			var out []Config
			for _, f := range []unit.Bytes{fs[0], fs[len(fs)/2], fs[len(fs)-1]} {
				if len(out) > 0 && out[len(out)-1].Halo3D.MinFace == f {
					continue
				}
				fc := c
				fc.Halo3D.MinFace, fc.Halo3D.MaxFace = f, f
				out = append(out, fc)
			}
			return out
		}, func(pt string) string { i := strings.LastIndex(pt, ", "); return pt[:max(0, i)] },
		func(c Config) string { return c.Halo3D.Strategies[0] }},
	{"moe", moePoints, func(r []any) (string, []any) { return fmt.Sprintf("%v EP=%v T=%v", r[0], r[1], r[2]), r[3:7] },
		func(c Config) []Config {
			// The smallest EP; throughput mode at an eighth of its batch
			// (a point of its own: the base's batch is not checked).
			c.MoE.EP, c.MoE.TokensHT = c.MoE.EP[:1], max(1, c.MoE.TokensHT/8)
			return []Config{c}
		}, func(pt string) string { m, _, _ := strings.Cut(pt, " "); return m },
		func(c Config) string { return c.MoE.Strategies[0] }},
}

// thinSizes is every sixth doubling from lo and hi: 8 B, 512 B, 32 KiB,
// 2 MiB, 16 MiB from 8 B to 16 MiB.
func thinSizes(lo, hi unit.Bytes) []unit.Bytes {
	fs := doublings(lo, hi)
	var out []unit.Bytes
	for i, f := range fs {
		if i%6 == 0 || i == len(fs)-1 {
			out = append(out, f)
		}
	}
	return out
}

func firstLast(v []int) []int {
	if len(v) <= 2 {
		return v
	}
	return []int{v[0], v[len(v)-1]}
}

func defaultToday() TodaySpec {
	return TodaySpec{Presets: []string{"h100-cx7", "mi300a-ss11", "gh200", "gh200-cx7"}, Workloads: []string{"pingpong", "allreduce_hier", "halo3d", "moe"},
		Tornado: false, Factor: 2}
}

func (t TodaySpec) validate() error {
	var errs []error
	if len(t.Presets) == 0 {
		errs = append(errs, fmt.Errorf("today.presets is empty: must list presets such as h100-cx7, mi300a-ss11, gh200, gh200-cx7"))
	}
	for _, err := range []error{listedTwice("today.presets", t.Presets), listedTwice("today.workloads", t.Workloads)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range t.Presets {
		if _, err := cluster.Preset(p); err != nil {
			errs = append(errs, fmt.Errorf("today.presets: %w", err))
		}
	}
	var names []string
	for _, w := range todayWorkloads {
		names = append(names, w.name)
	}
	if len(t.Workloads) == 0 {
		errs = append(errs, fmt.Errorf("today.workloads is empty: must list some of %s", strings.Join(names, ", ")))
	}
	for _, w := range t.Workloads {
		if !slices.Contains(names, w) {
			errs = append(errs, fmt.Errorf("today.workloads contains %q: must be one of %s", w, strings.Join(names, ", ")))
		}
	}
	if !(t.Factor > 1 && t.Factor <= 16) {
		errs = append(errs, fmt.Errorf("today.factor = %v: must be in (1, 16]", t.Factor))
	}
	return errors.Join(errs...)
}

func quickToday(cfg *Config) {
	cfg.PingPong.MinSize, cfg.PingPong.MaxSize = 8, 64
	cfg.AllreduceHier.Size, cfg.AllreduceHier.Nodes = 16*unit.KiB, []int{1, 2}
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Nodes = 1*unit.KiB, 1*unit.KiB, []int{1}
	cfg.MoE.EP, cfg.MoE.Hidden, cfg.MoE.TokensLL, cfg.MoE.TokensHT = []int{8}, 256, 8, 16
	cfg.Today.Tornado = false
}

// presetConfig is preset's default configuration with the run's workload
// sizes and study knobs (TodayEntryConfig) and the GHN proxy of its GPU
// mode in every strategy list: each preset keeps its own hardware values
// and the strategies its NIC runs.
func (cfg Config) presetConfig(preset string) (Config, error) {
	pc, err := DefaultConfig(preset)
	if err != nil {
		return Config{}, fmt.Errorf("today.presets: %w", err)
	}
	TodayEntryConfig(&pc, cfg)
	pc.Today = cfg.Today
	// GHN, the CPU proxy (NVSHMEM IBRC, rocSHMEM reverse offload), runs on
	// every preset: the form of the preset's GPU mode, so shmem.threads
	// enters the tornado.
	ghn := string(strategy.GHNDGPU)
	if pc.GPU.Mode == "apu" {
		ghn = string(strategy.GHNAPU)
	}
	for _, list := range []*[]string{&pc.PingPong.Strategies, &pc.AllreduceHier.Strategies, &pc.Halo3D.Strategies, &pc.MoE.Strategies} {
		if !slices.Contains(*list, ghn) {
			*list = append(slices.Clone(*list), ghn)
		}
	}
	return pc, nil
}

// TodayEntryConfig makes pc, a preset's configuration, that of the today
// study run with cfg on the preset: cfg's run values (but the preset) and
// every value of the present-day workloads but their strategies; the
// preset's hardware, software and strategy lists stay (checkToday refuses
// such values set for the study, MoE EP counts that are not whole nodes of
// a preset and a ping-pong over the fabric of one GPU). The
// answer's tables (presetConfig) and the per-preset entries of "gpunetsim
// today" both take their configuration from here, so a --config file's
// hardware values reach neither (they reached the per-preset tables only,
// which then ran on the file's hardware under the preset's name).
func TodayEntryConfig(pc *Config, cfg Config) {
	preset := pc.Run.Preset
	pc.Run = cfg.Run
	pc.Run.Preset = preset
	// Every workload value but the strategies comes from this run: a field
	// left out (allreduce_hier.inter, the comm_wgs knobs) made the answer's
	// tables disagree with the per-preset tables of the same run.
	ps, as, hs, ms := pc.PingPong.Strategies, pc.AllreduceHier.Strategies, pc.Halo3D.Strategies, pc.MoE.Strategies
	pc.PingPong, pc.AllreduceHier, pc.Halo3D, pc.MoE = cfg.PingPong, cfg.AllreduceHier, cfg.Halo3D, cfg.MoE
	pc.PingPong.Strategies, pc.AllreduceHier.Strategies, pc.Halo3D.Strategies, pc.MoE.Strategies = ps, as, hs, ms
}

// todayKnobs returns the values of preset pc that nobody has published
// (cluster.PresetSources: "no source"), sorted, then the knobs without a
// source that decide a strategy the preset runs in one of the workloads:
// the work-groups MoE's GPU-initiated kernels take (moe.comm_wgs), GPU-TN's
// trigger entries (nic.trig_max_entries: the source documents' value, not
// this NIC's), the QPs per peer of the device-verbs implementations
// (gnn.qps) and the GHN proxy threads per GPU (shmem.threads).
func todayKnobs(pc Config, workloads []string) []string {
	var out []string
	for name, src := range cluster.PresetSources(pc.Run.Preset) {
		if src.Tag == "DEFAULT" && src.Ref == "no source" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if slices.Contains(workloads, "moe") {
		out = append(out, "moe.comm_wgs")
	}
	if slices.Contains(workloads, "allreduce_hier") {
		out = append(out, "allreduce_hier.comm_wgs")
	}
	// runs reports whether one of the workloads runs a strategy that k
	// reaches.
	runs := func(k string) bool {
		for _, w := range todayWorkloads {
			if !slices.Contains(workloads, w.name) {
				continue
			}
			for _, s := range todayStrategies(pc, w.name) {
				if d, err := strategy.Lookup(s); err == nil && knobReaches(k, w.name, pc)(d) {
					return true
				}
			}
		}
		return false
	}
	for _, k := range []string{"nic.trig_max_entries", "gnn.qps", "shmem.threads"} {
		if runs(k) {
			out = append(out, k)
		}
	}
	return out
}

// todayStrategies is the strategy list of workload w in pc.
func todayStrategies(pc Config, w string) []string {
	switch w {
	case "pingpong":
		return pc.PingPong.Strategies
	case "allreduce_hier":
		return pc.AllreduceHier.Strategies
	case "halo3d":
		return pc.Halo3D.Strategies
	case "moe":
		return pc.MoE.Strategies
	}
	return nil
}

// knobReaches says which strategies' runs of workload w on preset
// configuration pc a tornado knob can change (the tornado re-runs those
// points and takes the others' times from the defaults, which they cannot
// differ from): a strategy knob reaches the family that reads it; the
// trigger FIFO's pop time only GPU-TN's triggered operations, the verbs
// engine's WQE cost only the GPU-initiated verbs (GIO, GPUrdma); the GPU
// fabric's latency and the copy engines nothing on nodes of one GPU; any
// other hardware value every strategy.
func knobReaches(k, w string, pc Config) func(strategy.Def) bool {
	none := func(strategy.Def) bool { return false }
	triggers := func(d strategy.Def) bool { return d.Caps.Has(strategy.Triggers) }
	switch k {
	case "moe.comm_wgs": // MoE's GPU-initiated kernels' work-groups
		if w != "moe" {
			return none
		}
		return func(d strategy.Def) bool {
			return d.Caps.Has(strategy.Triggers) || d.Caps.Has(strategy.DeviceShmem) || d.Caps.Has(strategy.DeviceVerbs)
		}
	case "allreduce_hier.comm_wgs": // the device-shmem, device-verbs and triggered kernels' work-groups
		if w != "allreduce_hier" {
			return none
		}
		return func(d strategy.Def) bool {
			return d.Caps.Has(strategy.DeviceShmem) || d.Caps.Has(strategy.DeviceVerbs) || d.Caps.Has(strategy.Triggers)
		}
	case "gpu.lsu_bytes": // every GPU kernel's streaming; the host strategy runs none
		return func(d strategy.Def) bool { return !d.Caps.Has(strategy.HostCompute) }
	case "nic.trig_max_entries", "nic.trig_pop": // model/gputn's trigger table and FIFO
		return triggers
	case "nic.verbs_wqe_cost": // the NIC's verbs engine: model/verbs's QPs (GIO, GPUrdma)
		return func(d strategy.Def) bool { return d.Caps.Has(strategy.DeviceVerbs) || d.Strategy == strategy.GNNGIO }
	case "gnn.qps": // work-groups sharing QPs: the ping-pong has one work-group
		if w != "halo3d" && w != "moe" && w != "allreduce_hier" {
			return none
		}
		return func(d strategy.Def) bool { return d.Caps.Has(strategy.DeviceVerbs) }
	case "shmem.threads": // the GHN and ComP-Net service threads (GIO has none)
		return func(d strategy.Def) bool { return d.Caps.Has(strategy.DeviceShmem) && d.Strategy != strategy.GNNGIO }
	case "node.fabric_latency", "node.fabric_bandwidth", "node.copy_engines", "node.copy_launch":
		if pc.Node.GPUs <= 1 { // no GPU fabric, no peer copies
			return none
		}
	}
	return func(strategy.Def) bool { return true }
}

// todayVariant is one tornado run of a preset: a knob's name=value and
// the preset's configuration with it.
type todayVariant struct {
	name, knob string
	kc         Config
}

// todayVariants lists the tornado's variants of preset configuration pc.
func todayVariants(cfg Config, pc Config) ([]todayVariant, error) {
	var out []todayVariant
	for _, k := range todayKnobs(pc, cfg.Today.Workloads) {
		for _, f := range []float64{1 / cfg.Today.Factor, cfg.Today.Factor} {
			kc := pc
			v, err := scaleKnob(&kc, k, f)
			if err != nil {
				return nil, fmt.Errorf("today: %s on %s: %w", k, pc.Run.Preset, err)
			}
			out = append(out, todayVariant{name: k + "=" + v, knob: k, kc: kc})
		}
	}
	return out, nil
}

// todayItem is one point of the study and where it belongs.
type todayItem struct {
	preset, workload, variant string
	pc                        Config // the (preset, variant) configuration the point was listed from
	point                     Point
	// pos is the point's position in its (preset, workload, variant)
	// grid: a tornado variant lists only the points its knob reaches.
	pos int
}

// todayList lists the base grid of every (preset, workload) and, with
// today.tornado, the thinned grid once per knob and direction.
func todayList(cfg Config) ([]todayItem, error) {
	var items []todayItem
	add := func(preset, variant string, pc Config, thin bool, reaches func(w string) func(strategy.Def) bool) error {
		for _, w := range todayWorkloads {
			if !slices.Contains(cfg.Today.Workloads, w.name) {
				continue
			}
			pos := 0
			wcs := []Config{pc}
			if thin {
				// The tornado's grid runs payload-free: the same times,
				// none of the verification's memory and work.
				pc.Run.Functional = false
				wcs = w.thin(pc)
			}
			for _, wc := range wcs {
				pts, err := w.points().List(wc)
				if err != nil {
					return fmt.Errorf("today: %s on %s: %w", w.name, preset, err)
				}
				for _, p := range pts {
					pos++
					if reaches != nil {
						if d, err := strategy.Lookup(w.strategy(p.Config)); err == nil && !reaches(w.name)(d) {
							continue
						}
					}
					p.Label = fmt.Sprintf("%s %s %s | %s", preset, w.name, variant, p.Label)
					items = append(items, todayItem{preset: preset, workload: w.name, variant: variant, pc: wc, point: p, pos: pos - 1})
				}
			}
		}
		return nil
	}
	for _, preset := range cfg.Today.Presets {
		pc, err := cfg.presetConfig(preset)
		if err != nil {
			return nil, err
		}
		if err := add(preset, "base", pc, false, nil); err != nil {
			return nil, err
		}
		if !cfg.Today.Tornado {
			continue
		}
		// The tornado's grid at the defaults, which every knob's runs
		// are compared with.
		if err := add(preset, "default", pc, true, nil); err != nil {
			return nil, err
		}
		vs, err := todayVariants(cfg, pc)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if err := add(preset, v.name, v.kc, true, func(w string) func(strategy.Def) bool { return knobReaches(v.knob, w, pc) }); err != nil {
				return nil, err
			}
		}
	}
	return items, nil
}

// counted is n and word, plural unless n is 1 ("1 node", "4 nodes"): the
// point labels of today's tables.
func counted(n any, word string) string {
	if fmt.Sprint(n) == "1" {
		return "1 " + word
	}
	return fmt.Sprintf("%v %ss", n, word)
}

// scaleKnob multiplies the numeric parameter name of c by f (a count
// rounded, at least 1) and returns the new value as printed.
func scaleKnob(c *Config, name string, f float64) (string, error) {
	v, ok := fieldByName(reflect.ValueOf(c).Elem(), strings.Split(name, "."))
	if !ok {
		return "", fmt.Errorf("no parameter %s", name)
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		x := float64(v.Int()) * f
		if v.Type() == reflect.TypeFor[int]() {
			x = max(1, math.Round(x))
		}
		v.SetInt(int64(x))
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(max(1, math.Round(float64(v.Uint())*f))))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() * f)
	default:
		return "", fmt.Errorf("%s is not numeric", name)
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String(), nil
	}
	return fmt.Sprint(v.Interface()), nil
}

// fieldByName finds the field of v at a parameter's dotted name, through
// the toml tags (embedded structs' fields at their parent's level).
func fieldByName(v reflect.Value, path []string) (reflect.Value, bool) {
	if len(path) == 0 {
		return v, true
	}
	t := v.Type()
	if t.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if sf.Anonymous && (tag == "" || tag == "-") {
			if f, ok := fieldByName(v.Field(i), path); ok {
				return f, true
			}
			continue
		}
		if tag == path[0] {
			return fieldByName(v.Field(i), path[1:])
		}
	}
	return reflect.Value{}, false
}

func todayPoints() Points {
	return Points{List: func(cfg Config) ([]Point, error) {
		items, err := todayList(cfg)
		if err != nil {
			return nil, err
		}
		pts := make([]Point, len(items))
		for i, it := range items {
			pts[i] = it.point
		}
		return pts, nil
	}, Simulate: todaySimulate, Assemble: todayAssemble, Work: todayWork}
}

// todayWork is a today point's expected work: that of its workload's
// experiment on the point's configuration (a today point weighed 1 while
// the per-preset entries' points of the same study weighed nodes × payload,
// so the study's ETA read hours for minutes of work).
func todayWork(p Point) float64 {
	if f := strings.Fields(p.Label); len(f) >= 2 {
		for _, w := range todayWorkloads {
			if w.name == f[1] {
				return ExpectedWork(w.name, p.Config)
			}
		}
	}
	return 1
}

// runToday runs the present-day workloads on every preset of
// today.presets under every strategy each preset's NIC runs, tabulates the
// fastest strategy per point and the ranges each one wins, and, with
// today.tornado, whether the winners survive the unpublished values.
func runToday(cfg Config, env Env) (*report.Result, error) { return RunPoints(todayPoints(), cfg, env) }

func todaySimulate(p Point, env Env) ([]byte, error) {
	head, inner, ok := strings.Cut(p.Label, " | ")
	f := strings.Fields(head)
	if !ok || len(f) != 3 {
		return nil, fmt.Errorf("today: point %q: not a today point", p.Label)
	}
	for _, w := range todayWorkloads {
		if w.name == f[1] {
			return w.points().Simulate(Point{Label: inner, Config: p.Config}, env)
		}
	}
	return nil, fmt.Errorf("today: point %q: unknown workload %s", p.Label, f[1])
}

// todayWinner is one point's winner.
type todayWinner struct {
	fastest, runnerUp string
	time, runnerTime  float64
}

func todayAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	items, err := todayList(cfg)
	if err != nil {
		return nil, err
	}
	if len(items) != len(raw) {
		return nil, fmt.Errorf("today: %d results for %d points", len(raw), len(items))
	}
	type group struct {
		preset, workload, variant string
		pc                        Config
		raw                       [][]byte
		pos                       []int // each raw's position in the grid
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, it := range items {
		k := it.preset + " " + it.workload + " " + it.variant
		g := byKey[k]
		if g == nil {
			g = &group{preset: it.preset, workload: it.workload, variant: it.variant, pc: it.pc}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.raw = append(g.raw, raw[i])
		g.pos = append(g.pos, it.pos)
	}
	// A tornado variant ran only the points its knob reaches: the others
	// are the default grid's (a workload none of whose points it reaches
	// has no item at all).
	if cfg.Today.Tornado {
		for _, preset := range cfg.Today.Presets {
			pc, err := cfg.presetConfig(preset)
			if err != nil {
				return nil, err
			}
			vs, err := todayVariants(cfg, pc)
			if err != nil {
				return nil, err
			}
			for _, w := range cfg.Today.Workloads {
				def := byKey[preset+" "+w+" default"]
				if def == nil {
					continue
				}
				for _, v := range vs {
					k := preset + " " + w + " " + v.name
					g := byKey[k]
					if g == nil {
						g = &group{preset: preset, workload: w, variant: v.name, pc: def.pc}
						byKey[k] = g
						groups = append(groups, g)
					}
					full := slices.Clone(def.raw)
					for i, p := range g.pos {
						if p >= len(full) {
							return nil, fmt.Errorf("today: %s: point %d of a grid of %d", k, p, len(full))
						}
						full[p] = g.raw[i]
					}
					g.raw = full
				}
			}
		}
	}
	// winners[preset workload variant][point] and the base order.
	winners := map[string]map[string]todayWinner{}
	order := map[string][]string{}
	for _, g := range groups {
		w := todayWorkloadNamed(g.workload)
		res, err := w.points().Assemble(g.pc, g.raw)
		if err != nil {
			return nil, fmt.Errorf("today: %s on %s (%s): %w", g.workload, g.preset, g.variant, err)
		}
		k := g.preset + " " + g.workload + " " + g.variant
		winners[k] = map[string]todayWinner{}
		for _, r := range res.Tables[1].Rows {
			pt, rest := w.point(r)
			tw := todayWinner{fastest: fmt.Sprint(rest[0])}
			tw.time, _ = rest[1].(float64)
			tw.runnerUp = fmt.Sprint(rest[2])
			tw.runnerTime, _ = rest[3].(float64)
			winners[k][pt] = tw
			order[k] = append(order[k], pt)
		}
	}
	where := report.Table{Name: "where", Columns: []string{"preset", "workload", "points", "fastest"}}
	points := report.Table{Name: "winners", Columns: []string{"preset", "workload", "point", "fastest", "time_us", "runner_up", "runner_up_us", "margin_pct", "flipped_by"}}
	tornado := report.Table{Name: "tornado", Columns: []string{"preset", "knob", "low", "high", "points", "changed_low", "changed_high", "changes"}}
	trust := report.Table{Name: "trust", Columns: []string{"preset", "workload", "points", "checked", "winner_holds", "knobs_that_flip_a_winner"}}
	plot := &report.Plot{Title: fmt.Sprintf("Does the winner survive the unpublished values? Share of the tornado grid whose fastest strategy changes, each value / and x %g", cfg.Today.Factor),
		XLabel: "points whose winner changes (%)", TornadoLegend: [2]string{fmt.Sprintf("value / %g", cfg.Today.Factor), fmt.Sprintf("value x %g", cfg.Today.Factor)}}
	flipped := map[string][]string{} // preset workload point -> knobs
	checked := map[string]bool{}     // preset workload point on the tornado grid
	for _, preset := range cfg.Today.Presets {
		knobs := []string{}
		if cfg.Today.Tornado {
			pc, err := cfg.presetConfig(preset)
			if err != nil {
				return nil, err
			}
			knobs = todayKnobs(pc, cfg.Today.Workloads)
		}
		variants := map[string][2]string{}
		for _, g := range groups {
			if g.preset != preset || g.variant == "base" || g.variant == "default" {
				continue
			}
			kn, val, _ := strings.Cut(g.variant, "=")
			v := variants[kn]
			if v[0] == "" {
				v[0] = val
			} else if v[0] != val {
				v[1] = val
			}
			variants[kn] = v
		}
		for _, kn := range knobs {
			vals := variants[kn]
			var n, low, high int
			var changes []string
			for i, val := range vals {
				for _, w := range cfg.Today.Workloads {
					base := winners[preset+" "+w+" default"]
					vk := preset + " " + w + " " + kn + "=" + val
					for _, pt := range order[vk] {
						if i == 0 {
							n++
						}
						checked[preset+" "+w+" "+pt] = true
						b, ok := base[pt]
						v := winners[vk][pt]
						if !ok || b.fastest == v.fastest {
							continue
						}
						if i == 0 {
							low++
						} else {
							high++
						}
						fk := preset + " " + w + " " + pt
						if !slices.Contains(flipped[fk], kn) {
							flipped[fk] = append(flipped[fk], kn)
						}
						if len(changes) < 4 {
							changes = append(changes, fmt.Sprintf("%s=%s: %s %s %s->%s", kn, val, w, pt, b.fastest, v.fastest))
						}
					}
				}
			}
			pct := func(c int) float64 {
				if n == 0 {
					return 0
				}
				return round3(100 * float64(c) / float64(n))
			}
			tornado.Rows = append(tornado.Rows, []any{preset, kn, report.ParseQuantity(vals[0]), report.ParseQuantity(vals[1]), n, low, high, strings.Join(changes, "; ")})
			plot.Tornado = append(plot.Tornado, report.TornadoBar{Label: preset + " " + kn, Low: -pct(low), High: pct(high)})
		}
		for _, w := range cfg.Today.Workloads {
			k := preset + " " + w + " base"
			var first, last, cur, curSeries string
			series := todayWorkloadNamed(w).series
			flush := func() {
				if cur != "" {
					span := first
					if last != first {
						span = first + " – " + last
					}
					where.Rows = append(where.Rows, []any{preset, w, span, cur})
				}
			}
			holds, total, all := 0, 0, 0
			var flips []string
			for _, pt := range order[k] {
				b := winners[k][pt]
				// No runner-up: "-", an empty CSV cell, so the columns stay numeric.
				runner, margin := any("-"), any("-")
				if b.runnerTime > 0 {
					runner, margin = b.runnerTime, math.Round(1000*(b.runnerTime-b.time)/b.runnerTime)/10
				}
				by := flipped[preset+" "+w+" "+pt]
				points.Rows = append(points.Rows, []any{preset, w, pt, b.fastest, b.time, b.runnerUp, runner, margin, strings.Join(by, " ")})
				sr := ""
				if series != nil {
					sr = series(pt)
				}
				if b.fastest != cur || sr != curSeries {
					flush()
					first, cur, curSeries = pt, b.fastest, sr
				}
				last = pt
				all++
				if checked[preset+" "+w+" "+pt] {
					total++
					if len(by) == 0 {
						holds++
					}
				}
				for _, kn := range by {
					if !slices.Contains(flips, kn) {
						flips = append(flips, kn)
					}
				}
			}
			flush()
			// Counts, so that the CSV's columns load as numbers; "-" (an
			// empty cell) where no tornado ran (today.tornado = false).
			checked, held := any("-"), any("-")
			if cfg.Today.Tornado {
				checked, held = total, holds
			}
			trust.Rows = append(trust.Rows, []any{preset, w, all, checked, held, strings.Join(flips, " ")})
		}
	}
	res := &report.Result{Experiment: "today", Seed: cfg.Run.Seed, Tables: []report.Table{where, points, trust}}
	if cfg.Today.Tornado {
		res.Tables = append(res.Tables, tornado)
		res.Plot = plot
	}
	res.Notes = append(res.Notes,
		"each preset runs with its own default parameters (hardware values of --set or --config do not carry over) and the strategies with an implementation that its NIC runs, plus the GHN CPU proxy of its GPU mode (GHN_DGPU on dGPU presets, GHN_APU on APU presets); workload sizes (pingpong.*, allreduce_hier.*, halo3d.*, moe.*) come from this run",
		fmt.Sprintf("tornado: every value a preset's sources do not give (gpunetsim params: DEFAULT, no source) and the strategy knobs without a source (moe.comm_wgs, allreduce_hier.comm_wgs, and where a strategy they reach runs: nic.trig_max_entries, gnn.qps, shmem.threads), divided and multiplied by today.factor = %g one at a time, on a thinned payload-free grid (pingpong sizes: every sixth doubling and the largest; allreduce_hier: first and last node count; halo3d: the last node count and stencil, the smallest, middle and largest face; moe: the first EP count, throughput mode at moe.tokens_ht / 8), compared with the same grid at the defaults; flipped_by names the knobs that change a point's winner (points outside the thinned grid are not checked)", cfg.Today.Factor),
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access), GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc) and a GDS stream enqueues peer copies where the workload does (ping-pong); eager MPI messages, the other stream workloads and triggered operations take their NIC path carried by the GPU fabric")
	return res, nil
}

func todayWorkloadNamed(name string) todayWorkload {
	for _, w := range todayWorkloads {
		if w.name == name {
			return w
		}
	}
	panic("today: unknown workload " + name)
}
