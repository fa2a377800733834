package validate

// d1 judges the sPIN datatype-processing paper's microbenchmarks on presets
// spin and pulp.
func d1() []Evaluator {
	return []Evaluator{
		// Until an entry has its own evaluator: say so rather than guess.
		{Prefix: "d1-", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			return NotRunnable("no evaluator reads this figure from the ddt_* experiments yet"), nil
		}},
		{Prefix: "d1-fig2-put-overhead", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			cfg, err := c.Config(e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			res, err := c.Run("ddt_put", cfg)
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
			spin, err := One(t, "path", "sPIN handlers")
			if err != nil {
				return Outcome{}, err
			}
			p, s := plain.Float("latency_ns"), spin.Float("latency_ns")
			return Num(s/p, "1-byte put: %.0f ns with sPIN, %.0f ns without", s, p), nil
		}},
	}
}
