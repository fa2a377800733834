package validate

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// d2 judges GPUrdma's single-thread and placement microbenchmarks on
// preset gpurdma (the gpurdma experiment). Every entry reads one run of
// the experiment: the variants at 8 B, 32 KB and 1 MB (1024 writes each;
// 64 at quick sizes) and the placement study.
func d2() []Evaluator {
	run := func(c *Ctx, e Entry) (*report.Result, error) {
		cfg, err := c.Config(e.Preset)
		if err != nil {
			return nil, err
		}
		cfg.GPURdma.Sizes = []int{8, 32768, 1 << 20}
		cfg.GPURdma.Variants = []string{"naive", "reuse", "pipeline", "batch", "cpu"}
		if c.Quick {
			cfg.GPURdma.Msgs = 64
		}
		return c.Run("gpurdma", cfg)
	}
	single := func(c *Ctx, e Entry, variant string, size int) (Row, error) {
		res, err := run(c, e)
		if err != nil {
			return nil, err
		}
		t, err := Table(res, "single-thread")
		if err != nil {
			return nil, err
		}
		return One(t, "variant", variant, "size_B", fmt.Sprint(size))
	}
	gbps := func(variant string, size int, what string) func(c *Ctx, e Entry) (Outcome, error) {
		return func(c *Ctx, e Entry) (Outcome, error) {
			r, err := single(c, e, variant, size)
			if err != nil {
				return Outcome{}, err
			}
			return Num(r.Float("bandwidth_MBps")*8/1000, "%s, %d B messages, one GPU thread", what, size), nil
		}
	}
	placement := func(qp, cq string) func(c *Ctx, e Entry) (Outcome, error) {
		return func(c *Ctx, e Entry) (Outcome, error) {
			res, err := run(c, e)
			if err != nil {
				return Outcome{}, err
			}
			t, err := Table(res, "placement")
			if err != nil {
				return Outcome{}, err
			}
			row, err := One(t, "qp_loc", qp, "cq_loc", cq)
			if err != nil {
				return Outcome{}, fmt.Errorf("placement QP %s CQ %s: %w", qp, cq, err)
			}
			return Num(row.Float("single_msg_latency_us"), "one 8 B write with the best single-thread configuration (WQE reuse), post to CQE, QP in %s memory, CQ in %s memory", qp, cq), nil
		}
	}
	return []Evaluator{
		{Prefix: "d2-", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			return NotRunnable("no evaluator reads this figure from the gpurdma experiment yet"), nil
		}},
		{Prefix: "d2-fig3-naive-peak", Eval: gbps("naive", 1<<20, "naive version")},
		{Prefix: "d2-fig3-naive-small", Eval: gbps("naive", 32768, "naive version")},
		{Prefix: "d2-fig3-pipelined", Eval: gbps("pipeline", 32768, "pipelined (WQE reuse + pipelining)")},
		{Prefix: "d2-fig3-wqe-reuse", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			r, err := single(c, e, "reuse", 8)
			if err != nil {
				return Outcome{}, err
			}
			n, err := single(c, e, "naive", 8)
			if err != nil {
				return Outcome{}, err
			}
			return Num(r.Float("per_msg_us"), "8 B, per message, WQE reuse (naive %.2f us: reuse saves %.2f us)",
				n.Float("per_msg_us"), n.Float("per_msg_us")-r.Float("per_msg_us")), nil
		}},
		{Prefix: "d2-fig3-doorbells", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			var pipe, batch [2]float64
			for i, size := range []int{8, 32768} {
				p, err := single(c, e, "pipeline", size)
				if err != nil {
					return Outcome{}, err
				}
				b, err := single(c, e, "batch", size)
				if err != nil {
					return Outcome{}, err
				}
				pipe[i], batch[i] = p.Float("per_msg_us"), b.Float("per_msg_us")
			}
			return Clauses(
				Check(batch[0] < pipe[0], "8 B: one doorbell per batch %.2f us per message < a doorbell per WQE %.2f us", batch[0], pipe[0]),
				Check(batch[1] >= pipe[1], "32 KB: one doorbell per batch %.2f us per message ≥ a doorbell per WQE %.2f us (the HCA idles until the batch's doorbell)", batch[1], pipe[1]),
			), nil
		}},
		{Prefix: "d2-sec4.1-vs-cpu", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			best, name := 0.0, ""
			for _, v := range []string{"pipeline", "batch"} {
				r, err := single(c, e, v, 32768)
				if err != nil {
					return Outcome{}, err
				}
				if bw := r.Float("bandwidth_MBps"); bw > best {
					best, name = bw, v
				}
			}
			cpu, err := single(c, e, "cpu", 32768)
			if err != nil {
				return Outcome{}, err
			}
			return Num(best/cpu.Float("bandwidth_MBps"), "32 KB: best GPU thread (%s) %.0f MB/s, CPU-driven (one doorbell per post, pipelined) %.0f MB/s",
				name, best, cpu.Float("bandwidth_MBps")), nil
		}},
		{Prefix: "d2-table2-qpgpu-cqgpu", Eval: placement("gpu", "gpu")},
		{Prefix: "d2-table2-qpgpu-cqcpu", Eval: placement("gpu", "host")},
		{Prefix: "d2-table2-qpcpu-cqgpu", Eval: placement("host", "gpu")},
		{Prefix: "d2-table2-qpcpu-cqcpu", Eval: placement("host", "host")},
		{Prefix: "d2-fig5-placement-bw", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			res, err := run(c, e)
			if err != nil {
				return Outcome{}, err
			}
			t, err := Table(res, "placement")
			if err != nil {
				return Outcome{}, err
			}
			bw, lat := map[string]float64{}, map[string]float64{}
			for _, r := range Rows(t) {
				k := fmt.Sprint(r["qp_loc"], "/", r["cq_loc"])
				bw[k], lat[k] = r.Float("bandwidth_GBps"), r.Float("single_msg_latency_us")
			}
			best := true
			for k, l := range lat {
				if k != "gpu/gpu" && l <= lat["gpu/gpu"] {
					best = false
				}
			}
			return Clauses(
				Check(bw["host/gpu"] > bw["gpu/gpu"], "bandwidth QP host/CQ GPU %.3f GB/s > both in GPU memory %.3f GB/s", bw["host/gpu"], bw["gpu/gpu"]),
				Check(best, "latency: both in GPU memory %.2f us is the lowest (gpu/host %.2f, host/gpu %.2f, host/host %.2f us)",
					lat["gpu/gpu"], lat["gpu/host"], lat["host/gpu"], lat["host/host"]),
			), nil
		}},
	}
}
