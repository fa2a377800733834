package validate

import "fmt"

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
		{Prefix: "d4-wg-scaling", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			cfg, err := c.Config(e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			cfg.GIOBench.Sizes = []int{8}
			cfg.GIOBench.Strategies = []string{"CPU", "HDN", "GHN_DGPU", "GNN_GIO"}
			// As ROC_SHMEM's put tester times it: each work-group's own
			// loop after its set-up (the experiment's default).
			cfg.GIOBench.Timing = "per-wg"
			res, err := c.Run("gio", cfg)
			if err != nil {
				return Outcome{}, err
			}
			t, err := Table(res, "wg-scaling")
			if err != nil {
				return Outcome{}, err
			}
			g := cfg.GIOBench
			lat := func(size int) (first, last float64, grows bool) {
				rows := Rows(t, "strategy", "GNN_GIO", "size_B", fmt.Sprint(size))
				grows = len(rows) > 1
				for i, r := range rows {
					v := r.Float("latency_us")
					if i == 0 {
						first = v
					} else if v <= last {
						grows = false
					}
					last = v
				}
				return first, last, grows
			}
			s1, sN, _ := lat(g.Small)
			l1, lN, grows := lat(g.Large)
			n := g.WGs[len(g.WGs)-1]
			return Clauses(
				Check(sN <= 1.15*s1, "%d B (unsaturated, per work-group): %d WGs %.2f us within 15%% of 1 WG %.2f us", g.Small, n, sN, s1),
				Check(grows && lN > 1.15*l1, "%d B (saturated, per work-group): latency grows with every WG count, 1 WG %.2f us to %d WGs %.2f us", g.Large, l1, n, lN),
			), nil
		}},
	}
}
