package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/model/shmem"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// ShmemBenchSpec holds the knobs of the device-shmem microbenchmarks
// (the dissertation's ComP-Net chapter). Run them with the documents' preset: --preset
// compnet.
type ShmemBenchSpec struct {
	QueueStrategies []string   `toml:"queue_strategies" doc:"ghnqueue: strategies, one per queue placement (default, as the ComP-Net chapter runs them: GHN_DGPU, GHN_DGPU_HOSTQ)" src:"DOC"`
	QueueWGs        []int      `toml:"queue_wgs" doc:"ghnqueue: work-groups issuing requests (= queues; the ComP-Net chapter's helper-thread scalability study sweeps 64…2048 on gpu.cus=64)" src:"DEFAULT"`
	QueueThreads    []int      `toml:"queue_threads" doc:"ghnqueue: host helper threads (that study: 1, 2, 4, 8, 16)" src:"DEFAULT"`
	QueueOps        int        `toml:"queue_ops" doc:"ghnqueue: blocking 8 B puts per work-group" src:"DEFAULT"`
	GetStrategies   []string   `toml:"get_strategies" doc:"shmemget: strategies (default, as the ComP-Net chapter runs them: GHN_DGPU, GHN_APU, COMPNET)" src:"DOC"`
	GetMin          unit.Bytes `toml:"get_min" doc:"shmemget: smallest payload" src:"DEFAULT"`
	GetMax          unit.Bytes `toml:"get_max" doc:"shmemget: largest payload (powers of 4 from get_min)" src:"DEFAULT"`
	GetReps         int        `toml:"get_reps" doc:"shmemget: gets per point (the first is a warm-up)" src:"DEFAULT"`
	LoadStrategies  []string   `toml:"load_strategies" doc:"shmemload: strategies, energy normalised to the first (default, as the ComP-Net chapter runs them: GHN_DGPU, GHN_APU, COMPNET)" src:"DOC"`
	LoadThreads     []int      `toml:"load_threads" doc:"shmemload: service threads per node" src:"DEFAULT"`
	LoadWGs         int        `toml:"load_wgs" doc:"shmemload: work-groups (480 × 64 fills the 12-CU GPU)" src:"DOC"`
	LoadWGSize      int        `toml:"load_wg_size" doc:"shmemload: work-items per work-group" src:"DOC"`
	LoadBytes       int        `toml:"load_bytes" doc:"shmemload: bytes per put" src:"DOC"`
	L2Ratios        []int      `toml:"l2_ratios" doc:"cpl2: streaming work-groups per networking work-group (the ComP-Net chapter's CP L2 hit-rate study)" src:"DEFAULT"`
	L2NetWGs        int        `toml:"l2_net_wgs" doc:"cpl2: networking work-groups" src:"DEFAULT"`
	L2Puts          int        `toml:"l2_puts" doc:"cpl2: blocking 64 B puts per networking work-group, one in flight at a time (the request pattern of the documents' premise that the CP reaches posted data quickly)" src:"DEFAULT"`
	L2InFlight      int        `toml:"l2_inflight" doc:"cpl2: puts each networking work-group keeps in flight; 1 (the documented set-up) is a blocking put at a time, N > 1 posts N non-blocking puts, then quiets (a what-if: more posted entries wait for the CP, and the lock hold time grows with them)" src:"DEFAULT"`
	L2Stream        unit.Bytes `toml:"l2_stream" doc:"cpl2: the array each streaming work-group reads and writes at unit stride, wrapping around until the networking work-groups finish (≫ l2_size)" src:"DEFAULT"`
	L2Chunk         unit.Bytes `toml:"l2_chunk" doc:"cpl2: bytes streamed per step" src:"DEFAULT"`
	L2Size          unit.Bytes `toml:"l2_size" doc:"cpl2: the single CU's scaled L2 (1 MB / 12, 16-way)" src:"DEFAULT"`
}

// defaultShmemBench returns the documents' sweeps.
func defaultShmemBench() ShmemBenchSpec {
	return ShmemBenchSpec{
		QueueStrategies: []string{"GHN_DGPU", "GHN_DGPU_HOSTQ"}, QueueWGs: []int{1, 2, 4, 8, 16, 32, 64}, QueueThreads: []int{1}, QueueOps: 8,
		GetStrategies: []string{"GHN_DGPU", "GHN_APU", "COMPNET"}, GetMin: 1, GetMax: unit.MiB, GetReps: 4,
		LoadStrategies: []string{"GHN_DGPU", "GHN_APU", "COMPNET"}, LoadThreads: []int{1, 2, 4, 8, 16}, LoadWGs: 480, LoadWGSize: 64, LoadBytes: 1,
		L2Ratios: []int{0, 1, 2, 4, 8, 16}, L2NetWGs: 2, L2Puts: 64, L2InFlight: 1, L2Stream: 256 * unit.KiB, L2Chunk: 4 * unit.KiB, L2Size: 85 * unit.KiB,
	}
}

func (s ShmemBenchSpec) validate() error {
	var errs []error
	shm := shmemStrategies()
	for _, f := range []struct {
		name string
		v    []string
	}{{"shmembench.queue_strategies", s.QueueStrategies}, {"shmembench.get_strategies", s.GetStrategies}, {"shmembench.load_strategies", s.LoadStrategies}} {
		errs = append(errs, checkStrategies(f.name, f.v, shm))
	}
	for _, f := range []struct {
		name    string
		v       []int
		lo, hi  int
		allowed string
	}{{"shmembench.queue_wgs", s.QueueWGs, 1, 65536, "[1, 65536]"}, {"shmembench.queue_threads", s.QueueThreads, 1, 1024, "[1, 1024]"},
		{"shmembench.load_threads", s.LoadThreads, 1, 1024, "[1, 1024]"}, {"shmembench.l2_ratios", s.L2Ratios, 0, 64, "[0, 64]"}} {
		if len(f.v) == 0 {
			errs = append(errs, fmt.Errorf("%s is empty: give at least one value in %s", f.name, f.allowed))
		}
		for _, v := range f.v {
			if v < f.lo || v > f.hi {
				errs = append(errs, fmt.Errorf("%s contains %d: must be in %s", f.name, v, f.allowed))
			}
		}
	}
	for _, f := range []struct {
		name   string
		v      int
		lo, hi int
	}{{"shmembench.queue_ops", s.QueueOps, 1, 1 << 20}, {"shmembench.get_reps", s.GetReps, 2, 1 << 20},
		{"shmembench.load_wgs", s.LoadWGs, 1, 1 << 20}, {"shmembench.load_wg_size", s.LoadWGSize, 1, 1024},
		{"shmembench.load_bytes", s.LoadBytes, 1, 8}, {"shmembench.l2_net_wgs", s.L2NetWGs, 1, 1024}, {"shmembench.l2_puts", s.L2Puts, 1, 1 << 20},
		{"shmembench.l2_inflight", s.L2InFlight, 1, 64}} {
		if f.v < f.lo || f.v > f.hi {
			errs = append(errs, fmt.Errorf("%s = %d: must be in [%d, %d]", f.name, f.v, f.lo, f.hi))
		}
	}
	// Each value against its own range, then the pair's order when both
	// are valid: two bad values are two lines.
	getMinOK := s.GetMin >= 1 && s.GetMin <= 64*unit.MiB
	if !getMinOK {
		errs = append(errs, fmt.Errorf("shmembench.get_min = %v: must be in [1B, 64MiB]", s.GetMin))
	}
	switch {
	case s.GetMax < 1 || s.GetMax > 64*unit.MiB:
		errs = append(errs, fmt.Errorf("shmembench.get_max = %v: must be in [1B, 64MiB]", s.GetMax))
	case getMinOK && s.GetMax < s.GetMin:
		errs = append(errs, fmt.Errorf("shmembench.get_max = %v: must be at least shmembench.get_min = %v", s.GetMax, s.GetMin))
	}
	streamOK := s.L2Stream >= 0 && s.L2Stream <= unit.GiB
	if !streamOK {
		errs = append(errs, fmt.Errorf("shmembench.l2_stream = %v: must be in [0, 1GiB]", s.L2Stream))
	}
	switch {
	case s.L2Chunk < 64 || s.L2Chunk > unit.GiB:
		errs = append(errs, fmt.Errorf("shmembench.l2_chunk = %v: must be in [64B, 1GiB]", s.L2Chunk))
	case streamOK && s.L2Stream > 0 && s.L2Chunk > s.L2Stream:
		errs = append(errs, fmt.Errorf("shmembench.l2_chunk = %v: must be at most shmembench.l2_stream = %v", s.L2Chunk, s.L2Stream))
	}
	if s.L2Size < 1024 || s.L2Size%1024 != 0 || s.L2Size > unit.GiB {
		errs = append(errs, fmt.Errorf("shmembench.l2_size = %v: must be a multiple of 1KiB (16 ways × 64 B) in [1KiB, 1GiB]", s.L2Size))
	}
	return errors.Join(errs...)
}

// shmemStrategies lists the registered strategies with the device-shmem
// capability.
func shmemStrategies() []string {
	var out []string
	for _, d := range strategy.Registry() {
		if d.Caps.Has(strategy.DeviceShmem) {
			out = append(out, string(d.Strategy))
		}
	}
	return out
}

// shmemPoint is one simulation of a device-shmem microbenchmark.
type shmemPoint struct {
	Strategy string   `json:"strategy"`
	X        int64    `json:"x"` // the swept value (work-groups, bytes, threads, ratio)
	Y        int      `json:"y"` // the second swept value (threads; locking 0/1)
	Time     sim.Time `json:"time"`
	Service  sim.Time `json:"service"`
	Latency  sim.Time `json:"latency"`
	Polls    uint64   `json:"polls"`
	Static   float64  `json:"static_j"`
	Dynamic  float64  `json:"dynamic_j"`
	HitRate  float64  `json:"hit_rate"`
	CPAcc    uint64   `json:"cp_accesses"`
	Locked   int      `json:"max_locked"`
	Hold     sim.Time `json:"lock_hold"`
	Events   uint64   `json:"events"`
	Cores    int      `json:"cores,omitempty"`     // distinct cores the service threads ran on
	CoreUtil float64  `json:"core_util,omitempty"` // service threads' time on their cores / their lives
	// Deviations are the preset changes the service threads' placement
	// made (one core per thread, or time-slicing).
	Deviations []string `json:"deviations,omitempty"`
	HoldMax    sim.Time `json:"lock_hold_max,omitempty"`
	CPIPC      float64  `json:"cp_ipc,omitempty"`
	// Phases is shmemget's decomposition of one get (shmem.PhaseNames).
	Phases []sim.Time `json:"phases,omitempty"`
	// CPClasses is cpl2's breakdown of the CP's L2 accesses by the
	// structure they touched (workload.CPClass).
	CPClasses []workload.CPClass `json:"cp_classes,omitempty"`
}

// phases returns r's decomposition, nil when it has none.
func phases(r workload.ShmemRun) []sim.Time {
	var sum sim.Time
	for _, d := range r.Phases {
		sum += d
	}
	if sum == 0 {
		return nil
	}
	return r.Phases[:]
}

// cpNote says how fast the CP cores ran, when a point ran COMPNET.
func cpNote(cfg Config, pts []shmemPoint) []string {
	for _, p := range pts {
		if p.Strategy == "COMPNET" && p.CPIPC > 0 {
			how := "cp.ipc as set"
			if cfg.CP.IPC == 0 {
				how = fmt.Sprintf("from the host's instruction-count model: 1 / (1/%d + (1/%g − 1/%d))", cfg.CP.Width, cfg.CPU.IPC, cfg.CPU.Width)
			}
			return []string{fmt.Sprintf("CP cores: %d-wide at %v, IPC %.3f (%s)", cfg.CP.Width, cfg.CP.Freq, p.CPIPC, how)}
		}
	}
	return nil
}

// deviationNotes returns one note per distinct placement deviation of
// pts, naming the points it applies to.
func deviationNotes(pts []shmemPoint) []string {
	var order []string
	who := map[string][]string{}
	for _, p := range pts {
		for _, d := range p.Deviations {
			if who[d] == nil {
				order = append(order, d)
			}
			who[d] = append(who[d], p.Strategy)
		}
	}
	var out []string
	for _, d := range order {
		out = append(out, fmt.Sprintf("deviation from the preset (%s): %s", strings.Join(slices.Compact(who[d]), ", "), d))
	}
	return out
}

// coreUse returns how many distinct cores rep's service threads ran on and
// the fraction of their lives they held those cores.
func coreUse(rep shmem.Report) (int, float64) {
	cores := map[string]bool{}
	var on, alive sim.Duration
	for _, t := range rep.Threads {
		cores[fmt.Sprintf("%s%d", t.Core, t.CoreID)] = true
		on += t.OnCore
		alive += t.Alive
	}
	if alive == 0 {
		return len(cores), 0
	}
	return len(cores), float64(on) / float64(alive)
}

type shmemRunner interface {
	Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (workload.ShmemRun, error)
}

// simulateShmem runs one point of a device-shmem microbenchmark on nodes
// nodes and encodes what it measured; x and y are the point's swept values.
func simulateShmem(p Point, env Env, name string, nodes int, x int64, y int, bench shmemRunner) ([]byte, error) {
	cfg := p.Config
	s, err := strategy.Parse(name)
	if err != nil {
		return nil, err
	}
	c, err := newRun(cfg, env, p.Label, nodes, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := bench.Run(c, s, strategyConfig(cfg))
	if err != nil {
		return nil, err // RunPoints and the study name the point
	}
	cores, util := coreUse(r.Report)
	hold := sim.Time(0)
	if r.L2.Unlocks > 0 {
		hold = r.L2.LockHold / sim.Time(r.L2.Unlocks)
	}
	return json.Marshal(shmemPoint{Strategy: name, X: x, Y: y, Time: r.Kernel, Service: r.Report.Calls.MeanService(),
		Latency: r.Latency, Polls: r.Report.Polls(), Static: r.Report.Energy.Static, Dynamic: r.Report.Energy.Dynamic,
		HitRate: r.L2.HitRate(gpu.CP), CPAcc: r.L2.Hits[gpu.CP] + r.L2.Misses[gpu.CP], Locked: r.L2.MaxLocked, Hold: hold,
		Events: c.Engine.Events(), Cores: cores, CoreUtil: util, Deviations: r.Report.Deviations, HoldMax: r.L2.LockHoldMax,
		CPIPC: c.Nodes[0].CP.IPC(), Phases: phases(r), CPClasses: r.CPClasses})
}

func shmemPresetNote(cfg Config) []string {
	if cfg.Run.Preset == "compnet" || cfg.Run.Preset == "compnet_paper" {
		return nil
	}
	return []string{fmt.Sprintf("preset %s: the documents ran these microbenchmarks on preset compnet (--preset compnet)", cfg.Run.Preset)}
}

// ---------------------------------------------------------------------------
// ghnqueue: queue placement and helper-thread scalability (§5.1–5.2).

func ghnqueuePoints() Points {
	return Points{
		List: func(cfg Config) ([]Point, error) {
			b := cfg.ShmemBench
			var pts []Point
			for _, t := range b.QueueThreads {
				for _, w := range b.QueueWGs {
					for _, s := range b.QueueStrategies {
						pc := cfg
						pc.ShmemBench.QueueStrategies, pc.ShmemBench.QueueWGs, pc.ShmemBench.QueueThreads = []string{s}, []int{w}, []int{t}
						pc.Shmem.Threads = t
						pts = append(pts, Point{Label: fmt.Sprintf("%s wgs=%d threads=%d", s, w, t), Config: pc})
					}
				}
			}
			return pts, nil
		},
		Simulate: func(p Point, env Env) ([]byte, error) {
			b := p.Config.ShmemBench
			w := b.QueueWGs[0]
			return simulateShmem(p, env, b.QueueStrategies[0], 2, int64(w), b.QueueThreads[0],
				workload.ShmemService{WGs: w, WGSize: 64, Ops: b.QueueOps})
		},
		Assemble: func(cfg Config, results [][]byte) (*report.Result, error) {
			pts, err := decodeResults[shmemPoint](results)
			if err != nil {
				return nil, err
			}
			t := report.Table{Name: "ghnqueue", Columns: []string{"strategy", "threads", "wgs", "queues_per_thread", "service", "service_us", "kernel", "polls", "events"}}
			plot := &report.Plot{Title: "GHN queue placement: mean service time", XLabel: "queues per helper thread", YLabel: "service time (us)", LogX: true}
			series := map[string]*report.Series{}
			var order []string
			for _, p := range pts {
				q := float64(p.X) / float64(p.Y)
				t.Rows = append(t.Rows, []any{p.Strategy, p.Y, int(p.X), round3(q), p.Service, round3(p.Service.Micros()), p.Time, p.Polls, p.Events})
				key := fmt.Sprintf("%s, %d thread(s)", p.Strategy, p.Y)
				if series[key] == nil {
					series[key] = &report.Series{Name: key}
					order = append(order, key)
				}
				series[key].X = append(series[key].X, q)
				series[key].Y = append(series[key].Y, p.Service.Micros())
			}
			for _, k := range order {
				plot.Series = append(plot.Series, *series[k])
			}
			res := &report.Result{Experiment: "ghnqueue", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
			res.Notes = append(res.Notes, "service time = a work-group's blocking call, post → completion observed (mean over node 0's calls); every call is a blocking 8 B put to the next node",
				"the ComP-Net chapter's helper-thread scalability study: --set gpu.cus=64 --set shmembench.queue_wgs=64,128,256,512,1024,2048 --set shmembench.queue_threads=1,2,4,8,16")
			res.Notes = append(res.Notes, shmemPresetNote(cfg)...)
			res.Notes = append(res.Notes, cpNote(cfg, pts)...)
			res.Notes = append(res.Notes, deviationNotes(pts)...)
			return res, nil
		},
	}
}

// ---------------------------------------------------------------------------
// shmemget: get latency vs payload (§5.3).

func getSizes(b ShmemBenchSpec) []int64 {
	var out []int64
	for n := int64(b.GetMin); n <= int64(b.GetMax); n *= 4 {
		out = append(out, n)
	}
	return out
}

func shmemgetPoints() Points {
	return Points{
		List: func(cfg Config) ([]Point, error) {
			var pts []Point
			for _, n := range getSizes(cfg.ShmemBench) {
				for _, s := range cfg.ShmemBench.GetStrategies {
					pc := cfg
					pc.ShmemBench.GetStrategies, pc.ShmemBench.GetMin, pc.ShmemBench.GetMax = []string{s}, unit.Bytes(n), unit.Bytes(n)
					pc.Shmem.Threads = 1
					pts = append(pts, Point{Label: fmt.Sprintf("%s get %v", s, unit.Bytes(n)), Config: pc})
				}
			}
			return pts, nil
		},
		Simulate: func(p Point, env Env) ([]byte, error) {
			b := p.Config.ShmemBench
			return simulateShmem(p, env, b.GetStrategies[0], 2, int64(b.GetMin), 1,
				workload.ShmemGet{Size: uint64(b.GetMin), Reps: b.GetReps})
		},
		Assemble: func(cfg Config, results [][]byte) (*report.Result, error) {
			pts, err := decodeResults[shmemPoint](results)
			if err != nil {
				return nil, err
			}
			t := report.Table{Name: "shmemget", Columns: []string{"strategy", "bytes", "latency", "latency_us", "polls", "events"},
				Units: map[string]string{"bytes": "B"}}
			plot := &report.Plot{Title: "Single work-group get latency, one service thread", XLabel: "payload (bytes)", YLabel: "latency (us)", LogX: true}
			series := map[string]*report.Series{}
			for _, p := range pts {
				t.Rows = append(t.Rows, []any{p.Strategy, p.X, p.Latency, round3(p.Latency.Micros()), p.Polls, p.Events})
				if series[p.Strategy] == nil {
					series[p.Strategy] = &report.Series{Name: p.Strategy}
				}
				series[p.Strategy].X = append(series[p.Strategy].X, float64(p.X))
				series[p.Strategy].Y = append(series[p.Strategy].Y, p.Latency.Micros())
			}
			for _, s := range cfg.ShmemBench.GetStrategies {
				if series[s] != nil {
					plot.Series = append(plot.Series, *series[s])
				}
			}
			dec := report.Table{Name: "shmemget_decomposition", Columns: []string{"strategy", "bytes"}, Units: map[string]string{"bytes": "B"}}
			for _, n := range shmem.PhaseNames {
				dec.Columns = append(dec.Columns, strings.ReplaceAll(strings.ReplaceAll(n, " + ", "_"), " ", "_")+"_us")
			}
			dec.Columns = append(dec.Columns, "sum_us", "latency_us")
			for _, p := range pts {
				if p.Phases == nil {
					continue
				}
				row := []any{p.Strategy, p.X}
				var sum sim.Time
				for _, d := range p.Phases {
					row = append(row, round3(d.Micros()))
					sum += d
				}
				dec.Rows = append(dec.Rows, append(row, round3(sum.Micros()), round3(p.Latency.Micros())))
			}
			res := &report.Result{Experiment: "shmemget", Seed: cfg.Run.Seed, Tables: []report.Table{t, dec}, Plot: plot}
			res.Notes = append(res.Notes, "latency = blocking getmem call → data visible to the work-group, mean over the gets after a warm-up; data checked",
				"decomposition (mean of the timed gets): post = the work-group reserves, fills and publishes its entry; pickup = until a service thread's poll finds it; dequeue = entry read; library call = OpenSHMEM argument checks and address translation; Portals post = context lock, command, system release, doorbell; network + polling = until the quiet round that finds the get complete (the get's network round trip and the polling rounds before the quiet); quiet = CT read and COMPLETE store; completion seen = until the work-group's poll sees it. --trace shows the same parts as spans on each service thread's track")
			res.Notes = append(res.Notes, shmemPresetNote(cfg)...)
			res.Notes = append(res.Notes, cpNote(cfg, pts)...)
			res.Notes = append(res.Notes, deviationNotes(pts)...)
			return res, nil
		},
	}
}

// ---------------------------------------------------------------------------
// shmemload: 480 work-groups × service threads, time and energy (§5.4).

func shmemloadPoints() Points {
	return Points{
		List: func(cfg Config) ([]Point, error) {
			var pts []Point
			for _, t := range cfg.ShmemBench.LoadThreads {
				for _, s := range cfg.ShmemBench.LoadStrategies {
					pc := cfg
					pc.ShmemBench.LoadStrategies, pc.ShmemBench.LoadThreads = []string{s}, []int{t}
					pc.Shmem.Threads = t
					pts = append(pts, Point{Label: fmt.Sprintf("%s threads=%d", s, t), Config: pc})
				}
			}
			return pts, nil
		},
		Simulate: func(p Point, env Env) ([]byte, error) {
			b := p.Config.ShmemBench
			return simulateShmem(p, env, b.LoadStrategies[0], 2, int64(b.LoadThreads[0]), 0,
				workload.ShmemLoad{WGs: b.LoadWGs, WGSize: b.LoadWGSize, Bytes: b.LoadBytes})
		},
		Assemble: func(cfg Config, results [][]byte) (*report.Result, error) {
			pts, err := decodeResults[shmemPoint](results)
			if err != nil {
				return nil, err
			}
			base := cfg.ShmemBench.LoadStrategies[0]
			ref := map[int64]shmemPoint{}
			for _, p := range pts {
				if p.Strategy == base {
					ref[p.X] = p
				}
			}
			t := report.Table{Name: "shmemload", Columns: []string{"strategy", "threads", "time", "time_us", "time_vs_" + base,
				"energy_uj", "static_uj", "dynamic_uj", "energy_vs_" + base, "cores", "core_util", "polls", "events"}}
			plot := &report.Plot{Title: fmt.Sprintf("%d WGs × %d work-items, %d-byte puts: completion time", cfg.ShmemBench.LoadWGs, cfg.ShmemBench.LoadWGSize, cfg.ShmemBench.LoadBytes),
				XLabel: "service threads", YLabel: "time (us)", LogX: true}
			series := map[string]*report.Series{}
			for _, p := range pts {
				e := p.Static + p.Dynamic
				r := ref[p.X]
				t.Rows = append(t.Rows, []any{p.Strategy, int(p.X), p.Time, round3(p.Time.Micros()), round3(ratio(float64(p.Time), float64(r.Time))),
					round3(e * 1e6), round3(p.Static * 1e6), round3(p.Dynamic * 1e6), round3(ratio(e, r.Static+r.Dynamic)), p.Cores, round3(p.CoreUtil), p.Polls, p.Events})
				if series[p.Strategy] == nil {
					series[p.Strategy] = &report.Series{Name: p.Strategy}
				}
				series[p.Strategy].X = append(series[p.Strategy].X, float64(p.X))
				series[p.Strategy].Y = append(series[p.Strategy].Y, p.Time.Micros())
			}
			for _, s := range cfg.ShmemBench.LoadStrategies {
				if series[s] != nil {
					plot.Series = append(plot.Series, *series[s])
				}
			}
			res := &report.Result{Experiment: "shmemload", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
			res.Notes = append(res.Notes, "time = node 0's kernel body (first work-group start → last end); energy = node 0's service threads only: per core, static power × the longest life of the service threads on it (threads time-sliced on one core share it) + per-event energy; cores = distinct cores they ran on, core_util = their time holding a core / their lives",
				fmt.Sprintf("ratios are against %s at the same thread count; every service thread runs on a hardware context of its own (CP cores for COMPNET, host cores for GHN), added beyond the preset's as a deviation; cp.oversubscribe / shmem.host_cores time-slice them instead", base))
			res.Notes = append(res.Notes, energyNote(cfg))
			res.Notes = append(res.Notes, shmemPresetNote(cfg)...)
			res.Notes = append(res.Notes, cpNote(cfg, pts)...)
			res.Notes = append(res.Notes, deviationNotes(pts)...)
			return res, nil
		},
	}
}

// energyNote names the power model behind the service-thread energies,
// and says when the user's values replace it.
func energyNote(cfg Config) string {
	e, def := cfg.Shmem.Energy, shmem.DefaultEnergy()
	src := "power model: " + shmem.EnergyModel
	if e != def {
		src = "power: the shmem.energy.* values set for this run (the default model: " + shmem.EnergyModel + ")"
	}
	return fmt.Sprintf("%s; host core %.3f W static, %.4f nJ/instr; CP core %.3f W static, %.4f nJ/instr; CPU and CP cores only, the GPU's power is not modelled (as in the documents)",
		src, e.Host.Static, e.Host.Instr, e.CP.Static, e.CP.Instr)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// ---------------------------------------------------------------------------
// cpl2: CP L2 hit rate under streaming interference (§5.5).

// cpl2PerCU is how many of the study's 64-work-item work-groups one CU of
// cfg's GPU holds at once (gpu.GPU.MaxResident on one CU, no LDS).
func cpl2PerCU(cfg Config) int {
	waves := (64 + cfg.GPU.WaveSize - 1) / max(1, cfg.GPU.WaveSize)
	return cfg.GPU.SIMDs * cfg.GPU.WavesPerSIMD / max(1, waves)
}

// cpl2MaxRatio is the largest streaming : networking ratio whose
// work-groups (which wait on each other: the cooperative launch rule)
// one CU holds at once: 15 on a Hopper SM (64 warps, 32 work-groups of
// 64), 39 on the documents' GCN CU.
func cpl2MaxRatio(cfg Config) int {
	return cpl2PerCU(cfg)/max(1, cfg.ShmemBench.L2NetWGs) - 1
}

func cpl2Points() Points {
	return Points{
		List: func(cfg Config) ([]Point, error) {
			if most := cpl2MaxRatio(cfg); len(cfg.ShmemBench.L2Ratios) > 0 && slices.Max(cfg.ShmemBench.L2Ratios) > most {
				return nil, fmt.Errorf("%w: shmembench.l2_ratios contains %d: with shmembench.l2_net_wgs = %d, the %d work-groups of 64 work-items wait on each other and must all be resident on the study's one CU, which holds %d on preset %s (gpu.simds × gpu.waves_per_simd waves); must be at most %d",
					sim.ErrConfig, slices.Max(cfg.ShmemBench.L2Ratios), cfg.ShmemBench.L2NetWGs, cfg.ShmemBench.L2NetWGs*(1+slices.Max(cfg.ShmemBench.L2Ratios)), cpl2PerCU(cfg), cfg.Run.Preset, most)
			}
			var pts []Point
			for _, lock := range []bool{false, true} {
				for _, r := range cfg.ShmemBench.L2Ratios {
					pc := cfg
					pc.ShmemBench.L2Ratios = []int{r}
					pc.Shmem.LLCLocking = lock
					pc.GPU.CUs = 1
					pc.L2.Size, pc.L2.Ways = cfg.ShmemBench.L2Size, 16
					pts = append(pts, Point{Label: fmt.Sprintf("COMPNET ratio=%d locking=%v", r, lock), Config: pc})
				}
			}
			return pts, nil
		},
		Simulate: func(p Point, env Env) ([]byte, error) {
			b := p.Config.ShmemBench
			lock := 0
			if p.Config.Shmem.LLCLocking {
				lock = 1
			}
			return simulateShmem(p, env, "COMPNET", 2, int64(b.L2Ratios[0]), lock,
				workload.CPL2{NetWGs: b.L2NetWGs, Streaming: b.L2Ratios[0], Puts: b.L2Puts, InFlight: b.L2InFlight, StreamBytes: uint64(b.L2Stream), Chunk: uint64(b.L2Chunk)})
		},
		Assemble: func(cfg Config, results [][]byte) (*report.Result, error) {
			pts, err := decodeResults[shmemPoint](results)
			if err != nil {
				return nil, err
			}
			t := report.Table{Name: "cpl2", Columns: []string{"streaming_per_net", "llc_locking", "cp_hit_rate", "cp_l2_accesses", "max_locked_lines", "mean_lock_hold", "max_lock_hold", "time", "events"}}
			plot := &report.Plot{Title: "L2 hit rate of CP accesses under streaming interference (1 CU)", XLabel: "streaming : networking work-groups", YLabel: "CP L2 hit rate"}
			series := [2]*report.Series{{Name: "llc_locking off"}, {Name: "llc_locking on"}}
			for _, p := range pts {
				t.Rows = append(t.Rows, []any{int(p.X), p.Y == 1, round3(p.HitRate), p.CPAcc, p.Locked, p.Hold, p.HoldMax, p.Time, p.Events})
				series[p.Y].X = append(series[p.Y].X, float64(p.X))
				series[p.Y].Y = append(series[p.Y].Y, p.HitRate)
			}
			plot.Series = []report.Series{*series[0], *series[1]}
			// Where the CP's L2 accesses go and which of them locking
			// protected: the mechanism behind both curves.
			by := report.Table{Name: "cpl2_cp_accesses", Columns: []string{"streaming_per_net", "llc_locking", "class", "accesses", "share", "hit_rate", "found_locked"}}
			for _, p := range pts {
				for _, k := range p.CPClasses {
					n := k.Hits + k.Misses
					by.Rows = append(by.Rows, []any{int(p.X), p.Y == 1, k.Name, n, round3(ratio(float64(n), float64(p.CPAcc))), round3(ratio(float64(k.Hits), float64(n))), k.Locked})
				}
			}
			res := &report.Result{Experiment: "cpl2", Seed: cfg.Run.Seed, Tables: []report.Table{t, by}, Plot: plot}
			inflight := "one blocking 64 B put in flight"
			if n := cfg.ShmemBench.L2InFlight; n > 1 {
				inflight = fmt.Sprintf("%d non-blocking 64 B puts in flight, then a quiet (shmembench.l2_inflight: not the documented set-up of one)", n)
			}
			res.Notes = append(res.Notes, fmt.Sprintf("node 0, one CU (L1–L2 path gpu.l2_port_bytes per cycle), L2 %v 16-way; %d networking work-groups, each keeping %s (%d puts); streaming work-groups read and write %v arrays at unit stride until the networking ones finish", cfg.ShmemBench.L2Size, cfg.ShmemBench.L2NetWGs, inflight, cfg.ShmemBench.L2Puts, cfg.ShmemBench.L2Stream),
				"hit rate counts only CP-generated L2 accesses (polls of the queues, entry reads, status and read-index stores, the library's context lines: mutex RMWs and issue counts); lock hold = the CP's first access to a store_locked line − the locking store, mean and max over the released lines",
				"cpl2_cp_accesses: node 0's CP accesses by the lines they touched: net_queues, the networking work-groups' queues; idle_queues, the streaming work-groups' (every work-group has a queue the CP threads poll, and the streaming ones never post); library, its contexts, counting-event copies and bounce buffers; other, the rest. found_locked = accesses that found their line store_locked: each unlocks it, so locking protects at most one CP access per posted entry")
			res.Notes = append(res.Notes, shmemPresetNote(cfg)...)
			return res, nil
		},
	}
}

func runShmemPoints(ps Points) func(cfg Config, env Env) (*report.Result, error) {
	return func(cfg Config, env Env) (*report.Result, error) { return RunPoints(ps, cfg, env) }
}
