package validate

import (
	"fmt"
	"math"
	"slices"
)

// d0ch5 judges the ComP-Net chapter's microbenchmarks (the dissertation's
// Fig 5.2, 5.5 and 5.6) on preset compnet: the ghnqueue, cpl2 and shmemget
// experiments.
func d0ch5() []Evaluator {
	return []Evaluator{
		{Prefix: "d0-fig5.2a-queue-placement", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			q, err := ghnQueue(c, e.Preset, nil, nil)
			if err != nil {
				return Outcome{}, err
			}
			var cs []Clause
			dev, host := q["GHN_DGPU"], q["GHN_DGPU_HOSTQ"]
			keys := sortedKeys(dev)
			for _, k := range keys {
				cs = append(cs, Check(dev[k] > host[k], "%d queues per thread: GPU-memory queue %.2f us > host-memory queue %.2f us", k, dev[k], host[k]))
			}
			first, last := keys[0], keys[len(keys)-1]
			cs = append(cs, Check(dev[last] == slices.Max(mapValues(dev)) && dev[last] > dev[first],
				"GPU-memory queue worst at the most queues per thread: %.2f us at %d vs %.2f us at %d", dev[last], last, dev[first], first))
			return Clauses(cs...), nil
		}},
		{Prefix: "d0-fig5.2a-hostq-range", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			q, err := ghnQueue(c, e.Preset, nil, nil)
			if err != nil {
				return Outcome{}, err
			}
			vs := mapValues(q["GHN_DGPU_HOSTQ"])
			lo, hi := slices.Min(vs), slices.Max(vs)
			o := Num(hi, "host-memory queue service time spans %.2f–%.2f us over the swept queue counts (value: the largest)", lo, hi)
			o.Clauses = []Clause{Check(lo >= *e.Low, "smallest service time %.2f us ≥ %g us", lo, *e.Low)}
			return o, nil
		}},
		{Prefix: "d0-fig5.2b-threads", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			threads := []int{1, 2, 4, 8, 16}
			q, err := ghnQueueThreads(c, e.Preset, threads)
			if err != nil {
				return Outcome{}, err
			}
			return Clauses(
				Check(q[16] < q[1]/2, "16 host threads serve at least twice as fast as one: %.2f us vs %.2f us", q[16], q[1]),
				Check(q[1] > q[2] && q[2] > q[4], "service improves with each doubling up to 4 threads: %.2f, %.2f, %.2f us", q[1], q[2], q[4]),
			), nil
		}},
		{Prefix: "d0-fig5.5-collapse", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			l, err := cpL2(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			r := sortedKeys(l.off)
			h0, hN := l.off[r[0]], l.off[r[len(r)-1]]
			return Clauses(Check(h0 >= 0.5, "CP hit rate with no streaming work-groups is high: %.3f", h0),
				Check(hN <= 0.1, "CP hit rate falls to almost zero with %d streaming per networking work-group: %.3f", r[len(r)-1], hN)), nil
		}},
		{Prefix: "d0-fig5.5-locking", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			l, err := cpL2(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			worst := slices.Min(mapValues(l.on))
			base := l.off[sortedKeys(l.off)[0]]
			o := Num(worst/base, "worst CP hit rate with locking %.3f / hit rate with no streaming %.3f", worst, base)
			// Why: which of the CP's accesses locking could protect at
			// that point (each found-locked access unlocks its line).
			for _, r := range sortedKeys(l.on) {
				k := l.classes[r]
				if l.on[r] != worst || k == nil {
					continue
				}
				var all, locked float64
				for _, v := range k {
					all, locked = all+v[0], locked+v[1]
				}
				if all > 0 {
					o.Note += fmt.Sprintf("; at %d streaming per networking work-group %.0f of the CP's %.0f L2 accesses (%.1f %%) found their line locked, %.0f %% were polls of the streaming work-groups' queues",
						r, locked, all, 100*locked/all, 100*k["idle_queues"][0]/all)
				}
				break
			}
			return o, nil
		}},
		{Prefix: "d0-fig5.5-hold", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			l, err := cpL2(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			if math.IsNaN(l.hold) {
				return NotRunnable("cpl2 reports no lock hold time"), nil
			}
			return Num(l.hold, "mean lock hold time with locking at the most streaming work-groups (max %.3f us; %d lines locked at most)", l.holdMax, l.maxLocked), nil
		}},
		{Prefix: "d0-fig5.6a-get-latency", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			g, err := shmemGet(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			sizes := sortedKeys(g["COMPNET"])
			s, l := sizes[0], sizes[len(sizes)-1]
			d, a, n := g["GHN_DGPU"], g["GHN_APU"], g["COMPNET"]
			return Clauses(
				Check(d[s] > 2*n[s], "%d B: GHN_DGPU %.2f us > 2 × COMPNET %.2f us", s, d[s], n[s]),
				Check(d[s] > 2*a[s], "%d B: GHN_DGPU %.2f us > 2 × GHN_APU %.2f us", s, d[s], a[s]),
				Check(abs(a[s]-n[s]) <= Tolerance*n[s], "%d B: GHN_APU %.2f us and COMPNET %.2f us similar (within 15%%)", s, a[s], n[s]),
				Check(d[l] <= (1+Tolerance)*n[l] && a[l] <= (1+Tolerance)*n[l], "%d B: the three converge within 15%% (GHN_DGPU %.2f, GHN_APU %.2f, COMPNET %.2f us)", l, d[l], a[l], n[l]),
			), nil
		}},
		{Prefix: "d0-fig5.6a-dgpu-vs-compnet", Eval: func(c *Ctx, e Entry) (Outcome, error) {
			g, err := shmemGet(c, e.Preset)
			if err != nil {
				return Outcome{}, err
			}
			s := sortedKeys(g["COMPNET"])[0]
			return Num(g["GHN_DGPU"][s]/g["COMPNET"][s], "%d B get: GHN_DGPU %.2f us, COMPNET %.2f us", s, g["GHN_DGPU"][s], g["COMPNET"][s]), nil
		}},
	}
}

// ghnQueue is the mean service time (us) per strategy and queues per host
// thread, at the experiment's default sweep.
func ghnQueue(c *Ctx, preset string, wgs, threads []int) (map[string]map[int]float64, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return nil, err
	}
	if wgs != nil {
		cfg.ShmemBench.QueueWGs = wgs
	}
	if threads != nil {
		cfg.ShmemBench.QueueThreads = threads
	}
	res, err := c.Run("ghnqueue", cfg)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "ghnqueue")
	if err != nil {
		return nil, err
	}
	out := map[string]map[int]float64{}
	for _, r := range Rows(t) {
		s := r["strategy"].(string)
		if out[s] == nil {
			out[s] = map[int]float64{}
		}
		out[s][int(r.Float("queues_per_thread"))] = r.Float("service_us")
	}
	return out, nil
}

// ghnQueueThreads is GHN_DGPU's service time (us) per host thread count,
// with one work-group per CU issuing requests.
func ghnQueueThreads(c *Ctx, preset string, threads []int) (map[int]float64, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return nil, err
	}
	cfg.ShmemBench.QueueStrategies = []string{"GHN_DGPU"}
	cfg.ShmemBench.QueueWGs = []int{cfg.GPU.CUs}
	cfg.ShmemBench.QueueThreads = threads
	res, err := c.Run("ghnqueue", cfg)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "ghnqueue")
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	for _, r := range Rows(t) {
		out[int(r.Float("threads"))] = r.Float("service_us")
	}
	return out, nil
}

// cpl2Result is the CP's L2 hit rate per streaming ratio, locking off and
// on, and the mean lock hold time (us) at the largest ratio.
type cpl2Result struct {
	off, on   map[int]float64
	hold      float64
	holdMax   float64
	maxLocked int
	// classes, with locking on, per ratio: the CP's accesses by class
	// (cpl2_cp_accesses: class → accesses, and the accesses that found
	// their line locked).
	classes map[int]map[string][2]float64
}

func cpL2(c *Ctx, preset string) (cpl2Result, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return cpl2Result{}, err
	}
	res, err := c.Run("cpl2", cfg)
	if err != nil {
		return cpl2Result{}, err
	}
	t, err := Table(res, "cpl2")
	if err != nil {
		return cpl2Result{}, err
	}
	out := cpl2Result{off: map[int]float64{}, on: map[int]float64{}, hold: math.NaN(), classes: map[int]map[string][2]float64{}}
	if by, err := Table(res, "cpl2_cp_accesses"); err == nil {
		for _, r := range Rows(by) {
			if !(r["llc_locking"] == true || r["llc_locking"] == "on" || r["llc_locking"] == "true") {
				continue
			}
			ratio := int(r.Float("streaming_per_net"))
			if out.classes[ratio] == nil {
				out.classes[ratio] = map[string][2]float64{}
			}
			out.classes[ratio][r["class"].(string)] = [2]float64{r.Float("accesses"), r.Float("found_locked")}
		}
	}
	maxRatio := -1
	for _, r := range Rows(t) {
		ratio := int(r.Float("streaming_per_net"))
		locked := r["llc_locking"] == true || r["llc_locking"] == "on" || r["llc_locking"] == "true"
		if locked {
			out.on[ratio] = r.Float("cp_hit_rate")
			if ratio > maxRatio {
				maxRatio = ratio
				out.hold = r.Micros("mean_lock_hold")
				out.holdMax = r.Micros("max_lock_hold")
				out.maxLocked = int(r.Float("max_locked_lines"))
			}
		} else {
			out.off[ratio] = r.Float("cp_hit_rate")
		}
	}
	return out, nil
}

// shmemGet is the blocking-get latency (us) per strategy and payload.
func shmemGet(c *Ctx, preset string) (map[string]map[int]float64, error) {
	cfg, err := c.Config(preset)
	if err != nil {
		return nil, err
	}
	res, err := c.Run("shmemget", cfg)
	if err != nil {
		return nil, err
	}
	t, err := Table(res, "shmemget")
	if err != nil {
		return nil, err
	}
	out := map[string]map[int]float64{}
	for _, r := range Rows(t) {
		s := r["strategy"].(string)
		if out[s] == nil {
			out[s] = map[int]float64{}
		}
		out[s][int(r.Float("bytes"))] = r.Float("latency_us")
	}
	return out, nil
}

// sortedKeys returns m's keys in increasing order.
func sortedKeys[V any](m map[int]V) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// mapValues returns m's values in key order.
func mapValues(m map[int]float64) []float64 {
	var vs []float64
	for _, k := range sortedKeys(m) {
		vs = append(vs, m[k])
	}
	return vs
}
