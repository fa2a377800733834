package exp

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// MoESpec holds the knobs of the expert-parallel MoE layer.
type MoESpec struct {
	EP         []int      `toml:"ep" doc:"expert-parallel GPUs to sweep (ranks; whole nodes of node.gpus GPUs); the present-day study asks for 8 to 256" src:"DEFAULT"`
	Modes      []string   `toml:"modes" doc:"low-latency (one entry per token and expert, per-token puts) and/or throughput (one entry per token and GPU, one message per GPU pair)" src:"DEFAULT"`
	Hidden     int        `toml:"hidden" doc:"hidden size H: channels per token (FP8 + one float32 scale per 128 in dispatch, BF16 in combine)" src:"DOC" ref:"DeepSeek-V3 Technical Report: hidden dimension 7168; DeepEP README benchmark settings"`
	TopK       int        `toml:"topk" doc:"experts per token" src:"DOC" ref:"DeepSeek-V3 Technical Report: 8 routed experts per token"`
	Experts    int        `toml:"experts" doc:"routed experts, spread evenly over the GPUs (a multiple of every EP count, at most 64 per GPU)" src:"DOC" ref:"DeepSeek-V3 Technical Report: 256 routed experts per MoE layer"`
	TokensLL   int        `toml:"tokens_ll" doc:"tokens per GPU in low-latency mode (a decoding batch)" src:"DOC" ref:"DeepEP README: low-latency kernels benchmarked with 128 tokens per batch"`
	TokensHT   int        `toml:"tokens_ht" doc:"tokens per GPU in throughput mode (a training or prefill batch)" src:"DOC" ref:"DeepEP README: normal kernels benchmarked with 4096 tokens per batch"`
	Routing    string     `toml:"routing" doc:"routing table CSV (gpu,token,expert,weight; every token exactly topk distinct experts) for one EP count and one mode; empty: seeded uniform routing from run.seed" src:"RUN"`
	CommWGs    int        `toml:"comm_wgs" doc:"work-groups (SMs) of the GPU-initiated implementations' dispatch and combine kernels (DeepEP-style kernels take a fraction of the SMs)" src:"DEFAULT" ref:"no source"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare (default: every one with an MoE implementation that the preset's NIC runs)" src:"DEFAULT"`
	VerifyMax  unit.Bytes `toml:"verify_max" doc:"largest total buffer memory (all GPUs) a point runs functionally and verifies; larger points run payload-free (the verified column says so)" src:"DEFAULT"`
}

func defaultMoE() MoESpec {
	return MoESpec{EP: []int{8, 16, 32}, Modes: []string{workload.MoELowLatency, workload.MoEThroughput}, Hidden: 7168, TopK: 8, Experts: 256,
		TokensLL: 128, TokensHT: 4096, CommWGs: 24, Strategies: []string{"CPU", "HDN", "GDS", "GPUTN", "GNN_GIO", "GNN_GPURDMA"}, VerifyMax: 1 * unit.GiB}
}

func (m MoESpec) tokens(mode string) int {
	if mode == workload.MoEThroughput {
		return m.TokensHT
	}
	return m.TokensLL
}

func (m MoESpec) validate() error {
	var errs []error
	if len(m.EP) == 0 {
		errs = append(errs, fmt.Errorf("moe.ep is empty: must list GPU counts in [2, 4096]"))
	}
	for _, err := range []error{listedTwice("moe.ep", m.EP), listedTwice("moe.modes", m.Modes)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(m.Modes) == 0 {
		errs = append(errs, fmt.Errorf("moe.modes is empty: must list %s and/or %s", workload.MoELowLatency, workload.MoEThroughput))
	}
	for _, mode := range m.Modes {
		if mode != workload.MoELowLatency && mode != workload.MoEThroughput {
			errs = append(errs, fmt.Errorf("moe.modes contains %q: must be %s or %s", mode, workload.MoELowLatency, workload.MoEThroughput))
		}
	}
	if m.Hidden < 128 || m.Hidden%128 != 0 || m.Hidden > 65536 {
		errs = append(errs, fmt.Errorf("moe.hidden = %d: must be a multiple of 128 in [128, 65536]", m.Hidden))
	}
	tokensOK := true
	for _, t := range []struct {
		name string
		v    int
	}{{"moe.tokens_ll", m.TokensLL}, {"moe.tokens_ht", m.TokensHT}} {
		if t.v < 1 || t.v > 65536 {
			errs = append(errs, fmt.Errorf("%s = %d: must be in [1, 65536]", t.name, t.v))
			tokensOK = false
		}
	}
	if m.CommWGs < 1 || m.CommWGs > 1024 {
		errs = append(errs, fmt.Errorf("moe.comm_wgs = %d: must be in [1, 1024]", m.CommWGs))
	}
	if m.VerifyMax < 0 || m.VerifyMax > 64*unit.GiB {
		errs = append(errs, fmt.Errorf("moe.verify_max = %v: must be in [0, 64GiB]", m.VerifyMax))
	}
	// The expert and top-k counts against their own ranges first: the
	// shape's checks name moe.ep, and a line naming it is dropped when
	// an entry of moe.ep is bad too (cmd dropDerived), which would hide
	// a count bad on its own.
	expertsOK := m.Experts >= 2 && m.Experts <= 4096*64
	if !expertsOK {
		errs = append(errs, fmt.Errorf("moe.experts = %d: must be in [2, 262144] (a multiple of each EP GPU count with at most 64 experts per GPU)", m.Experts))
	}
	topkOK := m.TopK >= 1 && m.TopK <= 32
	if !topkOK {
		errs = append(errs, fmt.Errorf("moe.topk = %d: must be in [1, 32] (at most the expert count and 32)", m.TopK))
	}
	shapesOK := tokensOK && expertsOK && topkOK
	for _, ep := range m.EP {
		if ep < 2 || ep > 4096 {
			errs = append(errs, fmt.Errorf("moe.ep contains %d: must be in [2, 4096]", ep))
			shapesOK = false
			continue
		}
		if !tokensOK || !expertsOK || !topkOK {
			// Each shape would repeat a count's line ("moe tokens per
			// GPU"); the shapes are checked once the counts are valid.
			continue
		}
		for _, mode := range m.Modes {
			sh := workload.MoEShape{GPUs: ep, Experts: m.Experts, TopK: m.TopK, Tokens: m.tokens(mode)}
			if err := sh.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("moe.ep contains %d: %w", ep, err))
				shapesOK = false
				break
			}
		}
	}
	errs = append(errs, m.checkRouting(shapesOK))
	errs = append(errs, checkStrategies("moe.strategies", m.Strategies, workloadStrategies("moe")))
	return errors.Join(errs...)
}

// checkRouting checks moe.routing: its file readable whatever the other
// values (a missing file is bad on its own), then that it is for one EP
// count and one mode, then its content against that shape once the
// shape is valid (shapesOK; its own lines name the bad count).
func (m MoESpec) checkRouting(shapesOK bool) error {
	if m.Routing == "" {
		return nil
	}
	if _, err := ReadInputFile(m.Routing, MaxInputBytes); err != nil {
		return fmt.Errorf("moe.routing: %w", err)
	}
	if len(m.EP) != 1 || len(m.Modes) != 1 {
		return fmt.Errorf("moe.routing = %s: a routing table is for one EP count and one mode: moe.ep and moe.modes must list one value each (have %d and %d)", m.Routing, len(m.EP), len(m.Modes))
	}
	if !shapesOK || (m.Modes[0] != workload.MoELowLatency && m.Modes[0] != workload.MoEThroughput) {
		return nil
	}
	_, err := m.routing(m.EP[0], m.Modes[0], 0)
	return err
}

// routing returns the routing of one point: the table of moe.routing, or
// the seeded one.
func (m MoESpec) routing(ep int, mode string, seed uint64) (*workload.Routing, error) {
	sh := workload.MoEShape{GPUs: ep, Experts: m.Experts, TopK: m.TopK, Tokens: m.tokens(mode)}
	if m.Routing == "" {
		r, err := workload.SeededRouting(sh, seed)
		return &r, err
	}
	b, err := ReadInputFile(m.Routing, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("moe.routing: %w", err)
	}
	r, err := workload.ParseRouting(b, sh)
	if err != nil {
		return nil, fmt.Errorf("moe.routing %s: %w", m.Routing, err)
	}
	return &r, nil
}

// moeBytes is the memory the point's buffers take on all GPUs together
// (what a functional run allocates).
func (m MoESpec) moeBytes(ep int, mode string) unit.Bytes {
	T, H, K := int64(m.tokens(mode)), int64(m.Hidden), int64(m.entriesPerToken(ep, mode))
	entries := T * K // per GPU, at most
	per := T*(H+H/32) + entries*2*(H+H/32+64) + entries*2*2*H + T*H*4
	return unit.Bytes(per * int64(ep))
}

// entriesPerToken is the K of moeBytes's per-GPU entries, T·K: topk in
// low-latency mode (an entry per token and expert), min(topk, experts per
// GPU) in throughput mode.
func (m MoESpec) entriesPerToken(ep int, mode string) int {
	if mode == workload.MoELowLatency {
		return m.TopK
	}
	return min(m.TopK, m.Experts/max(1, ep))
}

type moePoint struct {
	EP            int      `json:"ep"`
	Nodes         int      `json:"nodes"`
	Mode          string   `json:"mode"`
	Tokens        int      `json:"tokens"`
	Strategy      string   `json:"strategy"`
	Impl          string   `json:"impl"`
	Dispatch      sim.Time `json:"dispatch"`
	Combine       sim.Time `json:"combine"`
	DispatchIntra float64  `json:"dispatch_intra"`
	DispatchInter float64  `json:"dispatch_inter"`
	CombineIntra  float64  `json:"combine_intra"`
	CombineInter  float64  `json:"combine_inter"`
	CommWGs       int      `json:"comm_wgs"`
	Functional    bool     `json:"functional"`
	Verified      bool     `json:"verified"`
	Events        uint64   `json:"events"`
}

func moePoints() Points { return Points{List: moeList, Simulate: moeSimulate, Assemble: moeAssemble} }

func runMoE(cfg Config, env Env) (*report.Result, error) { return RunPoints(moePoints(), cfg, env) }

func quickMoE(cfg *Config) {
	cfg.MoE.EP, cfg.MoE.Hidden, cfg.MoE.TokensLL, cfg.MoE.TokensHT = []int{8, 16}, 512, 16, 64
}

func moeList(cfg Config) ([]Point, error) {
	g := max(1, cfg.Node.GPUs)
	// A routing table enters the points' labels by its content, so a
	// study's cache never reuses results of an edited table.
	tag := ""
	if cfg.MoE.Routing != "" {
		b, err := ReadInputFile(cfg.MoE.Routing, MaxInputBytes)
		if err != nil {
			return nil, fmt.Errorf("moe.routing: %w", err)
		}
		tag = fmt.Sprintf(" routing=%x", sha256.Sum256(b))[:len(" routing=")+16]
	}
	var pts []Point
	for _, mode := range cfg.MoE.Modes {
		for _, ep := range cfg.MoE.EP {
			if ep%g != 0 {
				return nil, fmt.Errorf("moe.ep contains %d: must be whole nodes of node.gpus = %d GPUs", ep, g)
			}
			for _, s := range cfg.MoE.Strategies {
				pc := cfg
				pc.MoE.EP, pc.MoE.Modes, pc.MoE.Strategies = []int{ep}, []string{mode}, []string{s}
				if cfg.MoE.moeBytes(ep, mode) > cfg.MoE.VerifyMax {
					pc.Run.Functional = false
				}
				pts = append(pts, Point{Label: fmt.Sprintf("%s %s ep=%d%s", s, mode, ep, tag), Config: pc})
			}
		}
	}
	return pts, nil
}

func moeSimulate(p Point, env Env) ([]byte, error) {
	m := p.Config.MoE
	ep, mode := m.EP[0], m.Modes[0]
	rt, err := m.routing(ep, mode, p.Config.Run.Seed)
	if err != nil {
		return nil, err
	}
	c, s, err := newNodesRun(p, env, m.Strategies[0], ep/max(1, p.Config.Node.GPUs))
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	r, err := workload.MoE{Mode: mode, Hidden: m.Hidden, Routing: rt, CommWGs: m.CommWGs, WGSize: 256}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(moePoint{EP: ep, Nodes: ep / max(1, p.Config.Node.GPUs), Mode: mode, Tokens: m.tokens(mode), Strategy: string(s), Impl: r.Impl,
		Dispatch: r.Dispatch, Combine: r.Combine, DispatchIntra: r.DispatchIntra, DispatchInter: r.DispatchInter,
		CombineIntra: r.CombineIntra, CombineInter: r.CombineInter, CommWGs: r.CommWGs,
		Functional: p.Config.Run.Functional, Verified: r.Verified, Events: c.Engine.Events()})
}

// rateGBps is bytes moved in t as GB/s, unrounded: the CSV keeps full
// precision (three decimals left one digit for small inter-node shares)
// and the text table rounds to significant digits itself. A phase that
// moves no bytes of the class (moe's inter-node share on one node:
// nothing leaves it) or takes no simulated time (an allreduce of one
// GPU) has no rate: nil, printed "-", an empty CSV cell and null in JSON,
// not a 0 GB/s that reads as a stalled link (nor the +Inf or NaN of a
// division by zero). moe, halo3d and allreduce_hier share it.
func rateGBps(bytes float64, t sim.Time) any {
	if bytes <= 0 || t <= 0 {
		return nil
	}
	return bytes / t.Seconds() / 1e9
}

func moeAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[moePoint](raw)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "moe", Columns: []string{"mode", "ep", "nodes", "tokens", "strategy", "impl", "dispatch_us", "combine_us", "total_us",
		"dispatch_intra_GB/s", "dispatch_inter_GB/s", "combine_intra_GB/s", "combine_inter_GB/s", "comm_wgs", "verified"}}
	win := report.Table{Name: "winner", Columns: []string{"mode", "ep", "tokens", "fastest", "total_us", "runner_up", "runner_up_us", "fastest_dispatch", "fastest_combine"}}
	type key struct {
		mode string
		ep   int
	}
	groups := map[key][]moePoint{}
	var keys []key
	plot := &report.Plot{Title: fmt.Sprintf("MoE dispatch + combine (H=%d, top-%d, %d experts), preset %s", cfg.MoE.Hidden, cfg.MoE.TopK, cfg.MoE.Experts, cfg.Run.Preset),
		XLabel: "expert-parallel GPUs", YLabel: "dispatch + combine (us)", LogX: true}
	series := map[string]int{}
	for _, p := range points {
		v := "yes"
		switch {
		case !p.Functional:
			v = "payload-free"
		case !p.Verified:
			v = "no"
		}
		total := p.Dispatch + p.Combine
		t.Rows = append(t.Rows, []any{p.Mode, p.EP, p.Nodes, p.Tokens, p.Strategy, p.Impl, round3(p.Dispatch.Micros()), round3(p.Combine.Micros()), round3(total.Micros()),
			rateGBps(p.DispatchIntra, p.Dispatch), rateGBps(p.DispatchInter, p.Dispatch), rateGBps(p.CombineIntra, p.Combine), rateGBps(p.CombineInter, p.Combine), p.CommWGs, v})
		k := key{p.Mode, p.EP}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
		name := fmt.Sprintf("%s %s", p.Strategy, p.Mode)
		i, ok := series[name]
		if !ok {
			i = len(plot.Series)
			series[name] = i
			plot.Series = append(plot.Series, report.Series{Name: name})
		}
		plot.Series[i].X = append(plot.Series[i].X, float64(p.EP))
		plot.Series[i].Y = append(plot.Series[i].Y, total.Micros())
	}
	for _, k := range keys {
		ps := groups[k]
		best, second := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Dispatch + ps[i].Combine })
		bd, _ := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Dispatch })
		bc, _ := fastestTwo(len(ps), func(i int) sim.Time { return ps[i].Combine })
		row := []any{k.mode, k.ep, ps[best].Tokens, ps[best].Strategy, round3((ps[best].Dispatch + ps[best].Combine).Micros()), "", "", ps[bd].Strategy, ps[bc].Strategy}
		if second >= 0 {
			row[5], row[6] = ps[second].Strategy, round3((ps[second].Dispatch + ps[second].Combine).Micros())
		}
		win.Rows = append(win.Rows, row)
	}
	res := &report.Result{Experiment: "moe", Seed: cfg.Run.Seed, Tables: []report.Table{t, win}, Plot: plot}
	routing := "seeded uniform routing (run.seed)"
	if cfg.MoE.Routing != "" {
		routing = "routing table " + cfg.MoE.Routing
	}
	res.Notes = append(res.Notes,
		fmt.Sprintf("%s; H = %d, top-%d of %d experts (expert e on GPU e / (experts / ep)); tokens per GPU: %d low-latency, %d throughput", routing, cfg.MoE.Hidden, cfg.MoE.TopK, cfg.MoE.Experts, cfg.MoE.TokensLL, cfg.MoE.TokensHT),
		"dispatch: FP8 activation + float32 scale per 128 channels + a header per entry (low-latency: one entry per token and expert; throughput: one per token and GPU); combine: BF16 per entry, weighted on the expert's GPU, summed on the token's GPU; each phase timed from every GPU released together to the last GPU's end; the experts' compute is not simulated",
		"GB/s per GPU = the bytes a GPU sends on average to GPUs of its own node (intra) or of other nodes (inter) / the phase's time; empty (-) where the phase moves no bytes of that class (inter on one node) or takes no time: no rate, not 0 GB/s; comm_wgs = work-groups (SMs) a GPU's communication kernels occupy (0: the host packs and sends)",
		fmt.Sprintf("CPU packs on the host; HDN packs and reduces in kernels around GPU-aware MPI; GDS: the stream rings preposted puts and waits on flags; GPUTN: a persistent kernel of moe.comm_wgs = %d work-groups fires triggered puts; device shmem (GNN_GIO, GHN_*, COMPNET): persistent kernels of moe.comm_wgs work-groups put per entry (low-latency) or per GPU (throughput); GNN_GPURDMA: the same kernels post RDMA writes themselves on gnn.qps QPs per peer, work-groups taking turns on a shared QP", cfg.MoE.CommWGs),
		fmt.Sprintf("points whose buffers exceed moe.verify_max = %v on all GPUs run payload-free (verified = payload-free); the others are checked byte for byte at the experts and against the serial weighted sum", cfg.MoE.VerifyMax),
		"an intra-node transfer takes the strategy's path inside the node (device shmem: peer stores; GPU-aware MPI: the copy engine for rendezvous messages; eager MPI, streams, triggered puts and device verbs: the NIC path carried by the GPU fabric); the count exchange of a throughput-mode dispatch is not simulated (receive offsets come from the routing)")
	return res, nil
}
