package validate

import "fmt"

// d2 judges GPUrdma's single-thread and placement microbenchmarks on
// preset gpurdma (the gpurdma experiment).
func d2() []Evaluator {
	placement := func(qp, cq string) func(c *Ctx, e Entry) (Outcome, error) {
		return func(c *Ctx, e Entry) (Outcome, error) {
			cfg, err := c.Config(e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			cfg.GPURdma.Sizes, cfg.GPURdma.Msgs = []int{8}, 32
			res, err := c.Run("gpurdma", cfg)
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
			return Num(row.Float("single_msg_latency_us"), "one naive 8 B write, post to CQE, QP in %s memory, CQ in %s memory", qp, cq), nil
		}
	}
	return []Evaluator{
		// Until an entry has its own evaluator: say so rather than guess.
		{Prefix: "d2-", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			return NotRunnable("no evaluator reads this figure from the gpurdma experiment yet"), nil
		}},
		{Prefix: "d2-table2-qpgpu-cqgpu", Eval: placement("gpu", "gpu")},
		{Prefix: "d2-table2-qpgpu-cqcpu", Eval: placement("gpu", "host")},
		{Prefix: "d2-table2-qpcpu-cqgpu", Eval: placement("host", "gpu")},
		{Prefix: "d2-table2-qpcpu-cqcpu", Eval: placement("host", "host")},
	}
}
