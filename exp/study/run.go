package study

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
)

// Plan is a study expanded into configurations and simulation points.
type Plan struct {
	Study Study
	// Runs holds one configuration per entry and sweep combination, entry
	// by entry, combinations in cross-product order.
	Runs []Run
	// Tasks holds the distinct points of every run, in order of first
	// appearance, then one task per run of an experiment without Points.
	// Slices of a study share out Tasks by index.
	Tasks []Task
}

// Run is one configuration of an entry.
type Run struct {
	Entry  int
	Values []string // the entry's swept values, in the order of its sweeps
	Config exp.Config
	// Keys are the cache keys of the run's points (nil for an experiment
	// without Points).
	Keys []string
}

// Task is one unit of work: a point, or a whole run of an experiment
// without Points (Point is then nil).
type Task struct {
	Experiment exp.Experiment
	Point      *exp.Point
	Key        string // cache key of Point, or "run:<index>" for a whole run
	KeyText    string
	Run        int // the first run that needs this task
}

// Label describes the task in messages.
func (t Task) Label(p *Plan) string {
	r := p.Runs[t.Run]
	s := p.Study.Entries[r.Entry].Label
	if t.Point != nil {
		s += " " + t.Point.Label
	}
	for i, v := range r.Values {
		s += " " + p.Study.Entries[r.Entry].Sweeps[i].Name + "=" + v
	}
	return s
}

// Memory a plan holds, measured on Expand of 2,000-combination sweeps
// (allreduce, latency, fft2d on preset gputn): a run's configuration and
// keys, and a point's configuration and key text.
const (
	planBytesPerRun  = 8 << 10
	planBytesPerTask = 25 << 10
)

// MemLimit is the memory a plan may take, and what sets it ("memory
// available (MemAvailable)", "run.mem_limit"); Bytes 0: no limit.
type MemLimit struct {
	Bytes uint64
	What  string
	// Run, when set, checks one run's configuration (its simulations'
	// memory, say) as soon as it is loaded, before its points are listed.
	Run func(experiment string, cfg exp.Config) error
	// Planning, when set, is told of each entry once its first
	// configuration is checked and its plan is known to fit, before the
	// rest of its combinations configurations are loaded (a large cross
	// product takes minutes to plan).
	Planning func(e Entry, combinations float64)
}

// ListRefusal is the error of a run of experiment name on cfg whose own
// lists cross into more points than the memory left can plan (held bytes
// are taken already), found before the points are listed; nil when they
// fit or lim sets no limit. The bound is how the lists expand
// (params.OwnLists: crossed, or added where the experiment adds them),
// so a refusal names the lists to shorten.
func ListRefusal(name string, cfg exp.Config, held float64, lim MemLimit) error {
	if lim.Bytes == 0 {
		return nil
	}
	terms, points := params.OwnLists(name, cfg)
	need := held + points*planBytesPerTask
	if need <= float64(lim.Bytes) {
		return nil
	}
	return fmt.Errorf("%s: up to %.3g points would need about %s of memory to plan, more than the %s %s; list fewer values",
		terms, points, exp.FormatBytes(need), exp.FormatBytes(float64(lim.Bytes)), lim.What)
}

// Expand loads every configuration of s (reporting bad input before any
// work) and lists its points; version keys the cache.
func Expand(s Study, version string) (*Plan, error) {
	return ExpandWithin(s, version, MemLimit{})
}

// Combinations is the number of configurations entry e expands to: the
// product of its sweeps' lengths (a float: a cross product can pass any
// integer).
func (e Entry) Combinations() float64 {
	n := 1.0
	for _, sw := range e.Sweeps {
		n *= float64(len(sw.Values))
	}
	return n
}

// planRefusal is the error of a plan whose expansion cannot fit: it names
// the sweeps and lists whose product decides it.
func planRefusal(e Entry, combos float64, points int, need float64, lim MemLimit) error {
	var names []string
	for _, sw := range e.Sweeps {
		names = append(names, fmt.Sprintf("%s (%d values)", sw.Name, len(sw.Values)))
	}
	what := "the experiment's own lists"
	if len(names) > 0 {
		what = strings.Join(names, " × ")
	}
	each := fmt.Sprintf(" × %d points each", points)
	if points < 0 {
		each = "" // refused before the first configuration was made
	}
	return fmt.Errorf("%s: --sweep %s: %.3g configurations%s would need about %s of memory to plan, more than the %s %s; sweep fewer values",
		e.Label, what, combos, each, exp.FormatBytes(need), exp.FormatBytes(float64(lim.Bytes)), lim.What)
}

// checkEachValue loads, for an entry of several sweeps, each value of each
// sweep beside the other sweeps' first values: configurations of the
// plan, so one that fails fails the plan, found after n + m loads instead
// of somewhere in the n × m cross product (a bad value last in the outer
// of two 300-value sweeps was refused after 5 minutes of planning). A
// value bad only beside later values of the others is found in the plan.
func checkEachValue(e Entry, lim MemLimit) error {
	if len(e.Sweeps) < 2 {
		return nil // one sweep: the plan's own order is this
	}
	first := make([]string, len(e.Sweeps))
	for i, sw := range e.Sweeps {
		if len(sw.Values) == 0 {
			return nil
		}
		first[i] = sw.Values[0]
	}
	for i, sw := range e.Sweeps {
		for j, v := range sw.Values {
			if j == 0 && i > 0 {
				continue // the all-first configuration, loaded once
			}
			values := slices.Clone(first)
			values[i] = v
			load := e.Load
			load.Sets = append([]string(nil), e.Load.Sets...)
			for k, x := range values {
				load.Sets = append(load.Sets, e.Sweeps[k].Name+"="+x)
			}
			cfg, err := params.Load(load)
			if err == nil && lim.Run != nil {
				err = lim.Run(e.Experiment.Name, cfg)
			}
			if err != nil {
				return fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, values), err)
			}
		}
	}
	return nil
}

// ExpandWithin is Expand refusing, before it allocates them, plans whose
// configurations and points would not fit in lim: the cross product of an
// entry's sweeps times the points of its first configuration.
func ExpandWithin(s Study, version string, lim MemLimit) (*Plan, error) {
	p := &Plan{Study: s}
	seen := map[string]bool{}
	var whole []Task
	held := 0.0
	for ei, e := range s.Entries {
		n := e.Combinations()
		if lim.Bytes > 0 && held+n*planBytesPerRun > float64(lim.Bytes) {
			return nil, planRefusal(e, n, -1, held+n*planBytesPerRun, lim)
		}
		if err := checkEachValue(e, lim); err != nil {
			return nil, err
		}
		for ci, values := range combos(e.Sweeps) {
			load := e.Load
			load.Sets = append([]string(nil), e.Load.Sets...)
			for i, v := range values {
				load.Sets = append(load.Sets, e.Sweeps[i].Name+"="+v)
			}
			cfg, err := params.Load(load)
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, values), err)
			}
			if lim.Run != nil {
				if err := lim.Run(e.Experiment.Name, cfg); err != nil {
					return nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, values), err)
				}
			}
			if err := ListRefusal(e.Experiment.Name, cfg, held, lim); err != nil {
				return nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, values), err)
			}
			run := Run{Entry: ei, Values: values, Config: cfg}
			ri := len(p.Runs)
			if e.Experiment.Points == nil {
				if ci == 0 {
					held += n * planBytesPerRun
					if lim.Planning != nil {
						lim.Planning(e, n)
					}
				}
				whole = append(whole, Task{Experiment: e.Experiment, Key: fmt.Sprintf("run:%d", ri), Run: ri})
				p.Runs = append(p.Runs, run)
				continue
			}
			pts, err := e.Experiment.Points.List(cfg)
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, values), err)
			}
			if ci == 0 && lim.Bytes > 0 {
				need := held + n*(planBytesPerRun+float64(len(pts))*planBytesPerTask)
				if need > float64(lim.Bytes) {
					return nil, planRefusal(e, n, len(pts), need, lim)
				}
				held = need
			}
			if ci == 0 && lim.Planning != nil {
				lim.Planning(e, n)
			}
			for i := range pts {
				text := KeyText(version, e.Experiment.Name, pts[i])
				key := hashKey(text)
				run.Keys = append(run.Keys, key)
				if !seen[key] {
					seen[key] = true
					p.Tasks = append(p.Tasks, Task{Experiment: e.Experiment, Point: &pts[i], Key: key, KeyText: text, Run: ri})
				}
			}
			p.Runs = append(p.Runs, run)
		}
	}
	p.Tasks = append(p.Tasks, whole...)
	return p, nil
}

// comboLabel prints " name=value ..." for a sweep combination.
func comboLabel(sweeps []params.Sweep, values []string) string {
	var b strings.Builder
	for i, v := range values {
		fmt.Fprintf(&b, " %s=%s", sweeps[i].Name, v)
	}
	return b.String()
}

// Slice selects the tasks of one Slurm array task: those whose index is
// Index modulo Count.
type Slice struct{ Index, Count int }

// ParseSlice parses "i/n" with 0 ≤ i < n.
func ParseSlice(s string) (Slice, error) {
	var sl Slice
	if _, err := fmt.Sscanf(s, "%d/%d", &sl.Index, &sl.Count); err != nil || fmt.Sprintf("%d/%d", sl.Index, sl.Count) != s {
		return Slice{}, fmt.Errorf("slice %q: want i/n, e.g. 3/8", s)
	}
	if sl.Count < 1 || sl.Index < 0 || sl.Index >= sl.Count {
		return Slice{}, fmt.Errorf("slice %q: want 0 ≤ i < n", s)
	}
	return sl, nil
}

// Progress counts the tasks of one execution.
type Progress struct {
	Total  int // tasks to go through
	Done   int // tasks finished, Cached included
	Cached int // tasks found in the cache
	// Work, WorkDone and WorkCached are the same in units of expected
	// work (exp.ExpectedWork of each task's configuration), for rates and
	// ETAs that weigh a 64-node point more than a 2-node one.
	Work, WorkDone, WorkCached float64
}

// Options control Execute.
type Options struct {
	// Cache, when non-nil, is read before and written after each point.
	Cache *Cache
	// Fresh ignores what the cache holds (results are still written).
	Fresh bool
	// Slice, when non-nil, limits the work to one slice of the tasks and
	// skips the report (the tasks' results go to the cache only). Whole
	// runs of experiments without Points belong to no slice.
	Slice *Slice
	// CacheOnly assembles the report from the cache without simulating:
	// missing points are an error (study collect).
	CacheOnly bool
	// Parallel is how many tasks run at once (0: one per CPU core).
	Parallel int
	// Progress, when non-nil, is called after each task (serially).
	Progress func(Progress)
}

// Outcome is what Execute produced: one merged result per entry (none
// with a Slice), and the counts.
type Outcome struct {
	Results []*report.Result
	// Parts holds, per entry, the result of each sweep combination before
	// merging, labelled by the combination: a report's facets.
	Parts    [][]report.Facet
	Progress Progress
}

// Execute runs the plan's tasks (those of o.Slice, if set), reusing and
// filling o.Cache, and assembles one result per entry. Cancelling ctx
// stops starting new tasks; finished points are already in the cache.
func Execute(ctx context.Context, p *Plan, o Options) (Outcome, error) {
	var tasks []int
	for i, t := range p.Tasks {
		if o.Slice != nil && (t.Point == nil || i%o.Slice.Count != o.Slice.Index) {
			continue
		}
		tasks = append(tasks, i)
	}
	points := make(map[string][]byte, len(p.Tasks))
	whole := map[int]*report.Result{}
	var mu sync.Mutex
	prog := Progress{Total: len(tasks)}
	work := make(map[int]float64, len(tasks))
	for _, i := range tasks {
		work[i] = taskWork(p, p.Tasks[i])
		prog.Work += work[i]
	}
	// Cached points first, so that progress counts, rates and ETAs
	// describe the simulations still to run.
	todo := tasks[:0:0]
	for _, i := range tasks {
		t := p.Tasks[i]
		if t.Point != nil && o.Cache != nil && !o.Fresh {
			b, problem := o.Cache.get(t.Key, t.KeyText)
			if b != nil {
				points[t.Key] = b
				prog.Done++
				prog.Cached++
				prog.WorkDone += work[i]
				prog.WorkCached += work[i]
				continue
			}
			if problem != "" {
				then := "the point is simulated again"
				if o.CacheOnly {
					then = "the point counts as missing"
				}
				o.Cache.warn("cache entry %s (%s): %s; %s", o.Cache.path(t.Key), t.Label(p), problem, then)
			}
		}
		todo = append(todo, i)
	}
	if o.Progress != nil && prog.Total > 0 {
		o.Progress(prog)
	}
	var missing []string
	workers := parallel(o.Parallel)
	// A point may split over the cores the pool leaves free (run.partitions = 0).
	env := exp.Env{Cores: runtime.GOMAXPROCS(0) / max(1, min(workers, len(todo)))}
	err := pool(ctx, workers, len(todo), func(j int) error {
		t := p.Tasks[todo[j]]
		res, cached, err := do(p, t, o, env)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if errors.Is(err, errMissing) {
				missing = append(missing, t.Label(p))
				err = nil
			}
			return err
		}
		if t.Point != nil {
			points[t.Key] = res.([]byte)
		} else {
			whole[t.Run] = res.(*report.Result)
		}
		prog.Done++
		prog.WorkDone += work[todo[j]]
		if cached {
			prog.Cached++
			prog.WorkCached += work[todo[j]]
		}
		if o.Progress != nil {
			o.Progress(prog)
		}
		return nil
	})
	out := Outcome{Progress: prog}
	if err != nil {
		return out, err
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("%d of %d points are not in the cache %s (first: %s): run the missing slices or gpunetsim study run", len(missing), len(tasks), o.Cache.Dir(), missing[0])
	}
	if o.Slice != nil {
		return out, nil
	}
	out.Results, out.Parts, err = assemble(p, points, whole)
	return out, err
}

// errMissing reports a point absent from the cache in CacheOnly mode.
var errMissing = errors.New("not in the cache")

// do runs or fetches one task.
func do(p *Plan, t Task, o Options, env exp.Env) (res any, cached bool, err error) {
	r := p.Runs[t.Run]
	if t.Point == nil {
		res, err := t.Experiment.Run(r.Config, exp.Env{})
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", t.Label(p), err)
		}
		return res, false, nil
	}
	if o.Cache != nil && !o.Fresh {
		// Another process may have stored it meanwhile; a refused entry
		// was reported when Execute first looked.
		if b, _ := o.Cache.get(t.Key, t.KeyText); b != nil {
			return b, true, nil
		}
	}
	if o.CacheOnly {
		return nil, false, errMissing
	}
	b, err := t.Experiment.Points.Simulate(*t.Point, env)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", t.Label(p), err)
	}
	if o.Cache != nil {
		if err := o.Cache.put(t.Key, t.KeyText, b); err != nil {
			return nil, false, err
		}
	}
	return b, false, nil
}

func parallel(n int) int {
	if n <= 0 {
		return runtime.NumCPU()
	}
	return n
}

// pool runs job(0..n-1) on workers goroutines until ctx is cancelled or a
// job fails; it returns the first error, or ctx's.
func pool(ctx context.Context, workers, n int, job func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := job(i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// assemble builds each entry's merged result from the points' results.
func assemble(p *Plan, points map[string][]byte, whole map[int]*report.Result) ([]*report.Result, [][]report.Facet, error) {
	var out []*report.Result
	var parts [][]report.Facet
	for ei, e := range p.Study.Entries {
		var results []*report.Result
		var values [][]string
		for ri, r := range p.Runs {
			if r.Entry != ei {
				continue
			}
			res := whole[ri]
			if e.Experiment.Points != nil {
				raw := make([][]byte, len(r.Keys))
				for i, k := range r.Keys {
					raw[i] = points[k]
				}
				var err error
				if res, err = e.Experiment.Points.Assemble(r.Config, raw); err != nil {
					return nil, nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, r.Values), err)
				}
			}
			if res == nil {
				return nil, nil, fmt.Errorf("%s: the experiment returned no result", e.Label)
			}
			// The check "gpunetsim run" makes, on every result a study
			// assembles (cached points included): a negative time is the
			// model breaking its own invariant, never a result.
			if err := res.CheckTimes(); err != nil {
				return nil, nil, fmt.Errorf("%s%s: %w", e.Label, comboLabel(e.Sweeps, r.Values), err)
			}
			normalise(res, e.Experiment.Name, r.Config)
			results = append(results, res)
			values = append(values, r.Values)
		}
		m, err := Merge(e.Sweeps, values, results)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", e.Label, err)
		}
		out = append(out, m)
		parts = append(parts, facets(e.Sweeps, values, results))
	}
	return out, parts, nil
}

// normalise fills what an experiment may leave to its caller: its name,
// the parameters and the seed.
func normalise(res *report.Result, name string, cfg exp.Config) {
	if res.Experiment == "" {
		res.Experiment = name
	}
	if len(res.Params) == 0 {
		res.Params = params.Record(cfg)
	}
	if res.Seed == 0 {
		res.Seed = cfg.Run.Seed
	}
}

// taskWork is the expected work of task t: of its point, or of its whole
// run.
func taskWork(p *Plan, t Task) float64 {
	if t.Point != nil {
		return t.Experiment.PointWork(*t.Point)
	}
	return exp.ExpectedWork(t.Experiment.Name, p.Runs[t.Run].Config)
}
