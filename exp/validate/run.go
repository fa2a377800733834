package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Options tune a validation run.
type Options struct {
	// Quick runs the sweeps of entries that allow it at smaller sizes (tests
	// and benchmarks); entries whose set-up fixes a size keep it.
	Quick bool
	// Progress, when set, is told after each entry.
	Progress func(done, total int, id string)
	// Groups are the evaluators (nil: Groups()).
	Groups []Group
}

// Ctx is what an evaluator gets: the preset configurations and a memo of
// experiment runs shared by the entries of one validation, so that entries
// of one figure simulate it once.
type Ctx struct {
	// Quick is Options.Quick.
	Quick bool
	mu    sync.Mutex
	memo  map[string]memoed
}

type memoed struct {
	res *report.Result
	err error
}

// Config returns the default configuration of preset: the preset's single
// parameter set. Evaluators change only the experiment's own set-up knobs.
func (c *Ctx) Config(preset string) (exp.Config, error) {
	return exp.DefaultConfig(preset)
}

// Run runs the named experiment on cfg, once per distinct configuration in
// a validation.
func (c *Ctx) Run(experiment string, cfg exp.Config) (*report.Result, error) {
	key := ""
	if b, err := json.Marshal(cfg); err == nil {
		key = experiment + "\x00" + string(b)
	}
	c.mu.Lock()
	if m, ok := c.memo[key]; ok && key != "" {
		c.mu.Unlock()
		return m.res, m.err
	}
	c.mu.Unlock()
	e, err := exp.Lookup(experiment)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", experiment, err)
	}
	res, err := e.Run(cfg, exp.Env{})
	if err == nil && res != nil {
		err = res.CheckTimes() // as gpunetsim run: a negative time is never a result
	}
	if err != nil {
		err = fmt.Errorf("%s on preset %s: %w", experiment, cfg.Run.Preset, err)
	}
	if key != "" {
		c.mu.Lock()
		if c.memo == nil {
			c.memo = map[string]memoed{}
		}
		c.memo[key] = memoed{res, err}
		c.mu.Unlock()
	}
	return res, err
}

// Run judges entries. An evaluator's error becomes that entry's failed
// verdict; the others still run.
func Run(entries []Entry, o Options) []Result {
	groups := o.Groups
	if groups == nil {
		groups = Groups()
	}
	c := &Ctx{Quick: o.Quick}
	out := make([]Result, 0, len(entries))
	for i, e := range entries {
		ev, group, ok := find(groups, e.ID)
		var r Result
		switch {
		case !ok:
			r = Result{Entry: e, Status: Unevaluated, Note: "not runnable: no evaluator is registered for this entry"}
		default:
			o, err := ev.Eval(c, e)
			if err != nil {
				r = Result{Entry: e, Status: RunFailed, Note: err.Error()}
			} else {
				r = judge(e, o)
			}
		}
		r.Group = group
		out = append(out, r)
		if o.Progress != nil {
			o.Progress(i+1, len(entries), e.ID)
		}
	}
	return out
}

// Failed counts the entries whose evaluation failed (a simulation error).
func Failed(rs []Result) int {
	n := 0
	for _, r := range rs {
		if r.Status == RunFailed {
			n++
		}
	}
	return n
}

// Table returns the named table of res.
func Table(res *report.Result, name string) (report.Table, error) {
	for _, t := range res.Tables {
		if t.Name == name {
			return t, nil
		}
	}
	return report.Table{}, fmt.Errorf("experiment %s has no table %q", res.Experiment, name)
}

// Row is one table row by column name.
type Row map[string]any

// Rows returns the rows of t whose cells print as the given values
// (column, value, column, value, …).
func Rows(t report.Table, match ...string) []Row {
	var out []Row
	for _, raw := range t.Rows {
		row := Row{}
		for i, c := range t.Columns {
			if i < len(raw) {
				row[c] = raw[i]
			}
		}
		ok := true
		for i := 0; i+1 < len(match); i += 2 {
			ok = ok && fmt.Sprint(row[match[i]]) == match[i+1]
		}
		if ok {
			out = append(out, row)
		}
	}
	return out
}

// One returns the single row of t matching, or an error naming the match.
func One(t report.Table, match ...string) (Row, error) {
	rs := Rows(t, match...)
	if len(rs) != 1 {
		return nil, fmt.Errorf("table %s: %d rows match %s, want 1", t.Name, len(rs), strings.Join(match, " "))
	}
	return rs[0], nil
}

// Float returns the cell as a number: a float or an integer as is, a
// sim.Time in microseconds, a unit.Bytes in bytes; NaN otherwise.
func (r Row) Float(col string) float64 {
	switch v := r[col].(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case sim.Time:
		return v.Micros()
	case unit.Bytes:
		return float64(v)
	}
	return math.NaN()
}

// Micros returns a time cell in microseconds (NaN if the cell is no time).
func (r Row) Micros(col string) float64 {
	if t, ok := r[col].(sim.Time); ok {
		return t.Micros()
	}
	return math.NaN()
}
