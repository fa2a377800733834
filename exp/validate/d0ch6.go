package validate

import (
	"github.com/gpunetsim/gpunetsim/exp/report"
)

// d0ch6 judges the GPU-TN chapter's latency decomposition (the
// dissertation's Fig 6.5): the latency experiment on preset gputn, 2 nodes,
// a 64 B copy kernel then a send of its output, under HDN, GDS and GPU-TN.
func d0ch6() []Evaluator {
	ratio := func(num, den string) func(c *Ctx, e Entry) (Outcome, error) {
		return func(c *Ctx, e Entry) (Outcome, error) {
			l, err := latencyAt(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			return Num(l.end[num]/l.end[den], "end to end: %s %.3f us, %s %.3f us", num, l.end[num], den, l.end[den]), nil
		}
	}
	return []Evaluator{
		{Prefix: "d0-fig6.5-gds-vs-hdn", Eval: ratio("GDS", "HDN")},
		{Prefix: "d0-fig6.5-gputn-vs-gds", Eval: ratio("GPUTN", "GDS")},
		{Prefix: "d0-fig6.5-gputn-vs-hdn", Eval: ratio("GPUTN", "HDN")},
		{Prefix: "d0-fig6.5-kernel-longer", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			l, err := latencyAt(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			g, d := l.phase["GPUTN"]["kernel body"], l.phase["GDS"]["kernel body"]
			return Clauses(Check(g > d, "GPU-TN kernel body %.3f us > GDS kernel body %.3f us", g, d),
				// "Slightly": the trigger store is a small part of the
				// kernel, not a second kernel.
				Check(g < 2*d, "GPU-TN kernel body %.3f us less than twice GDS's %.3f us (slightly longer)", g, d)), nil
		}},
		{Prefix: "d0-fig6.5-early-arrival", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			l, err := latencyAt(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			arrive, done := l.end["GPUTN"], l.kernelEnd["GPUTN"]
			return Clauses(Check(arrive < done, "GPU-TN: target observes the data at %.3f us, before the initiator's kernel ends (teardown included) at %.3f us", arrive, done)), nil
		}},
	}
}

// latency is the Fig 6.5 decomposition per strategy, in us.
type latency struct {
	end       map[string]float64
	kernelEnd map[string]float64            // end of the initiator's kernel teardown
	phase     map[string]map[string]float64 // duration per phase
}

func latencyAt(c *Ctx, preset string) (latency, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return latency{}, err
	}
	cfg.Latency.Size = 64
	cfg.Latency.Strategies = []string{"HDN", "GDS", "GPUTN"}
	res, err := c.Run("latency", cfg)
	if err != nil {
		return latency{}, err
	}
	return readLatency(res)
}

func readLatency(res *report.Result) (latency, error) {
	sum, err := Table(res, "end-to-end")
	if err != nil {
		return latency{}, err
	}
	tl, err := Table(res, "timeline")
	if err != nil {
		return latency{}, err
	}
	l := latency{end: map[string]float64{}, kernelEnd: map[string]float64{}, phase: map[string]map[string]float64{}}
	for _, s := range []string{"HDN", "GDS", "GPUTN"} {
		row, err := One(sum, "strategy", s)
		if err != nil {
			return latency{}, err
		}
		l.end[s] = row.Micros("end_to_end")
		l.phase[s] = map[string]float64{}
		for _, seg := range Rows(tl, "strategy", s) {
			l.phase[s][seg["phase"].(string)] += seg.Micros("duration")
			if seg["phase"] == "kernel teardown" && seg["node"] == "initiator" {
				l.kernelEnd[s] = seg.Micros("end")
			}
		}
	}
	return l, nil
}
