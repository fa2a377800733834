package exp

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/datatype/apps"
	"github.com/gpunetsim/gpunetsim/exp/report"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/workload"
)

// ddtJob is one receive of the datatype studies.
type ddtJob struct {
	label  string
	method spinmodel.Method
	typ    *datatype.Committed
	count  int
	hpus   int // 0: the configuration's spin.hpus
	trace  bool
}

// ddtOut is a job's result; NA marks a method that does not apply.
type ddtOut struct {
	workload.DDTResult
	NA bool
}

// runDDTJobs runs the jobs, one simulation each, on the run's workers.
func runDDTJobs(cfg Config, env Env, jobs []ddtJob) ([]ddtOut, error) {
	out := make([]ddtOut, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		pc := cfg
		if j.hpus > 0 {
			pc.Spin.HPUs = j.hpus
		}
		c, err := newRun(pc, env, j.label, 2, "")
		if err != nil {
			return err
		}
		defer c.Engine.Close()
		r, err := workload.DDTUnpack{Type: j.typ, Count: j.count, TraceDMA: j.trace}.RunMethod(c, j.method, pc.DDT)
		if errors.Is(err, spinmodel.ErrNotApplicable) {
			out[i].NA = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", j.label, err)
		}
		out[i].DDTResult = r
		if pc.Run.Functional && !r.Verified {
			return fmt.Errorf("%s: %w: the receive buffer differs from datatype.Unpack of the same stream", j.label, ErrVerification)
		}
		return nil
	})
	return out, err
}

// vectorType is the §11.1 receive type: size/bl blocks of bl bytes at
// stride 2·bl.
func vectorType(size, bl int) (*datatype.Committed, error) {
	t, err := datatype.Vector(size/bl, bl, 2*bl, datatype.Byte())
	if err != nil {
		return nil, err
	}
	return t.Commit(), nil
}

func gbps(bytes int, t sim.Duration) float64 {
	if t <= 0 {
		return 0
	}
	return round3(float64(bytes) / float64(t) * 1e3)
}

// verifiedNote summarizes verification of the results.
func verifiedNote(cfg Config, outs []ddtOut) string {
	if !cfg.Run.Functional {
		return "run.functional = false: bytes were not checked"
	}
	n := 0
	for _, o := range outs {
		if o.NA {
			continue
		}
		if !o.Verified {
			return "functional: SOME receive buffers DIFFER from datatype.Unpack"
		}
		n++
	}
	return fmt.Sprintf("functional: all %d receive buffers equal datatype.Unpack of the same stream (sentinel-filled, so untouched bytes were checked too)", n)
}

func presetNote(cfg Config) string {
	return fmt.Sprintf("preset %s, %d HPUs at %v, link %v, PCIe %v",
		cfg.Run.Preset, cfg.Spin.HPUs, cfg.Spin.HPUFreq, cfg.Link.Bandwidth, cfg.PCIe.Bandwidth)
}

// statedHPUs is the HPU count of the studies the paper runs at a stated
// count (ddtbench.hpus_stated) on its ARM HPUs, else spin.hpus (always on
// PULP, whose cores are the design's).
func statedHPUs(cfg Config) int {
	if cfg.DDTBench.Stated > 0 && cfg.Spin.Model != hwspin.ModelPULP {
		return cfg.DDTBench.Stated
	}
	return cfg.Spin.HPUs
}

// statedNote names the HPU count a study ran with.
func statedNote(cfg Config) string {
	return fmt.Sprintf("%d HPUs (ddtbench.hpus_stated on ARM HPUs: the paper states this count for the figure; PULP uses its cores), preset %s at %v, link %v, PCIe %v",
		statedHPUs(cfg), cfg.Run.Preset, cfg.Spin.HPUFreq, cfg.Link.Bandwidth, cfg.PCIe.Bandwidth)
}

// rtrNote says what the receive times measure.
const rtrNote = "time = RTR send to last byte placed (the SC'19 paper)"

// runDDTVector is the SC'19 paper: vector unpack throughput vs block size.
func runDDTVector(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms, _ := cfg.DDTBench.methods()
	size := int(cfg.DDTBench.Size)
	var jobs []ddtJob
	for _, bl := range cfg.DDTBench.Blocks {
		ty, err := vectorType(size, bl)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			jobs = append(jobs, ddtJob{label: fmt.Sprintf("%v b=%d", m, bl), method: m, typ: ty, count: 1, hpus: statedHPUs(cfg)})
		}
	}
	outs, err := runDDTJobs(cfg, env, jobs)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "vector", Columns: []string{"method", "block", "gamma", "time", "bandwidth_GBps", "interval", "dma_writes", "dma_fifo_max", "stalls", "dram_bytes", "pcie_up", "host_unpack", "verified"},
		Units: map[string]string{"block": "B", "interval": "B", "dram_bytes": "B", "pcie_up": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("Vector unpack throughput, %v message, stride 2×block", cfg.DDTBench.Size),
		XLabel: "block size (B)", YLabel: "throughput (GB/s)", LogX: true}
	series := map[spinmodel.Method]*report.Series{}
	for _, m := range ms {
		series[m] = &report.Series{Name: m.String()}
	}
	for i, j := range jobs {
		o := outs[i]
		bl := cfg.DDTBench.Blocks[i/len(ms)]
		tp := gbps(size, o.Time())
		t.Rows = append(t.Rows, []any{j.method.String(), bl, round3(o.Plan.Gamma), o.Time(), tp, o.Plan.Interval.Interval,
			o.Stats.DMAWrites, o.Stats.DMAFIFOMax, o.Stats.Stalls, o.Traffic.DRAM, o.Traffic.PCIeUp, o.Unpack, o.Verified})
		s := series[j.method]
		s.X, s.Y = append(s.X, float64(bl)), append(s.Y, tp)
	}
	for _, m := range ms {
		plot.Series = append(plot.Series, *series[m])
	}
	res := &report.Result{Experiment: "ddt_vector", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, statedNote(cfg), rtrNote, verifiedNote(cfg, outs))
	return res, nil
}

// gammaBlocks returns the vector block size of γ blocks per packet.
func gammaBlocks(cfg Config, g int) int { return int(cfg.Link.Payload) / g }

// runDDTBreakdown is the SC'19 paper: payload-handler time split into
// init, setup (catch-up included) and processing, per method and γ.
func runDDTBreakdown(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms := handlerMethods(cfg)
	size := int(cfg.DDTBench.Size)
	var jobs []ddtJob
	for _, g := range cfg.DDTBench.Gammas {
		ty, err := vectorType(size, gammaBlocks(cfg, g))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			jobs = append(jobs, ddtJob{label: fmt.Sprintf("%v γ=%d", m, g), method: m, typ: ty, count: 1, hpus: statedHPUs(cfg)})
		}
	}
	outs, err := runDDTJobs(cfg, env, jobs)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "breakdown", Columns: []string{"method", "gamma", "handlers", "init_ns", "setup_ns", "proc_ns", "total_ns", "catchup_blocks", "checkpoint_copies"}}
	plot := &report.Plot{Title: "Payload handler time per packet (mean)", XLabel: "time (ns)"}
	for i, j := range jobs {
		b := outs[i].Break
		n := float64(max(b.Handlers, 1))
		in, se, pr := float64(b.Init)/n/1e3, float64(b.Setup)/n/1e3, float64(b.Proc)/n/1e3
		g := cfg.DDTBench.Gammas[i/len(ms)]
		t.Rows = append(t.Rows, []any{j.method.String(), g, b.Handlers, round3(in), round3(se), round3(pr), round3(in + se + pr), b.CatchUpBlocks, b.CheckpointCopies})
		row := fmt.Sprintf("%s γ=%d", j.method, g)
		plot.Bars = append(plot.Bars, report.Bar{Row: row, Phase: "init", Start: 0, End: in},
			report.Bar{Row: row, Phase: "setup", Start: in, End: in + se},
			report.Bar{Row: row, Phase: "processing", Start: in + se, End: in + se + pr})
	}
	res := &report.Result{Experiment: "ddt_breakdown", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, statedNote(cfg), rtrNote, verifiedNote(cfg, outs),
		"init = invocation (+ checkpoint copy); setup = processing-function start + catch-up; processing = blocks found + DMA issue")
	return res, nil
}

// handlerMethods are the configured methods that run handlers.
func handlerMethods(cfg Config) []spinmodel.Method {
	ms, _ := cfg.DDTBench.methods()
	return slices.DeleteFunc(ms, func(m spinmodel.Method) bool { return !m.Handlers() })
}

// runDDTHPUs is the SC'19 paper: throughput vs HPUs at γ = 1.
func runDDTHPUs(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms := handlerMethods(cfg)
	size := int(cfg.DDTBench.Size)
	ty, err := vectorType(size, int(cfg.Link.Payload))
	if err != nil {
		return nil, err
	}
	var jobs []ddtJob
	for _, h := range cfg.DDTBench.HPUs {
		for _, m := range ms {
			jobs = append(jobs, ddtJob{label: fmt.Sprintf("%v P=%d", m, h), method: m, typ: ty, count: 1, hpus: h})
		}
	}
	outs, err := runDDTJobs(cfg, env, jobs)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "hpus", Columns: []string{"method", "hpus", "time", "bandwidth_GBps", "handler_busy", "verified"}}
	plot := &report.Plot{Title: fmt.Sprintf("HPU scaling, %v vector of %v blocks (γ = 1)", cfg.DDTBench.Size, cfg.Link.Payload),
		XLabel: "HPUs", YLabel: "throughput (GB/s)", LogX: true}
	series := map[spinmodel.Method]*report.Series{}
	for _, m := range ms {
		series[m] = &report.Series{Name: m.String()}
	}
	for i, j := range jobs {
		o := outs[i]
		tp := gbps(size, o.Time())
		t.Rows = append(t.Rows, []any{j.method.String(), j.hpus, o.Time(), tp, o.Stats.HandlerBusy, o.Verified})
		series[j.method].X = append(series[j.method].X, float64(j.hpus))
		series[j.method].Y = append(series[j.method].Y, tp)
	}
	for _, m := range ms {
		plot.Series = append(plot.Series, *series[m])
	}
	res := &report.Result{Experiment: "ddt_hpus", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, presetNote(cfg), rtrNote, verifiedNote(cfg, outs))
	return res, nil
}

// planEnv is the plan environment of the configuration with P HPUs.
func planEnv(cfg Config, hpus int) spinmodel.Env {
	sp := cfg.Spin
	sp.HPUs = hpus
	ser := float64(cfg.Link.Payload+cfg.Link.Header) * cfg.Link.Bandwidth.PerByte()
	return spinmodel.Env{Spin: sp, Host: cfg.Spec.CPU, Costs: cfg.DDT, K: int(cfg.Link.Payload), TPkt: sim.Duration(ser + 0.5)}
}

// runDDTMemory is the SC'19 paper: NIC memory occupancy by component,
// (a) vs block size at spin.hpus, (b) vs HPUs at γ = 16. The plans are
// what the host builds at post time; no message is simulated.
func runDDTMemory(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms := handlerMethods(cfg)
	size := int(cfg.DDTBench.Size)
	t := report.Table{Name: "nic_memory", Columns: []string{"sweep", "x", "method", "interval", "dataloops", "segments", "checkpoints", "descriptors", "total"},
		Units: map[string]string{"interval": "B", "dataloops": "B", "segments": "B", "checkpoints": "B", "descriptors": "B", "total": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("NIC memory occupancy, %v vector, %d HPUs", cfg.DDTBench.Size, statedHPUs(cfg)),
		XLabel: "block size (B)", YLabel: "NIC memory (KiB)", LogX: true}
	series := map[spinmodel.Method]*report.Series{}
	for _, m := range ms {
		series[m] = &report.Series{Name: m.String()}
	}
	add := func(sweep string, x, bl, hpus int) error {
		ty, err := vectorType(size, bl)
		if err != nil {
			return err
		}
		for _, m := range ms {
			p, err := spinmodel.NewPlan(m, ty, 1, planEnv(cfg, hpus))
			if err != nil {
				t.Rows = append(t.Rows, []any{sweep, x, m.String(), 0, "-", "-", "-", "-", err.Error()})
				continue
			}
			u := p.Mem
			t.Rows = append(t.Rows, []any{sweep, x, m.String(), p.Interval.Interval, int64(u.Dataloops), int64(u.Segments), int64(u.Checkpoints), int64(u.Descriptors), int64(u.Total())})
			if sweep == "block" {
				series[m].X = append(series[m].X, float64(x))
				series[m].Y = append(series[m].Y, round3(float64(u.Total())/1024))
			}
		}
		return nil
	}
	for _, bl := range cfg.DDTBench.Blocks {
		if err := add("block", bl, bl, statedHPUs(cfg)); err != nil {
			return nil, err
		}
	}
	for _, h := range cfg.DDTBench.HPUs {
		if err := add("hpus", h, gammaBlocks(cfg, 16), h); err != nil {
			return nil, err
		}
	}
	for _, m := range ms {
		plot.Series = append(plot.Series, *series[m])
	}
	res := &report.Result{Experiment: "ddt_memory", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, presetNote(cfg),
		fmt.Sprintf("bytes; checkpoints and segments at C = %v; RW-CP master copies %v; interval from the SC'19 paper with ε = %v", cfg.DDT.Checkpoint, cfg.DDT.MasterCopies, cfg.DDT.Epsilon),
		fmt.Sprintf("sweep block uses %d HPUs (ddtbench.hpus_stated); sweep hpus uses γ = 16 (128 B blocks)", statedHPUs(cfg)))
	return res, nil
}

// runDDTDMAQueue is the SC'19 paper: maximum DMA write FIFO occupancy
// per method and γ, and the occupancy over time at the largest γ.
func runDDTDMAQueue(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms, _ := cfg.DDTBench.methods()
	ms = slices.DeleteFunc(ms, func(m spinmodel.Method) bool { return m == spinmodel.HostUnpack })
	size := int(cfg.DDTBench.Size)
	gs := cfg.DDTBench.Gammas
	gTrace := slices.Max(gs)
	var jobs []ddtJob
	for _, g := range gs {
		ty, err := vectorType(size, gammaBlocks(cfg, g))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			jobs = append(jobs, ddtJob{label: fmt.Sprintf("%v γ=%d", m, g), method: m, typ: ty, count: 1, trace: g == gTrace, hpus: statedHPUs(cfg)})
		}
	}
	outs, err := runDDTJobs(cfg, env, jobs)
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "dma_queue", Columns: []string{"method", "gamma", "dma_fifo_max", "dma_writes", "time", "host_checkpoint_create"}}
	plot := &report.Plot{Title: fmt.Sprintf("DMA write FIFO occupancy, γ = %d", gTrace), XLabel: "time since RTR (us)", YLabel: "requests"}
	for i, j := range jobs {
		o := outs[i]
		g := gs[i/len(ms)]
		// Only RO-CP and RW-CP create checkpoints on the host before the
		// receive; the others' post-time work is the structure copy alone.
		var create sim.Duration
		if o.Plan.Method == spinmodel.ROCP || o.Plan.Method == spinmodel.RWCP {
			create = o.Plan.HostCreate + o.Post
		}
		t.Rows = append(t.Rows, []any{j.method.String(), g, o.Stats.DMAFIFOMax, o.Stats.DMAWrites, o.Time(), create})
		if !j.trace {
			continue
		}
		s := report.Series{Name: j.method.String()}
		if o.Plan.Method == spinmodel.ROCP || o.Plan.Method == spinmodel.RWCP {
			// The host's checkpoint creation and copy, before the RTR.
			c := -(o.Plan.HostCreate + o.Post).Micros()
			s.X, s.Y = append(s.X, c, 0), append(s.Y, 0, 0)
		}
		for _, p := range thin(o.Trace, 2000) {
			s.X = append(s.X, round3((p.Time - o.Start).Micros()))
			s.Y = append(s.Y, float64(p.Occ))
		}
		plot.Series = append(plot.Series, s)
	}
	res := &report.Result{Experiment: "ddt_dmaqueue", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, statedNote(cfg), rtrNote, verifiedNote(cfg, outs),
		"RO-CP/RW-CP traces start at minus the host checkpoint creation + copy time (occupancy 0 meanwhile); the FIFO is unbounded")
	return res, nil
}

// thin keeps at most about n samples of a trace, each the maximum of
// its window, so peaks survive.
func thin(tr []hwspin.OccSample, n int) []hwspin.OccSample {
	if len(tr) <= n {
		return tr
	}
	w := (len(tr) + n - 1) / n
	var out []hwspin.OccSample
	for i := 0; i < len(tr); i += w {
		best := tr[i]
		for _, x := range tr[i:min(i+w, len(tr))] {
			if x.Occ > best.Occ {
				best = x
			}
		}
		out = append(out, best)
	}
	return out
}

// appCases returns the configured application datatypes.
func appCases(cfg Config) ([]apps.Case, error) {
	if cfg.DDTBench.Apps == "fixtures" {
		m, err := apps.FixtureCases()
		if err != nil {
			return nil, err
		}
		var out []apps.Case
		for _, name := range slices.Sorted(maps.Keys(m)) {
			c := m[name]
			c.Name = name
			out = append(out, c)
		}
		return out, nil
	}
	return apps.AllCases()
}

// runDDTApps is the SC'19 paper: per application datatype, the
// speedup of RW-CP, specialized and iovec over host unpack, the bytes moved
// to the NIC, main-memory traffic, and checkpoint amortization.
func runDDTApps(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cases, err := appCases(cfg)
	if err != nil {
		return nil, err
	}
	ms := []spinmodel.Method{spinmodel.HostUnpack, spinmodel.RWCP, spinmodel.Specialized, spinmodel.Iovec}
	var jobs []ddtJob
	for _, c := range cases {
		ty := c.Type.Commit()
		for _, m := range ms {
			jobs = append(jobs, ddtJob{label: c.Name + " " + m.String(), method: m, typ: ty, count: c.Count})
		}
	}
	outs, err := runDDTJobs(cfg, env, jobs)
	if err != nil {
		return nil, err
	}
	sp := report.Table{Name: "speedup", Columns: []string{"app", "S", "gamma", "T_host", "speedup_rwcp", "speedup_specialized", "speedup_iovec",
		"to_nic_rwcp", "to_nic_specialized", "to_nic_iovec", "verified"},
		Units: map[string]string{"to_nic_rwcp": "B", "to_nic_specialized": "B", "to_nic_iovec": "B"}}
	tr := report.Table{Name: "memory_traffic", Columns: []string{"app", "method", "dram_bytes", "dma_write", "host_dram_read", "host_dram_write",
		"l3_fill", "l2_fill", "l1_fill", "pcie_up", "nic_mem", "host_over_method"},
		Units: map[string]string{"dram_bytes": "B", "dma_write": "B", "host_dram_read": "B", "host_dram_write": "B",
			"l3_fill": "lines", "l2_fill": "lines", "l1_fill": "lines", "pcie_up": "B", "nic_mem": "B"}}
	am := report.Table{Name: "amortization", Columns: []string{"app", "T_create", "T_host", "T_rwcp", "reuses"}}
	plot := &report.Plot{Title: "Application datatypes: speedup over host unpack", XLabel: "input (table order)", YLabel: "speedup", Categorical: true}
	ser := []report.Series{{Name: "rw-cp"}, {Name: "specialized"}, {Name: "iovec"}}
	var logRatio float64
	for i, c := range cases {
		o := outs[i*len(ms) : (i+1)*len(ms)]
		host, rw, spec, iov := o[0], o[1], o[2], o[3]
		th := host.Time()
		speed := func(x ddtOut) any {
			if x.NA {
				return "-"
			}
			return round3(float64(th) / float64(x.Time()))
		}
		moved := func(x ddtOut) any {
			if x.NA {
				return "-"
			}
			return int64(x.Plan.Mem.Moved())
		}
		ver := host.Verified && rw.Verified && iov.Verified && (spec.NA || spec.Verified)
		sp.Rows = append(sp.Rows, []any{c.Name, host.Plan.Size, round3(host.Plan.Gamma), th, speed(rw), speed(spec), speed(iov),
			moved(rw), moved(spec), moved(iov), ver})
		for k, x := range []ddtOut{rw, spec, iov} {
			if !x.NA {
				ser[k].X = append(ser[k].X, float64(i))
				ser[k].Y = append(ser[k].Y, round3(float64(th)/float64(x.Time())))
			}
		}
		// Traffic as the memory system counted it: the DRAM server's bytes
		// (the NIC's writes plus the host's reads and write-backs), the
		// host unpack's fills per level, PCIe and NIC memory.
		hd := host.Traffic.DRAM
		for k, x := range []ddtOut{host, rw, spec, iov} {
			if x.NA {
				continue
			}
			f := x.Traffic
			ratio := any("-")
			if f.DRAM > 0 {
				ratio = round3(float64(hd) / float64(f.DRAM))
			}
			tr.Rows = append(tr.Rows, []any{c.Name, ms[k].String(), f.DRAM, f.DMAWrite, f.Host.DRAMRead, f.Host.DRAMWrite,
				f.Host.Fill[2], f.Host.Fill[1], f.Host.Fill[0], f.PCIeUp, f.NICMem, ratio})
		}
		if rw.Traffic.DRAM > 0 {
			logRatio += math.Log(float64(hd) / float64(rw.Traffic.DRAM))
		}
		create := rw.Plan.HostCreate + rw.Post
		reuses := any("-") // never: RW-CP is not faster than the host
		if gain := th - rw.Time(); gain > 0 {
			reuses = int64((create + gain - 1) / gain)
		}
		am.Rows = append(am.Rows, []any{c.Name, create, th, rw.Time(), reuses})
	}
	if len(cases) > 0 {
		tr.Rows = append(tr.Rows, []any{"geomean", "host/rw-cp", "", "", "", "", "", "", "", "", "", round3(math.Exp(logRatio / float64(len(cases))))})
	}
	plot.Series = ser
	res := &report.Result{Experiment: "ddt_apps", Seed: cfg.Run.Seed, Tables: []report.Table{sp, tr, am}, Plot: plot}
	res.Notes = append(res.Notes, presetNote(cfg), rtrNote, verifiedNote(cfg, outs),
		"speedup = T_host / T_method; '-' = specialized handlers do not apply (not a single level of blocks)",
		"memory_traffic: bytes counted by the memory system over the receive; dram_bytes = the node's DRAM server (NIC writes in 64 B bursts per line touched, host reads, write-backs incl. the lines the unpack leaves dirty); l*_fill = lines brought into each host cache level; host_over_method = host dram_bytes / the method's",
		"reuses = ceil(T_create / (T_host − T_rwcp)), T_create = host checkpoint creation + copy to the NIC (the SC'19 paper); '-' = never (RW-CP is not faster than host unpack)")
	return res, nil
}

// runDDTPut is the SC'19 paper: a 1-byte put with and without a sPIN
// context (header, payload and completion handlers).
func runDDTPut(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var r [2]spinmodel.PutResult
	for i, with := range []bool{false, true} {
		c, err := newRun(cfg, env, fmt.Sprintf("spin=%v", with), 2, "")
		if err != nil {
			return nil, err
		}
		r[i], err = spinmodel.PutLatency(c, with)
		c.Engine.Close()
		if err != nil {
			return nil, err
		}
		if !r[i].Verified {
			return nil, fmt.Errorf("ddt_put spin=%v: %w: the target does not hold the byte put", with, ErrVerification)
		}
	}
	t := report.Table{Name: "put_latency", Columns: []string{"path", "window", "window_ns", "window_ratio", "doorbell_to_event", "doorbell_to_event_ns", "overhead_ns", "verified"}}
	ns := func(d sim.Duration) float64 { return round3(float64(d) / 1e3) }
	for i, name := range []string{"plain DMA", "sPIN handler"} {
		t.Rows = append(t.Rows, []any{name, r[i].Window, ns(r[i].Window), round3(float64(r[i].Window) / float64(max(r[0].Window, 1))),
			r[i].DoorbellToEvent, ns(r[i].DoorbellToEvent), ns(r[i].Window - r[0].Window), r[i].Verified})
	}
	plot := &report.Plot{Title: "1-byte put: data leaving the initiator to data in target host memory", XLabel: "latency (ns)"}
	for i, name := range []string{"plain DMA", "sPIN handler"} {
		plot.Bars = append(plot.Bars, report.Bar{Row: name, Phase: "window", Start: 0, End: ns(r[i].Window)})
	}
	res := &report.Result{Experiment: "ddt_put", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes, presetNote(cfg),
		"window = from the put's data leaving the initiator (its last payload byte left the buffer: SEND count) to the byte in the target's host memory, the sPIN datatype paper's window; doorbell_to_event = initiator doorbell to the target's PUT event",
		"the sPIN path runs one payload handler on the single packet, which issues one DMA write: it adds the packet copy into NIC memory, HER scheduling and the DMA issue (the SC'19 paper); overhead [ns] is over the window")
	return res, nil
}
