package exp

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	hwmem "github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// prefixTracer sends one simulation's spans under "label/track", so runs of
// a sweep become separate processes in the trace.
type prefixTracer struct {
	t     sim.Tracer
	label string
}

func (p prefixTracer) Span(track, name string, start, end sim.Time) {
	p.t.Span(p.label+"/"+track, name, start, end)
}

// newRun builds a fresh engine and cluster of n nodes for one simulation
// of strategy s, in the memory mode the strategy runs in.
func newRun(cfg Config, env Env, label string, n int, s strategy.Strategy) (*cluster.Cluster, error) {
	if k := cfg.Run.Partitions; k > 1 {
		return nil, fmt.Errorf("run.partitions = %d: this experiment runs on one engine; only allreduce runs partitioned; use run.partitions=1", k)
	}
	e := sim.New(cfg.Run.Seed)
	if env.Tracer != nil {
		e.SetTracer(prefixTracer{env.Tracer, label})
	}
	spec := cfg.Spec
	if d, err := strategy.Lookup(string(s)); err == nil {
		// A strategy the NIC cannot run is bad input, whichever
		// experiment asks for it (the present-day strategy table).
		if err := d.RunsOn(spec); err != nil {
			return nil, fmt.Errorf("%w: %s: %w (preset %s)", sim.ErrConfig, label, err, cfg.Run.Preset)
		}
		spec = d.Adjust(spec)
	}
	if err := wholeNodesOf(spec, label, n); err != nil {
		return nil, err
	}
	c, err := cluster.New(e, spec, n, cfg.Run.Functional)
	if err == nil {
		c.SetCheckInvariants(cfg.Run.CheckInvariants)
	}
	return c, err
}

// wholeNodesOf refuses a cluster of n GPUs that the topology cannot
// join (a dragonfly short of global ports), counting the whole nodes
// node.placement puts them on (net.NodeSpec.Slots), as bad input found at
// setup (sim.ErrConfig), for the experiments whose GPU counts CheckRun
// cannot know ahead (Experiment.Ranks).
func wholeNodesOf(spec cluster.Spec, label string, n int) error {
	_, total := spec.Node.Slots(n)
	if err := spec.Topology.ValidateFor(total); err != nil {
		return fmt.Errorf("%w: %s on %d GPUs: %w", sim.ErrConfig, label, total, err)
	}
	return nil
}

// workloadStrategies returns the registered strategies that run workload
// name, in registry order.
func workloadStrategies(name string) []string {
	w, err := workload.Lookup(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range strategy.Registry() {
		if _, ok := w.Impl(s); ok {
			out = append(out, string(s.Strategy))
		}
	}
	return out
}

func strategyConfig(cfg Config) strategy.Config {
	return strategy.Config{SW: cfg.SW, MPI: cfg.MPI, Shmem: cfg.Shmem, DDT: cfg.DDT, GNN: cfg.GNN}
}

// forEach runs job(i) for i in [0, n) on cfg.Run.Parallel workers (one per
// core when 0), or one at a time when tracing, since a tracer is shared.
// Results must be stored by index, so output order never depends on
// scheduling.
func forEach(cfg Config, env Env, n int, job func(i int) error) error {
	return forEachWeighted(cfg, env, n, nil, job)
}

// forEachWeighted is forEach telling env.Progress the finished jobs'
// weights (units of expected work) out of their sum; nil weights: one unit
// a job.
func forEachWeighted(cfg Config, env Env, n int, weights []int, job func(i int) error) error {
	return forEachGated(cfg, env, n, weights, nil, func(i, _ int, _ *hwmem.Arena) error { return job(i) })
}

// memGate admits jobs while their estimated memory fits in a budget
// beside the jobs running; a job alone is always admitted. It hands out
// the waiting jobs largest estimate first, and a free worker takes the
// largest that fits rather than waiting for the next in line: a sweep's
// largest points (64 nodes) fit the budget only one at a time, and in
// report order they came last, one after another on one core while the
// other stood idle; started first, each runs beside the smaller points
// that fit with it.
type memGate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	budget  float64
	workers int
	mem     []float64
	waiting []int // jobs not started, largest estimate first
	inUse   float64
	running int
}

func newMemGate(budget float64, workers int, mem []float64) *memGate {
	g := &memGate{budget: budget, workers: workers, mem: mem, waiting: make([]int, len(mem))}
	g.cond = sync.NewCond(&g.mu)
	for i := range g.waiting {
		g.waiting[i] = i
	}
	// Stable: equal estimates keep the report order.
	slices.SortStableFunc(g.waiting, func(a, b int) int { return cmp.Compare(mem[b], mem[a]) })
	return g
}

// take waits until a waiting job fits beside those running, removes the
// largest that does and returns it with the cores it may use: the
// machine's, less one per other job running and one more where a free
// worker can start a job beside it now (the first job of a sweep would
// otherwise take every core, and its partitions compete with the job
// that starts next); ok is false once no job is left. Before it waits it
// calls idle (nil: nothing), once: the caller gives back what it holds
// for a job it does not have yet.
func (g *memGate) take(idle func()) (job, cores int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.waiting) > 0 {
		for k, i := range g.waiting {
			if g.running == 0 || g.inUse+g.mem[i] <= g.budget {
				g.waiting = slices.Delete(g.waiting, k, k+1)
				g.inUse += g.mem[i]
				g.running++
				others := g.running - 1
				if g.running < g.workers && slices.ContainsFunc(g.waiting, func(j int) bool { return g.inUse+g.mem[j] <= g.budget }) {
					others++
				}
				return i, max(1, runtime.GOMAXPROCS(0)-others), true
			}
		}
		if idle != nil { // without the lock (it unmaps), then look again
			f := idle
			idle = nil
			g.mu.Unlock()
			f()
			g.mu.Lock()
			continue
		}
		g.cond.Wait()
	}
	return 0, 0, false
}

// room returns the budget the jobs running leave.
func (g *memGate) room() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(0, g.budget-g.inUse)
}

// leave ends job i, waking the workers that wait for room.
func (g *memGate) leave(i int) {
	g.mu.Lock()
	g.inUse -= g.mem[i]
	g.running--
	g.mu.Unlock()
	g.cond.Broadcast()
}

// forEachGated is forEachWeighted where job i, given mem (estimated
// bytes per job; nil: no gate), starts only while its estimate fits in
// cfg.Run.MemBudget beside the jobs running (one that does not fit even
// alone runs alone), largest estimate first (memGate), and learns the
// cores it may use and the sweep's arena (nil without a gate), which
// holds no more than the budget the other jobs leave when it starts.
func forEachGated(cfg Config, env Env, n int, weights []int, mem []float64, job func(i, cores int, arena *hwmem.Arena) error) error {
	total := n
	if weights != nil {
		total = 0
		for _, w := range weights {
			total += w
		}
	}
	workers := sweepWorkers(cfg, env, n)
	cores := coresPerRun(cfg, env, n)
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	finish := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		if weights != nil {
			done += weights[i]
		} else {
			done++
		}
		if env.Progress != nil {
			env.Progress(done, total)
		}
	}
	var wg sync.WaitGroup
	if mem != nil {
		gate := newMemGate(float64(cfg.Run.MemBudget), workers, mem)
		// One arena for every worker: a point takes the node memories of
		// whichever point ended last, on whichever worker (the 64-node
		// points of the main job run one after another, but not always
		// on the same worker, and one whose predecessor ran on the other
		// worker mapped and faulted in its half gigabyte afresh).
		arena := hwmem.NewArena()
		defer arena.Close()
		// The idle memories and the points running stay within the
		// budget: a worker that waits for room leaves the arena what the
		// points running do not use, and one that starts a point keeps
		// that and the point's own estimate, which it takes from there.
		trim := func() { arena.Trim(gate.room()) }
		for range workers {
			wg.Go(func() {
				for {
					i, c, ok := gate.take(trim)
					if !ok {
						return
					}
					arena.Trim(gate.room() + mem[i])
					errs[i] = recoverJob(func(i int) error { return job(i, c, arena) }, i)
					gate.leave(i)
					finish(i)
				}
			})
		}
	} else {
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					errs[i] = recoverJob(func(i int) error { return job(i, cores, nil) }, i)
					finish(i)
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepWorkers is how many of n simulations forEach runs at once.
func sweepWorkers(cfg Config, env Env, n int) int {
	workers := cfg.Run.Parallel
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	if env.Tracer != nil {
		workers = 1
	}
	return max(1, min(workers, n))
}

// coresPerRun is how many cores each of n simulations run by forEach may
// use: the machine's cores shared by the simulations running at once.
func coresPerRun(cfg Config, env Env, n int) int {
	return max(1, runtime.GOMAXPROCS(0)/sweepWorkers(cfg, env, n))
}

// recoverJob runs job(i), returning a panic outside the simulated agents
// (building a cluster, say) as a *sim.PanicError: a sweep worker's panic
// would otherwise end the process before the command can report it.
func recoverJob(job func(int) error, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &sim.PanicError{Proc: fmt.Sprintf("sweep job %d", i), Value: r, Stack: string(debug.Stack())}
		}
	}()
	return job(i)
}
