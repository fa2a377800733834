package exp

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// The GPUrdma and GPI experiments (the GPUrdma paper). Every run is one
// simulation of strategy GNN_GPURDMA on two nodes; the variants change
// only the gnn.* knobs.

// variantSpec applies a cumulative single-thread variant to s.
func variantSpec(s verbs.Spec, v string) verbs.Spec {
	s.WQEReuse, s.Pipeline, s.BatchDoorbell = false, false, false
	switch v {
	case "batch":
		s.BatchDoorbell = true
		fallthrough
	case "pipeline":
		s.Pipeline = true
		fallthrough
	case "reuse":
		s.WQEReuse = true
	case "cpu": // the CPU-driven baseline pipelines as the best GPU variant does
		s.Pipeline = true
	}
	return s
}

func gnnPresetNote(cfg Config) []string {
	if cfg.Run.Preset == "gpurdma" {
		return nil
	}
	return []string{fmt.Sprintf("preset %s: the documents' hardware is preset gpurdma (--preset gpurdma)", cfg.Run.Preset)}
}

func runGNN(cfg Config, env Env, label string, gnn verbs.Spec, job func(c gnnRun) error) error {
	cfg.GNN = gnn
	c, err := newRun(cfg, env, label, 2, strategy.GNNGPURDMA)
	if err != nil {
		return err
	}
	defer c.Engine.Close()
	return job(gnnRun{c: c, cfg: strategyConfig(cfg)})
}

type gnnRun struct {
	c   *cluster.Cluster
	cfg strategy.Config
}

// runGPURdma is the single-thread bandwidth/latency study with the naive
// path's step breakdown (§9.1) and the QP/CQ placement study (§9.3).
func runGPURdma(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := cfg.GPURdma
	type job struct {
		variant, qpLoc, cqLoc string
		size, msgs            int
	}
	var jobs []job
	for _, v := range g.Variants {
		for _, s := range g.Sizes {
			jobs = append(jobs, job{variant: v, size: s, msgs: g.Msgs, qpLoc: cfg.GNN.QPLoc, cqLoc: cfg.GNN.CQLoc})
		}
	}
	nSingle := len(jobs)
	locs := []string{"gpu", "host"}
	for _, q := range locs {
		for _, c := range locs {
			// Both runs use the best single-thread configuration, as the
			// paper's experiments after its single-thread section do ("in
			// all the following experiments we use the best pipelined
			// single-thread configuration"); for one message that is WQE
			// reuse (pipelining and fewer doorbells need several).
			jobs = append(jobs, job{variant: "batch", size: g.PlacementSize, msgs: g.Msgs, qpLoc: q, cqLoc: c},
				job{variant: "batch", size: 8, msgs: 1, qpLoc: q, cqLoc: c})
		}
	}
	results := make([]workload.RdmaBWResult, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		spec := variantSpec(cfg.GNN, j.variant)
		spec.QPLoc, spec.CQLoc = j.qpLoc, j.cqLoc
		label := fmt.Sprintf("%s %dB", j.variant, j.size)
		if i >= nSingle { // one trace process per placement, not four merged
			label = fmt.Sprintf("placement QP %s CQ %s %dB", j.qpLoc, j.cqLoc, j.size)
		}
		return runGNN(cfg, env, label, spec, func(r gnnRun) (err error) {
			results[i], err = workload.RdmaBW{Size: unit.Bytes(j.size), Msgs: j.msgs, Host: j.variant == "cpu"}.Run(r.c, strategy.GNNGPURDMA, r.cfg)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	single := report.Table{Name: "single-thread", Columns: []string{"variant", "size_B", "time", "bandwidth_MBps", "per_msg_us", "wqe_fields", "doorbells", "verified"}}
	plot := &report.Plot{Title: fmt.Sprintf("GPUrdma single-thread bandwidth, %d writes, preset %s", g.Msgs, cfg.Run.Preset),
		XLabel: "message size (B)", YLabel: "bandwidth (GB/s)", LogX: true}
	idx := map[string]int{}
	for i := range nSingle {
		j, r := jobs[i], results[i]
		single.Rows = append(single.Rows, []any{j.variant, j.size, r.Time, round3(r.GBps * 1000), round3(r.PerMsg.Micros()), r.Fields, r.Doorbells, r.Verified})
		k, ok := idx[j.variant]
		if !ok {
			plot.Series = append(plot.Series, report.Series{Name: j.variant})
			k = len(plot.Series) - 1
			idx[j.variant] = k
		}
		plot.Series[k].X = append(plot.Series[k].X, float64(j.size))
		plot.Series[k].Y = append(plot.Series[k].Y, r.GBps)
	}
	breakdown := report.Table{Name: "naive-breakdown", Columns: []string{"size_B", "step", "per_msg_us", "documents_us", "source"}}
	for i := range nSingle {
		j, r := jobs[i], results[i]
		if j.variant != "naive" || j.size != g.Sizes[0] {
			continue
		}
		breakdown.Rows = append(breakdown.Rows,
			[]any{j.size, "WQE writing", round3(r.WQE.Micros()), 1.6, "calibration (gnn.field_store × 8)"},
			[]any{j.size, "doorbell (record + fence + MMIO)", round3(r.Doorbell.Micros()), 1.5, "calibration (gnn.db_record + gnn.fence) + PCIe posted write"},
			[]any{j.size, "CQ polling", round3(r.Poll.Micros()), 3.1, "NIC fetch, payload read, wire, remote write, ack, CQE write, polls"},
			[]any{j.size, "total per message", round3(r.PerMsg.Micros()), 5.8, "measured loop time"})
	}
	placement := report.Table{Name: "placement", Columns: []string{"qp_loc", "cq_loc", "bandwidth_GBps", "size_B", "single_msg_latency_us"}}
	for i := nSingle; i < len(jobs); i += 2 {
		bw, lat := results[i], results[i+1]
		placement.Rows = append(placement.Rows, []any{jobs[i].qpLoc, jobs[i].cqLoc, round3(bw.GBps), jobs[i].size, round3(lat.Time.Micros())})
	}
	// The verbs memory of the initiator (the GPUrdma paper: QP and CQ buffers
	// are normally about 128 KB each; one work queue holds 1024 WQEs).
	memory := report.Table{Name: "memory", Columns: []string{"buffer", "entries", "entry_B", "bytes", "documents"},
		Units: map[string]string{"bytes": "B"}}
	if nSingle > 0 {
		r := results[0]
		memory.Rows = append(memory.Rows,
			[]any{"QP (send + receive ring, doorbell record)", r.QPDepth, 64, r.QPBytes, "about 128 KB"},
			[]any{"CQ (for one queue's completions)", r.CQBytes / 64, 64, r.CQBytes, "about 128 KB"})
	}
	res := &report.Result{Experiment: "gpurdma", Seed: cfg.Run.Seed, Tables: []report.Table{single, breakdown, placement, memory}, Plot: plot}
	res.Notes = append(gnnPresetNote(cfg),
		"variants are cumulative: reuse = +WQE reuse, pipeline = +pipelining, batch = +reduced doorbells (each a gnn.* flag)",
		"time = first WQE write to the last message's CQE, one GPU thread, writes into remote host memory",
		"placement: bandwidth and latency with every optimisation on (the paper's best single-thread configuration); latency = one 8 B write, post to CQE (WQE reuse: only the changing fields written)",
		"memory: a CQ asked for the queue's gnn.qp_depth completions gets a ring of the next power of two above that many 64 B slots, as the Mellanox verbs provider allocates it (rdma-core's mlx5 create_cq)")
	return res, nil
}

// runGPURdmaMultiQP is the multi-QP study (§9.2): QP per warp, QP per
// threadblock, and the host-driven comparison.
func runGPURdmaMultiQP(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := cfg.GPURdma
	type job struct {
		mode string
		size int
	}
	var jobs []job
	for _, m := range g.MultiModes {
		for _, s := range g.MultiSizes {
			jobs = append(jobs, job{m, s})
		}
	}
	results := make([]workload.RdmaMultiQPResult, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		spec := variantSpec(cfg.GNN, "batch")
		return runGNN(cfg, env, fmt.Sprintf("%s %dB", j.mode, j.size), spec, func(r gnnRun) (err error) {
			results[i], err = workload.RdmaMultiQP{Size: unit.Bytes(j.size), Msgs: g.MultiMsgs, Mode: j.mode, Warps: cfg.GNN.Warps}.Run(r.c, strategy.GNNGPURDMA, r.cfg)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "multi-qp", Columns: []string{"mode", "size_B", "qps", "message_rate", "bandwidth_MBps", "qp_bytes", "hca_engines_busy_max", "events", "verified"},
		Units: map[string]string{"message_rate": "Mmsg/s", "qp_bytes": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("GPUrdma multi-QP message rate, %d QPs, preset %s", cfg.GNN.Warps, cfg.Run.Preset),
		XLabel: "message size (B)", YLabel: "million messages/s", LogX: true}
	for i, j := range jobs {
		r := results[i]
		t.Rows = append(t.Rows, []any{j.mode, j.size, cfg.GNN.Warps, round3(r.MsgRate), round3(r.GBps * 1000), r.QPBytes, r.EnginesMax, r.Events, r.Verified})
		if len(plot.Series) == 0 || plot.Series[len(plot.Series)-1].Name != j.mode {
			plot.Series = append(plot.Series, report.Series{Name: j.mode})
		}
		s := &plot.Series[len(plot.Series)-1]
		s.X, s.Y = append(s.X, float64(j.size)), append(s.Y, r.MsgRate)
	}
	res := &report.Result{Experiment: "gpurdma_multiqp", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(gnnPresetNote(cfg),
		"warp: 1 TB × gnn.warps warps, one QP each, one thread polls the shared CQ; block: gnn.warps TBs of one warp, collaborative post and poll; cpu: one host thread drives the same QPs in host memory",
		"every optimisation (reuse, pipelining, batched doorbells) is on; qp_bytes = send + receive ring + doorbell record + the QP's share of the CQ")
	return res, nil
}

// runGPI is the GPI study: the latency ping-pong (§9.4), the throughput
// ping-pong (§9.5) and the matrix-vector stream (§9.6), each against its
// CPU-driven baseline.
func runGPI(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := cfg.GPI
	type job struct {
		kind, worker string
		overlap      bool
		batch        int
	}
	jobs := []job{{"pingpong", "gpu", false, 0}, {"pingpong", "cpu", false, 0},
		{"throughput", "cpu", false, 0}, {"throughput", "gpu", false, 0}, {"throughput", "gpu", true, 0}}
	for _, b := range g.MatVecBatches {
		jobs = append(jobs, job{"matvec", "persistent", false, b}, job{"matvec", "relaunch", false, b})
	}
	type out struct {
		pp workload.GPIPingPongResult
		tp workload.GPIThroughputResult
		mv workload.GPIMatVecResult
	}
	results := make([]out, len(jobs))
	err := forEach(cfg, env, len(jobs), func(i int) error {
		j := jobs[i]
		return runGNN(cfg, env, j.kind+" "+j.worker, cfg.GNN, func(r gnnRun) (err error) {
			switch j.kind {
			case "pingpong":
				results[i].pp, err = workload.GPIPingPong{Iters: g.PingPongIters, Worker: j.worker}.Run(r.c, strategy.GNNGPURDMA, r.cfg)
			case "throughput":
				results[i].tp, err = workload.GPIThroughput{Size: unit.Bytes(g.ThroughputSize), Queues: g.Queues, Rounds: g.Rounds, Worker: j.worker,
					Overlap: j.overlap, Validate: j.worker == "gpu" && (j.overlap || cfg.GNN.P2PWriteReorder)}.Run(r.c, strategy.GNNGPURDMA, r.cfg)
			case "matvec":
				results[i].mv, err = workload.GPIMatVec{Batch: unit.Bytes(j.batch), Batches: max(1, g.MatVecTotal/j.batch), Blocks: g.Blocks,
					Threads: g.Threads, Worker: j.worker, Validate: cfg.GNN.P2PWriteReorder}.Run(r.c, strategy.GNNGPURDMA, r.cfg)
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	pp := report.Table{Name: "pingpong", Columns: []string{"worker", "round_trip_us", "verified"}}
	tp := report.Table{Name: "throughput", Columns: []string{"worker", "overlap", "bytes", "rounds", "one_direction", "both_directions", "revalidations", "verified"},
		Units: map[string]string{"bytes": "B", "one_direction": "Gbit/s", "both_directions": "Gbit/s"}}
	mv := report.Table{Name: "matvec", Columns: []string{"batch_B", "worker", "batches", "vectors", "vector_rate", "matrix_copy_us", "compute_us", "messages_us", "revalidations", "verified"},
		Units: map[string]string{"vector_rate": "M/s"}}
	plot := &report.Plot{Title: fmt.Sprintf("Matrix-vector stream, preset %s", cfg.Run.Preset), XLabel: "batch (KB)", YLabel: "million vectors/s", LogX: true}
	idx := map[string]int{}
	for i, j := range jobs {
		r := results[i]
		switch j.kind {
		case "pingpong":
			pp.Rows = append(pp.Rows, []any{j.worker, round3(r.pp.RoundTrip.Micros()), r.pp.Verified})
		case "throughput":
			tp.Rows = append(tp.Rows, []any{j.worker, j.overlap, g.ThroughputSize, g.Rounds, round3(r.tp.Gbps), round3(r.tp.GbpsBoth), r.tp.Revalidate, r.tp.Verified})
		case "matvec":
			mv.Rows = append(mv.Rows, []any{j.batch, j.worker, max(1, g.MatVecTotal/j.batch), max(1, g.MatVecTotal/j.batch) * (j.batch / 128), round3(r.mv.MVecs),
				round3(r.mv.MatrixCopy.Micros()), round3(r.mv.Compute.Micros()), round3(r.mv.Messages.Micros()), r.mv.Revalidate, r.mv.Verified})
			k, ok := idx[j.worker]
			if !ok {
				plot.Series = append(plot.Series, report.Series{Name: j.worker})
				k = len(plot.Series) - 1
				idx[j.worker] = k
			}
			plot.Series[k].X = append(plot.Series[k].X, float64(j.batch)/1000)
			plot.Series[k].Y = append(plot.Series[k].Y, r.mv.MVecs)
		}
	}
	res := &report.Result{Experiment: "gpi", Seed: cfg.Run.Seed, Tables: []report.Table{pp, tp, mv}, Plot: plot}
	res.Notes = append(gnnPresetNote(cfg),
		"ping-pong: the CPU master notifies, the worker (one GPU thread block, or a CPU thread) waits and notifies back; round trip measured on the master",
		fmt.Sprintf("throughput: %d rounds (gpi.rounds; 10 is the specification's run length, --set gpi.rounds=2 gives the same one-direction rates within 2 %% in a third of the throughput part's time)", g.Rounds),
		"throughput: the master write_notifies the buffer, the worker returns it over gpi.queues queues, gpi.rounds times; overlap = one notification per slice, each block starts on its own slice (after checking its contents, as the paper's enhanced version does) and the master resends a slice as soon as it is back",
		"throughput metric: bytes the master sent × rounds / time, one direction (never above the link rate); the both-directions column is twice that, the sum of the two directions",
		"matvec: persistent = one kernel serving every batch with GPI calls; relaunch = the worker CPU launches a kernel per batch and sends its results",
		"matvec breakdown (block 0): matrix_copy = copies of the 32×32 matrix into shared memory (once, or per batch when relaunching), compute = the products (and CRC checks), messages = the rest of the run (waiting for batches, sending results, kernel launches)",
		"matvec vectors: 128 B each (32 floats, as the paper's text says), so a run of gpi.matvec_total bytes carries gpi.matvec_total / 128 vectors (the paper's 2.4 GB would be 18.75 M); the paper's totals (2.4 GB for 75 M vectors) imply 32 B: the two statements disagree")
	return res, nil
}

// The report study's sizes of the GNN experiments: Default keeps every
// figure's shape in reasonable time (messages up to 256 KiB, an 18 MB
// throughput ping-pong, 8 MB of matrix-vector stream per batch size);
// Quick runs in a second.
func defaultGPURdmaSize(cfg *Config) {
	cfg.GPURdma.Sizes = []int{2, 32, 512, 8 << 10, 64 << 10, 256 << 10}
}

func quickGPURdmaSize(cfg *Config) {
	cfg.GPURdma.Sizes, cfg.GPURdma.Msgs = []int{8, 64 << 10}, 32
}

func defaultMultiQPSize(cfg *Config) { cfg.GPURdma.MultiMsgs = 256 }

func quickMultiQPSize(cfg *Config) {
	cfg.GPURdma.MultiSizes, cfg.GPURdma.MultiMsgs, cfg.GNN.Warps = []int{64}, 32, 4
}

func defaultGPISize(cfg *Config) {
	cfg.GPI.ThroughputSize, cfg.GPI.MatVecTotal = 18_000_000, 8_000_000
}

func quickGPISize(cfg *Config) {
	cfg.GPI.PingPongIters, cfg.GPI.ThroughputSize, cfg.GPI.Queues = 5, 300_000, 3
	cfg.GPI.MatVecBatches, cfg.GPI.MatVecTotal = []int{60_000}, 120_000
}
