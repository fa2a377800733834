package validate

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

// d1 judges the sPIN datatype-processing paper's microbenchmarks on presets
// spin and pulp, from the ddt_* experiments at the set-ups the entries
// state (4 MiB vectors, 16 HPUs where the figure states it, 32 otherwise;
// quick runs use 1 MiB vectors and fewer points: smaller messages get
// one checkpoint per packet, where RO-CP and RW-CP coincide).
func d1() []Evaluator {
	return []Evaluator{
		{Prefix: "d1-fig2-put-overhead", Eval: d1Put},
		{Prefix: "d1-fig8-specialized-64B", Eval: d1Fig8Specialized},
		{Prefix: "d1-fig8-shapes", Eval: d1Fig8Shapes},
		{Prefix: "d1-fig8-host-wins-4B", Eval: d1Fig8Host},
		{Prefix: "d1-fig9c-pulp-256B", Eval: d1Fig9c},
		{Prefix: "d1-fig10-pulp-vs-arm", Eval: d1Fig10},
		{Prefix: "d1-fig11-ipc", Eval: d1Fig11},
		{Prefix: "d1-fig12-breakdown", Eval: d1Fig12Breakdown},
		{Prefix: "d1-fig12-rocp-catchup", Eval: d1Fig12Catchup},
		{Prefix: "d1-fig12-rwcp-vs-specialized", Eval: d1Fig12RWCP},
		{Prefix: "d1-fig13a-hpus", Eval: d1Fig13a},
		{Prefix: "d1-fig13b-memory-vs-block", Eval: d1Fig13b},
		{Prefix: "d1-fig13c-memory-vs-hpus", Eval: d1Fig13c},
		{Prefix: "d1-fig14-dma-queue", Eval: d1Fig14},
	}
}

// d1Run runs experiment on the entry's preset with the ddt set-up of the
// figures: 4 MiB vectors (256 KiB quick), the stated 16 HPUs of the
// vector, breakdown, DMA-queue and memory-vs-block studies (the preset's
// default), and edit for the rest.
func d1Run(c *Ctx, e Entry, experiment string, edit func(*exp.Config)) (*report.Result, error) {
	cfg, err := c.Config(e.Preset)
	if err != nil {
		return nil, err
	}
	// The breakdown keeps the figures' message size at quick sizes too:
	// the checkpoint interval, and with it RO-CP's catch-up, depends on
	// the packets per HPU (constraint 1), and the run is cheap (≈ 0.6
	// CPU-s for γ = 1 and 16).
	if c.Quick && experiment != "ddt_breakdown" {
		cfg.DDTBench.Size = unit.MiB
	}
	if c.Quick {
		cfg.DDTBench.Blocks = []int{4, 64, 2048}
		cfg.DDTBench.Gammas = []int{1, 16}
		cfg.DDTBench.HPUs = []int{1, 2, 16}
		cfg.DDTPULP.BWBlocks = []int{256, 4096}
		cfg.DDTPULP.BWTotal = 2 * unit.MiB
		cfg.DDTPULP.Size = 256 * unit.KiB
		cfg.DDTPULP.Blocks = []int{16, 256, 2048}
	}
	if edit != nil {
		edit(&cfg)
	}
	return c.Run(experiment, cfg)
}

// series returns col of the rows matching, keyed by the key column.
func series(t report.Table, key, col string, match ...string) map[float64]float64 {
	out := map[float64]float64{}
	for _, r := range Rows(t, match...) {
		out[r.Float(key)] = r.Float(col)
	}
	return out
}

// keys returns the sorted keys of m.
func keys(m map[float64]float64) []float64 {
	var ks []float64
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func d1Put(c *Ctx, e Entry) (Outcome, error) {
	res, err := d1Run(c, e, "ddt_put", nil)
	if err != nil {
		return Outcome{}, err
	}
	t, err := Table(res, "put_latency")
	if err != nil {
		return Outcome{}, err
	}
	plain, err := One(t, "path", "plain DMA")
	if err != nil {
		return Outcome{}, err
	}
	spin, err := One(t, "path", "sPIN handler")
	if err != nil {
		return Outcome{}, err
	}
	p, s := plain.Float("window_ns"), spin.Float("window_ns")
	return Num(s/p, "1-byte put, data leaving the initiator to data in host memory: %.0f ns with sPIN, %.0f ns without (doorbell to event: %.0f / %.0f ns)",
		s, p, spin.Float("doorbell_to_event_ns"), plain.Float("doorbell_to_event_ns")), nil
}

// d1Vector is the Fig 8 sweep: GBps per method by block size.
func d1Vector(c *Ctx, e Entry) (map[string]map[float64]float64, error) {
	res, err := d1Run(c, e, "ddt_vector", nil)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "vector")
	if err != nil {
		return nil, err
	}
	out := map[string]map[float64]float64{}
	for _, m := range []string{"host", "iovec", "specialized", "hpu-local", "ro-cp", "rw-cp"} {
		out[m] = series(t, "block", "bandwidth_GBps", "method", m)
	}
	return out, nil
}

// lineRate is the best throughput any method reaches in the sweep: the
// link's payload rate once nothing else limits.
func lineRate(v map[string]map[float64]float64) float64 {
	best := 0.0
	for _, s := range v {
		for _, x := range s {
			best = max(best, x)
		}
	}
	return best
}

func d1Fig8Specialized(c *Ctx, e Entry) (Outcome, error) {
	v, err := d1Vector(c, e)
	if err != nil {
		return Outcome{}, err
	}
	lr, s := lineRate(v), v["specialized"][64]
	return Clauses(Check(s >= 0.95*lr, "specialized at 64 B: %.2f GB/s, ≥ 95%% of the line rate reached in the sweep (%.2f GB/s)", s, lr)), nil
}

func d1Fig8Shapes(c *Ctx, e Entry) (Outcome, error) {
	v, err := d1Vector(c, e)
	if err != nil {
		return Outcome{}, err
	}
	bs := keys(v["rw-cp"])
	lo, hi := bs[0], bs[len(bs)-1]
	var cs []Clause
	// RO-CP: every handler copies its checkpoint, so it stays below RW-CP
	// wherever RW-CP is not at line rate.
	lr := lineRate(v)
	capped := true
	for _, b := range bs {
		if v["rw-cp"][b] < 0.95*lr && v["ro-cp"][b] >= v["rw-cp"][b] {
			capped = false
		}
	}
	cs = append(cs, Check(capped, "RO-CP below RW-CP wherever RW-CP is below line rate (at %g B: %.2f vs %.2f GB/s)", lo, v["ro-cp"][lo], v["rw-cp"][lo]))
	// HPU-local's catch-up penalty, relative to RW-CP, shrinks as blocks grow.
	pl, ph := v["rw-cp"][lo]/v["hpu-local"][lo], v["rw-cp"][hi]/v["hpu-local"][hi]
	cs = append(cs, Check(pl > ph, "HPU-local's penalty (RW-CP / HPU-local throughput) %.2f at %g B shrinks to %.2f at %g B", pl, lo, ph, hi))
	// Every handler slows down as blocks shrink.
	for _, m := range []string{"specialized", "hpu-local", "ro-cp", "rw-cp"} {
		s := v[m]
		mono := true
		for i := 1; i < len(bs); i++ {
			if s[bs[i]] < 0.97*s[bs[i-1]] {
				mono = false
			}
		}
		cs = append(cs, Check(mono && s[lo] < s[hi], "%s slows down as blocks shrink: %.2f GB/s at %g B, %.2f at %g B", m, s[lo], lo, s[hi], hi))
	}
	return Clauses(cs...), nil
}

func d1Fig8Host(c *Ctx, e Entry) (Outcome, error) {
	v, err := d1Vector(c, e)
	if err != nil {
		return Outcome{}, err
	}
	h := v["host"][4]
	var cs []Clause
	for _, m := range []string{"specialized", "hpu-local", "ro-cp", "rw-cp"} {
		cs = append(cs, Check(v[m][4] < h, "%s at 4 B: %.2f GB/s, below host unpack's %.2f GB/s (host core simulated, cold caches)", m, v[m][4], h))
	}
	return Clauses(cs...), nil
}

func d1Fig9c(c *Ctx, e Entry) (Outcome, error) {
	res, err := d1Run(c, e, "ddt_pulp_bw", nil)
	if err != nil {
		return Outcome{}, err
	}
	t, err := Table(res, "pulp_bandwidth")
	if err != nil {
		return Outcome{}, err
	}
	s := series(t, "block", "bandwidth_GBps", "model", "pulp")
	at := s[256] * 8
	above := true
	for _, b := range keys(s) {
		if b > 256 && s[b]*8 <= 200 {
			above = false
		}
	}
	o := Num(at, "PULP bandwidth test at 256 B: %.1f Gbit/s", at)
	o.Clauses = []Clause{Check(above, "every larger block above the 200 Gbit/s line rate")}
	return o, nil
}

// d1Kernels is the Fig 10/11 sweep: a column by block for pulp and arm.
func d1Kernels(c *Ctx, e Entry, col string) (pulp, arm map[float64]float64, err error) {
	res, err := d1Run(c, e, "ddt_pulp_kernels", nil)
	if err != nil {
		return nil, nil, err
	}
	t, err := Table(res, "pulp_kernels")
	if err != nil {
		return nil, nil, err
	}
	return series(t, "block", col, "model", "pulp"), series(t, "block", col, "model", "arm"), nil
}

func d1Fig10(c *Ctx, e Entry) (Outcome, error) {
	p, a, err := d1Kernels(c, e, "bandwidth_GBps")
	if err != nil {
		return Outcome{}, err
	}
	const line = 25.0 // 200 Gbit/s
	var cs []Clause
	for _, b := range keys(p) {
		switch {
		case b < 256:
			cs = append(cs, Check(p[b] < a[b], "%g B: PULP %.2f GB/s below ARM %.2f", b, p[b], a[b]))
		case b > 256:
			cs = append(cs, Check(p[b] >= line, "%g B: PULP %.2f GB/s at line rate (25 GB/s)", b, p[b]))
		}
	}
	return Clauses(cs...), nil
}

func d1Fig11(c *Ctx, e Entry) (Outcome, error) {
	p, _, err := d1Kernels(c, e, "ipc_median")
	if err != nil {
		return Outcome{}, err
	}
	bs := keys(p)
	lo, hi := bs[0], bs[len(bs)-1]
	return Clauses(Check(p[lo] < p[hi], "PULP handler IPC %.3f at %g B, %.3f at %g B", p[lo], lo, p[hi], hi)), nil
}

// phase is one method's mean handler time split at one γ.
type phase struct{ init, setup, proc, total float64 }

func d1Breakdown(c *Ctx, e Entry) (map[string]map[float64]phase, error) {
	res, err := d1Run(c, e, "ddt_breakdown", nil)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "breakdown")
	if err != nil {
		return nil, err
	}
	out := map[string]map[float64]phase{}
	for _, r := range Rows(t) {
		m := fmt.Sprint(r["method"])
		if out[m] == nil {
			out[m] = map[float64]phase{}
		}
		out[m][r.Float("gamma")] = phase{r.Float("init_ns"), r.Float("setup_ns"), r.Float("proc_ns"), r.Float("total_ns")}
	}
	return out, nil
}

func gammas(m map[float64]phase) []float64 {
	var gs []float64
	for g := range m {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	return gs
}

func d1Fig12Breakdown(c *Ctx, e Entry) (Outcome, error) {
	b, err := d1Breakdown(c, e)
	if err != nil {
		return Outcome{}, err
	}
	var cs []Clause
	for _, g := range gammas(b["hpu-local"]) {
		h := b["hpu-local"][g]
		cs = append(cs, Check(h.setup > h.init && h.setup > h.proc, "γ = %g: HPU-local setup %.0f ns dominates (init %.0f, processing %.0f)", g, h.setup, h.init, h.proc))
	}
	for _, g := range gammas(b["ro-cp"]) {
		r, w := b["ro-cp"][g], b["rw-cp"][g]
		cs = append(cs, Check(r.init > w.init && r.setup > w.setup, "γ = %g: RO-CP init %.0f ns and setup %.0f ns above RW-CP's %.0f and %.0f", g, r.init, r.setup, w.init, w.setup))
	}
	return Clauses(cs...), nil
}

func d1Fig12Catchup(c *Ctx, e Entry) (Outcome, error) {
	b, err := d1Breakdown(c, e)
	if err != nil {
		return Outcome{}, err
	}
	r, ok := b["ro-cp"][16]
	if !ok || r.total <= 0 {
		return Outcome{}, fmt.Errorf("ddt_breakdown has no RO-CP row at γ = 16")
	}
	return Num(r.setup/r.total, "RO-CP at γ = 16: setup (incl. catch-up) %.0f of %.0f ns per handler", r.setup, r.total), nil
}

func d1Fig12RWCP(c *Ctx, e Entry) (Outcome, error) {
	b, err := d1Breakdown(c, e)
	if err != nil {
		return Outcome{}, err
	}
	gs := gammas(b["rw-cp"])
	logSum := 0.0
	for _, g := range gs {
		logSum += math.Log(b["rw-cp"][g].total / b["specialized"][g].total)
	}
	v := math.Exp(logSum / float64(len(gs)))
	return Num(v, "geometric mean over γ = %v of RW-CP / specialized mean handler time", gs), nil
}

func d1Fig13a(c *Ctx, e Entry) (Outcome, error) {
	res, err := d1Run(c, e, "ddt_hpus", nil)
	if err != nil {
		return Outcome{}, err
	}
	t, err := Table(res, "hpus")
	if err != nil {
		return Outcome{}, err
	}
	g := map[string]map[float64]float64{}
	best := 0.0
	for _, m := range []string{"specialized", "hpu-local", "ro-cp", "rw-cp"} {
		g[m] = series(t, "hpus", "bandwidth_GBps", "method", m)
		for _, x := range g[m] {
			best = max(best, x)
		}
	}
	s2 := g["specialized"][2]
	cs := []Clause{Check(s2 >= 0.95*best, "specialized with 2 HPUs: %.2f GB/s, ≥ 95%% of the best rate reached (%.2f)", s2, best)}
	for _, m := range []string{"rw-cp", "hpu-local", "ro-cp"} {
		cs = append(cs, Check(g[m][2] < s2, "%s with 2 HPUs: %.2f GB/s, limited below specialized", m, g[m][2]))
	}
	cs = append(cs, Check(g["ro-cp"][2] <= g["hpu-local"][2] && g["ro-cp"][2] <= g["rw-cp"][2],
		"RO-CP (copy plus catch-up) the slowest with 2 HPUs: %.2f GB/s", g["ro-cp"][2]))
	return Clauses(cs...), nil
}

// d1Memory returns the NIC memory table's totals of one sweep by x.
func d1Memory(c *Ctx, e Entry, sweep string) (map[string]map[float64]float64, error) {
	res, err := d1Run(c, e, "ddt_memory", nil)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "nic_memory")
	if err != nil {
		return nil, err
	}
	out := map[string]map[float64]float64{}
	for _, m := range []string{"specialized", "hpu-local", "ro-cp", "rw-cp"} {
		out[m] = series(t, "x", "total", "sweep", sweep, "method", m)
	}
	return out, nil
}

func d1Fig13b(c *Ctx, e Entry) (Outcome, error) {
	v, err := d1Memory(c, e, "block")
	if err != nil {
		return Outcome{}, err
	}
	var cs []Clause
	for _, m := range []string{"hpu-local", "specialized"} {
		ks := keys(v[m])
		lo, hi := v[m][ks[0]], v[m][ks[len(ks)-1]]
		cs = append(cs, Check(lo == hi, "%s constant over block size: %.0f B at %g B, %.0f B at %g B", m, lo, ks[0], hi, ks[len(ks)-1]))
	}
	for _, m := range []string{"ro-cp", "rw-cp"} {
		ks := keys(v[m])
		lo, hi := v[m][ks[0]], v[m][ks[len(ks)-1]]
		cs = append(cs, Check(hi > lo, "%s grows with block size: %.0f B at %g B, %.0f B at %g B", m, lo, ks[0], hi, ks[len(ks)-1]))
	}
	return Clauses(cs...), nil
}

func d1Fig13c(c *Ctx, e Entry) (Outcome, error) {
	v, err := d1Memory(c, e, "hpus")
	if err != nil {
		return Outcome{}, err
	}
	var cs []Clause
	for _, m := range []string{"hpu-local", "rw-cp"} {
		ks := keys(v[m])
		lo, hi := v[m][ks[0]], v[m][ks[len(ks)-1]]
		cs = append(cs, Check(hi > lo, "%s grows with the HPUs: %.0f B with %g, %.0f B with %g", m, lo, ks[0], hi, ks[len(ks)-1]))
	}
	return Clauses(cs...), nil
}

func d1Fig14(c *Ctx, e Entry) (Outcome, error) {
	res, err := d1Run(c, e, "ddt_dmaqueue", nil)
	if err != nil {
		return Outcome{}, err
	}
	t, err := Table(res, "dma_queue")
	if err != nil {
		return Outcome{}, err
	}
	most, where := 0.0, ""
	for _, r := range Rows(t) {
		if x := r.Float("dma_fifo_max"); x > most {
			most, where = x, fmt.Sprintf("%v at γ = %v", r["method"], r["gamma"])
		}
	}
	return Num(most, "largest DMA write FIFO occupancy, %s (16 HPUs)", where), nil
}
