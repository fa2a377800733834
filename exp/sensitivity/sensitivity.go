package sensitivity

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Options select the study.
type Options struct {
	// Knobs to perturb, by name or as "section.*" (every numeric DEFAULT
	// knob of the section); empty means every numeric DEFAULT knob that is
	// not in another experiment's section.
	Knobs []string
	// Factor each knob is divided and multiplied by; must be > 1.
	Factor float64
	// Output names the output the tornado plot shows; "" means the
	// experiment's headline (its first output).
	Output string
	// NoScreen perturbs every knob one by one even where a whole section
	// moved together changes nothing (see screen).
	NoScreen bool
}

// numericTypes are the parameter types a factor applies to.
var numericTypes = []string{"duration", "size", "rate", "freq", "int", "uint", "float"}

// Check reports bad options before anything runs: a factor ≤ 1, an unknown
// knob, a knob that is not numeric. Each error is one line naming it.
func Check(cfg exp.Config, experiment string, o Options) error {
	var errs []error
	if !(o.Factor > 1) || math.IsInf(o.Factor, 0) {
		errs = append(errs, fmt.Errorf("--factor = %v: must be a finite number > 1", o.Factor))
	}
	if _, err := exp.Lookup(experiment); err != nil {
		errs = append(errs, err)
	}
	infos := map[string]params.Info{}
	for _, p := range params.List(cfg) {
		infos[p.Name] = p
	}
	for _, k := range o.Knobs {
		if section, ok := strings.CutSuffix(k, ".*"); ok {
			if len(knobs(cfg, experiment, []string{k})) == 0 {
				errs = append(errs, fmt.Errorf("--knobs: %s matches no numeric DEFAULT knob (section %q)", k, section))
			}
			continue
		}
		p, ok := infos[k]
		switch {
		case !ok:
			_, err := params.Get(cfg, k)
			errs = append(errs, fmt.Errorf("--knobs: %w", err))
		case !slices.Contains(numericTypes, p.Type):
			errs = append(errs, fmt.Errorf("--knobs: %s is a %s: only numeric knobs (%s) can be scaled by a factor", k, p.Type, strings.Join(numericTypes, ", ")))
		}
	}
	return errors.Join(errs...)
}

// knobs returns the knobs to perturb: the chosen ones (a "section.*"
// choosing the section's numeric DEFAULT knobs), or every numeric DEFAULT
// knob outside other experiments' sections.
func knobs(cfg exp.Config, experiment string, chosen []string) []params.Info {
	others := map[string]bool{}
	for _, e := range exp.List() {
		others[e.Name] = e.Name != experiment
	}
	var out []params.Info
	for _, p := range params.List(cfg) {
		section, _, _ := strings.Cut(p.Name, ".")
		switch {
		case len(chosen) > 0:
			whole := slices.Contains(chosen, section+".*") && p.Src == "DEFAULT" && slices.Contains(numericTypes, p.Type)
			if whole || slices.Contains(chosen, p.Name) {
				out = append(out, p)
			}
		case p.Src == "DEFAULT" && slices.Contains(numericTypes, p.Type) && !others[section]:
			out = append(out, p)
		}
	}
	return out
}

// scaled returns p's value multiplied by f, printed so params.Set parses
// it, or an error saying why it cannot move.
func scaled(p params.Info, f float64) (string, error) {
	num, format, err := parseNumber(p)
	if err != nil {
		return "", err
	}
	if num == 0 {
		return "", errors.New("is 0, which no factor moves")
	}
	v := num * f
	if p.Type == "int" || p.Type == "uint" || p.Type == "size" || p.Type == "duration" {
		v = math.Round(v)
		if v == num {
			return "", fmt.Errorf("rounds back to %s", p.Value)
		}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e300 {
		return "", fmt.Errorf("scaled to %v, out of range", v)
	}
	out := format(v)
	// The printed value must read back as the type (units print with a
	// few digits, so a tiny or huge value may not).
	if _, _, err := parseNumber(params.Info{Type: p.Type, Value: out}); err != nil {
		return "", fmt.Errorf("scaled to %s, which is not a valid %s", out, p.Type)
	}
	return out, nil
}

// parseNumber reads p's printed value as a number and returns a printer
// for numbers of its type.
func parseNumber(p params.Info) (float64, func(float64) string, error) {
	switch p.Type {
	case "duration":
		t, err := sim.ParseDuration(p.Value)
		return float64(t), func(v float64) string { return sim.Time(v).String() }, err
	case "size":
		b, err := unit.ParseBytes(p.Value)
		return float64(b), func(v float64) string { return unit.Bytes(v).String() }, err
	case "rate":
		r, err := unit.ParseRate(p.Value)
		return float64(r), func(v float64) string { return unit.Rate(v).String() }, err
	case "freq":
		fr, err := unit.ParseFreq(p.Value)
		return float64(fr), func(v float64) string { return unit.Freq(v).String() }, err
	case "int", "uint":
		n, err := strconv.ParseInt(p.Value, 10, 64)
		return float64(n), func(v float64) string { return strconv.FormatInt(int64(v), 10) }, err
	case "float":
		x, err := strconv.ParseFloat(p.Value, 64)
		return x, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }, err
	}
	return 0, nil, fmt.Errorf("is a %s, not a number", p.Type)
}

// run is one simulation of the study: the base (knob "") or one knob moved.
type run struct {
	knob, value string
	up          bool
	cfg         exp.Config
	res         *report.Result
	err         error
}

// plan builds the base run and every perturbed one; knobs whose value
// cannot move, or whose moved value the configuration rejects, come back
// as skip notes instead.
func plan(cfg exp.Config, ks []params.Info, factor float64) (runs []*run, skipped []string) {
	runs = append(runs, &run{cfg: cfg})
	for _, p := range ks {
		for _, up := range []bool{false, true} {
			f := 1 / factor
			if up {
				f = factor
			}
			v, err := scaled(p, f)
			c := cfg
			if err == nil {
				err = params.Set(&c, p.Name, v)
			}
			if err == nil {
				err = c.Validate()
			}
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s %s %g (%s → not perturbed): %v", p.Name, map[bool]string{false: "÷", true: "×"}[up], factor, p.Value, oneLine(err)))
				continue
			}
			runs = append(runs, &run{knob: p.Name, value: v, up: up, cfg: c})
		}
	}
	return runs, skipped
}

func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Run perturbs the knobs of o and re-runs experiment name for each, with
// as many runs at once as cfg.Run.Parallel allows (one per CPU core when
// 0), each run's own simulations one at a time.
func Run(cfg exp.Config, name string, o Options, env exp.Env) (*report.Result, error) {
	if err := Check(cfg, name, o); err != nil {
		return nil, err
	}
	e, _ := exp.Lookup(name)
	cfg.Run.Functional = false
	workers := cfg.Run.Parallel
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	cfg.Run.Parallel = 1
	ks := knobs(cfg, name, o.Knobs)
	var screened []string
	var done []*run
	if !o.NoScreen {
		ks, done, screened = screen(e, cfg, ks, o.Factor, workers, env)
		if done[0].err != nil {
			return nil, fmt.Errorf("sensitivity of %s, the base configuration: %w", name, done[0].err)
		}
	}
	runs, skipped := plan(cfg, ks, o.Factor)
	rest := runs
	if done != nil {
		runs[0], rest = done[0], runs[1:] // the base already ran with the screening runs
	} else if o.Output != "" {
		runAll(e, runs[:1], workers, env) // the base first: it names the outputs
		rest = runs[1:]
	}
	if o.Output != "" && runs[0].err == nil {
		// An --output the experiment lacks is reported before the
		// perturbed runs, not after all of them.
		if err := hasOutput(baseOutputs(runs[:1]), o.Output); err != nil {
			return nil, err
		}
	}
	runAll(e, rest, workers, env)
	skipped = append(screened, skipped...)
	if runs[0].err != nil {
		return nil, fmt.Errorf("sensitivity of %s, the base configuration: %w", name, runs[0].err)
	}
	// A perturbed run that fails (a deadlock the moved value exposes, say)
	// is reported in the notes, with its error, and left out, as a value
	// the configuration rejects is: one failure among hundreds of runs does
	// not throw the others away.
	kept := runs[:1]
	var failed []string
	for _, r := range runs[1:] {
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("run FAILED, left out of the tables: %s %s %g (= %s): %s", r.knob, map[bool]string{false: "÷", true: "×"}[r.up], o.Factor, r.value, oneLine(r.err)))
			continue
		}
		kept = append(kept, r)
	}
	res, err := assemble(cfg, name, o, ks, kept, skipped)
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, failed...)
	return res, nil
}

// runAll runs every run on workers goroutines; results are stored in the
// runs, so their order never depends on scheduling.
func runAll(e exp.Experiment, runs []*run, workers int, env exp.Env) {
	next := make(chan *run)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(1, min(workers, len(runs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				r.res, r.err = e.Run(r.cfg, exp.Env{})
				if r.err == nil && r.res != nil {
					r.err = r.res.CheckTimes() // as gpunetsim run: a negative time is never a result
				}
				mu.Lock()
				done++
				if env.Progress != nil {
					env.Progress(done, len(runs))
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		next <- r
	}
	close(next)
	wg.Wait()
}
