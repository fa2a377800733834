package validate

// d4 judges the GIO slides' put-latency microbenchmarks on preset gio (the
// gio experiment).
func d4() []Evaluator {
	return []Evaluator{
		// Until an entry has its own evaluator: say so rather than guess.
		{Prefix: "d4-", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			return NotRunnable("no evaluator reads this figure from the gio experiment yet"), nil
		}},
		{Prefix: "d4-latency-order", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			cfg, err := c.Config(e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			cfg.GIOBench.Sizes = []int{8, 65536}
			cfg.GIOBench.WGs = []int{1}
			res, err := c.Run("gio", cfg)
			if err != nil {
				return Outcome{}, err
			}
			t, err := Table(res, "latency")
			if err != nil {
				return Outcome{}, err
			}
			lat := map[string]float64{}
			for _, r := range Rows(t, "size_B", "8") {
				lat[r["strategy"].(string)] = r.Float("latency_us")
			}
			cpu, gio, ikn, empty := lat["CPU"], lat["GNN_GIO"], lat["GHN_DGPU"], lat["HDN"]
			return Clauses(
				Check(cpu < gio, "8 B: CPU %.2f us < GIO %.2f us", cpu, gio),
				Check(gio < ikn, "8 B: GIO %.2f us < IKN %.2f us", gio, ikn),
				Check(ikn < empty, "8 B: IKN %.2f us < Inter-K-Empty %.2f us", ikn, empty),
			), nil
		}},
	}
}
