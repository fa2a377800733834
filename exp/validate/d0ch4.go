package validate

import (
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

// d0ch4 judges the XTQ chapter's remote task spawn (the dissertation's
// Fig 4.6): the taskspawn experiment on preset xtq, 2 nodes, a memcpy
// active message as a GPU kernel (CPU, HSA, XTQ), 64 B and 4 KiB payloads.
func d0ch4() []Evaluator {
	return []Evaluator{
		{Prefix: "d0-fig4.6-xtq-64B", Eval: func(c *Ctx, e Entry) (Outcome, error) { return spawnEndToEnd(c, e, "XTQ", 64) }},
		{Prefix: "d0-fig4.6-hsa-64B", Eval: func(c *Ctx, e Entry) (Outcome, error) { return spawnEndToEnd(c, e, "HSA", 64) }},
		{Prefix: "d0-fig4.6-enqueue-saving", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			s, err := spawnAt(c, e.Preset, 64)
			if err != nil {
				return Outcome{}, err
			}
			return Num(1000*(s.enqueue["HSA"]-s.enqueue["XTQ"]), "task enqueue + kernel launch at the target: HSA %.0f ns, XTQ %.0f ns",
				1000*s.enqueue["HSA"], 1000*s.enqueue["XTQ"]), nil
		}},
		{Prefix: "d0-fig4.6-transfer-longer", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			var cs []Clause
			for _, size := range []unit.Bytes{64, 4 * unit.KiB} {
				s, err := spawnAt(c, e.Preset, size)
				if err != nil {
					return Outcome{}, err
				}
				x, h := s.transfer["XTQ"], s.transfer["HSA"]
				cs = append(cs, Check(x > h, "%v: XTQ data transfer %.3f us > HSA %.3f us", size, x, h))
			}
			return Clauses(cs...), nil
		}},
		{Prefix: "d0-fig4.6-cpu-fastest", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			var cs []Clause
			for _, size := range []unit.Bytes{64, 4 * unit.KiB} {
				s, err := spawnAt(c, e.Preset, size)
				if err != nil {
					return Outcome{}, err
				}
				cpu := s.end["CPU"]
				for _, g := range []string{"HSA", "XTQ"} {
					// "Significantly": by more than the verdict rule's
					// tolerance.
					cs = append(cs, Check(cpu < (1-Tolerance)*s.end[g], "%v: CPU %.3f us at least 15%% below %s %.3f us", size, cpu, g, s.end[g]))
				}
			}
			return Clauses(cs...), nil
		}},
		{Prefix: "d0-fig4.6-4KB", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			small, err := spawnAt(c, e.Preset, 64)
			if err != nil {
				return Outcome{}, err
			}
			big, err := spawnAt(c, e.Preset, 4*unit.KiB)
			if err != nil {
				return Outcome{}, err
			}
			s64 := small.enqueue["HSA"] - small.enqueue["XTQ"]
			s4k := big.enqueue["HSA"] - big.enqueue["XTQ"]
			r64 := small.end["HSA"] / small.end["XTQ"]
			r4k := big.end["HSA"] / big.end["XTQ"]
			return Clauses(
				Check(s4k > 0, "XTQ saves enqueue time at 4 KiB: %.0f ns", 1000*s4k),
				Check(s64 != 0 && abs(s4k-s64) <= Tolerance*abs(s64), "about the same saving at 4 KiB (%.0f ns) as at 64 B (%.0f ns), within 15%%", 1000*s4k, 1000*s64),
				Check(r4k < r64 && r4k > 1, "smaller relative speedup of XTQ over HSA at 4 KiB (%.3f) than at 64 B (%.3f), still above 1", r4k, r64),
			), nil
		}},
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// spawn is one payload size's remote task spawn, per strategy, in us.
type spawn struct {
	end, transfer, enqueue map[string]float64
}

// spawnAt runs the remote task spawn at one payload size with GPU-kernel
// tasks (the figure's memcpy active message).
func spawnAt(c *Ctx, preset string, size unit.Bytes) (spawn, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return spawn{}, err
	}
	cfg.TaskSpawn.MinSize, cfg.TaskSpawn.MaxSize = size, size
	cfg.TaskSpawn.Strategies = []string{"CPU", "HSA", "XTQ"}
	cfg.TaskSpawn.CPUTasks = false
	res, err := c.Run("taskspawn", cfg)
	if err != nil {
		return spawn{}, err
	}
	return readSpawn(res, size)
}

// readSpawn reads the end-to-end times and the phases of one size.
func readSpawn(res *report.Result, size unit.Bytes) (spawn, error) {
	sum, err := Table(res, "end-to-end")
	if err != nil {
		return spawn{}, err
	}
	br, err := Table(res, "breakdown")
	if err != nil {
		return spawn{}, err
	}
	sp := spawn{end: map[string]float64{}, transfer: map[string]float64{}, enqueue: map[string]float64{}}
	for _, s := range []string{"CPU", "HSA", "XTQ"} {
		agent := "GPU kernel"
		if s == "CPU" {
			agent = "CPU handler"
		}
		row, err := One(sum, "size", size.String(), "strategy", s, "agent", agent)
		if err != nil {
			return spawn{}, err
		}
		sp.end[s] = row.Micros("end_to_end")
		for _, ph := range Rows(br, "size", size.String(), "strategy", s, "agent", agent) {
			switch ph["phase"] {
			case "data transfer":
				sp.transfer[s] += ph.Micros("duration")
			case "target enqueue", "kernel launch":
				sp.enqueue[s] += ph.Micros("duration")
			}
		}
	}
	return sp, nil
}

// spawnEndToEnd is the end-to-end time of strategy s at size.
func spawnEndToEnd(c *Ctx, e Entry, s string, size unit.Bytes) (Outcome, error) {
	sp, err := spawnAt(c, e.Preset, size)
	if err != nil {
		return Outcome{}, err
	}
	return Num(sp.end[s], "%s end to end at %v (CPU %.3f us, HSA %.3f us, XTQ %.3f us)", s, size, sp.end["CPU"], sp.end["HSA"], sp.end["XTQ"]), nil
}
