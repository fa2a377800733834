package exp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// TaskSpawnSpec holds the knobs of the remote task spawn (the dissertation's XTQ chapter).
type TaskSpawnSpec struct {
	MinSize    unit.Bytes `toml:"min_size" doc:"smallest payload; the sweep doubles it up to max_size" src:"DOC"`
	MaxSize    unit.Bytes `toml:"max_size" doc:"largest payload of the sweep" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare, CPU: handler on the target's application thread; HSA, XTQ: a GPU kernel (default, as the XTQ chapter runs them: CPU, HSA, XTQ)" src:"DOC"`
	WGSize     int        `toml:"wg_size" doc:"work-items per work-group of the copy kernel" src:"DEFAULT"`
	// The aim of the task (HSA, XTQ): the target registers its copy
	// kernel and queue at index 42; other values send a task the target
	// refuses, which the run reports naming the index.
	KernelIndex int        `toml:"kernel_index" doc:"HSA/XTQ: kernel lookup index the initiator's task names (the target registers 42)" src:"DOC"`
	QueueIndex  int        `toml:"queue_index" doc:"HSA/XTQ: queue lookup index the initiator's task names (the target registers 42)" src:"DOC"`
	CPUTasks    bool       `toml:"cpu_tasks" doc:"also run the active message as a CPU task (a host function on the target's CPU agent queue, the dissertation's XTQ chapter) under every remote-task strategy listed" src:"DOC"`
	RecvSize    unit.Bytes `toml:"recv_size" doc:"HSA/XTQ: bytes of the receive buffer the target posts; 0 = the task's command, arguments and payload exactly" src:"RUN"`
	WarmTarget  bool       `toml:"warm_target" doc:"the target's application thread writes the target buffer before the spawn (outside the timed window), so a CPU handler copies into cached lines, as a benchmark loop after its first iteration; false = one cold spawn (the documents do not say which they timed)" src:"DEFAULT"`
}

func (t TaskSpawnSpec) validate() error {
	var errs []error
	minOK := t.MinSize >= 1 && t.MinSize <= 64*unit.MiB
	if !minOK {
		errs = append(errs, fmt.Errorf("taskspawn.min_size = %v: must be in [1B, 64MiB]", t.MinSize))
	}
	switch {
	case minOK && (t.MaxSize < t.MinSize || t.MaxSize > 64*unit.MiB):
		errs = append(errs, fmt.Errorf("taskspawn.max_size = %v: must be in [taskspawn.min_size = %v, 64MiB]", t.MaxSize, t.MinSize))
	case !minOK && (t.MaxSize < 1 || t.MaxSize > 64*unit.MiB):
		// Its own range, without the bad taskspawn.min_size: a line
		// naming it is dropped as following from its own (cmd
		// dropDerived).
		errs = append(errs, fmt.Errorf("taskspawn.max_size = %v: must be in [1B, 64MiB]", t.MaxSize))
	}
	if t.WGSize < 1 || t.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("taskspawn.wg_size = %d: must be in [1, 1024]", t.WGSize))
	}
	if t.KernelIndex < 0 || t.KernelIndex > 1<<32-1 {
		errs = append(errs, fmt.Errorf("taskspawn.kernel_index = %d: must be in [0, 4294967295]", t.KernelIndex))
	}
	if t.QueueIndex < 0 || t.QueueIndex > 1<<16-1 {
		errs = append(errs, fmt.Errorf("taskspawn.queue_index = %d: must be in [0, 65535] (the packet's 16-bit field)", t.QueueIndex))
	}
	if t.RecvSize < 0 || t.RecvSize > 128*unit.MiB {
		errs = append(errs, fmt.Errorf("taskspawn.recv_size = %v: must be in [0, 128MiB]", t.RecvSize))
	}
	errs = append(errs, checkStrategies("taskspawn.strategies", t.Strategies, workloadStrategies("taskspawn")))
	return errors.Join(errs...)
}

// sizes returns min_size doubling up to max_size (max_size included).
func (t TaskSpawnSpec) sizes() []unit.Bytes {
	return doublings(t.MinSize, t.MaxSize)
}

// doublings returns lo, 2·lo, … while ≤ hi, then hi if not reached.
func doublings(lo, hi unit.Bytes) []unit.Bytes {
	var out []unit.Bytes
	for s := lo; s <= hi && s > 0; s *= 2 {
		out = append(out, s)
	}
	if len(out) == 0 || out[len(out)-1] != hi {
		out = append(out, hi)
	}
	return out
}

// taskSpawnPoint is one (size, strategy) simulation.
type taskSpawnPoint struct {
	Size     unit.Bytes `json:"size"`
	Strategy string     `json:"strategy"`
	CPUTask  bool       `json:"cpu_task"`
	Result   workload.TaskSpawnResult
	Events   uint64 `json:"events"`
}

// row is the point's timeline row label.
func (p taskSpawnPoint) row() string {
	if p.CPUTask {
		return fmt.Sprintf("%s cpu-task %v", p.Strategy, p.Size)
	}
	return fmt.Sprintf("%s %v", p.Strategy, p.Size)
}

func taskSpawnPoints() Points {
	return Points{List: xtqTableChecked(taskSpawnList, func(c Config) []string { return c.TaskSpawn.Strategies }), Simulate: taskSpawnSimulate, Assemble: taskSpawnAssemble}
}

func runTaskSpawn(cfg Config, env Env) (*report.Result, error) {
	return RunPoints(taskSpawnPoints(), cfg, env)
}

func taskSpawnList(cfg Config) ([]Point, error) {
	var pts []Point
	for _, size := range cfg.TaskSpawn.sizes() {
		for _, s := range cfg.TaskSpawn.Strategies {
			pc := cfg
			pc.TaskSpawn.MinSize, pc.TaskSpawn.MaxSize, pc.TaskSpawn.Strategies = size, size, []string{s}
			pc.TaskSpawn.CPUTasks = false
			pts = append(pts, Point{Label: fmt.Sprintf("%s %v", s, size), Config: pc})
			if cfg.TaskSpawn.CPUTasks && remoteTaskStrategy(s) {
				pc.TaskSpawn.CPUTasks = true
				pts = append(pts, Point{Label: fmt.Sprintf("%s cpu-task %v", s, size), Config: pc})
			}
		}
	}
	return pts, nil
}

// remoteTaskStrategy reports whether strategy s provides remote tasks
// (and so can run a CPU task).
func remoteTaskStrategy(s string) bool {
	for _, d := range strategy.Registry() {
		if string(d.Strategy) == s {
			return d.Caps.Has(strategy.RemoteTasks)
		}
	}
	return false
}

func taskSpawnSimulate(p Point, env Env) ([]byte, error) {
	ts := p.Config.TaskSpawn
	s, err := strategy.Parse(ts.Strategies[0])
	if err != nil {
		return nil, err
	}
	c, err := newRun(p.Config, env, p.Label, 2, s)
	if err != nil {
		return nil, err
	}
	defer c.Engine.Close()
	aim := &workload.TaskAim{Kernel: uint64(ts.KernelIndex), Queue: uint16(ts.QueueIndex), Recv: ts.RecvSize}
	r, err := workload.TaskSpawn{Size: ts.MinSize, WGSize: ts.WGSize, Aim: aim, CPUTask: ts.CPUTasks, WarmTarget: ts.WarmTarget}.Run(c, s, strategyConfig(p.Config))
	if err != nil {
		return nil, err
	}
	return json.Marshal(taskSpawnPoint{Size: ts.MinSize, Strategy: string(s), CPUTask: ts.CPUTasks, Result: r, Events: c.Engine.Events()})
}

// breakdownSizes are the sizes the timeline plot shows: 64 B and 4 KiB
// (the dissertation's XTQ chapter) when swept, else the smallest and the largest.
func breakdownSizes(sizes []unit.Bytes) []unit.Bytes {
	var out []unit.Bytes
	for _, s := range []unit.Bytes{64, 4 * unit.KiB} {
		if slices.Contains(sizes, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []unit.Bytes{sizes[0], sizes[len(sizes)-1]}
	}
	return out
}

func taskSpawnAssemble(cfg Config, raw [][]byte) (*report.Result, error) {
	points, err := decodeResults[taskSpawnPoint](raw)
	if err != nil {
		return nil, err
	}
	strats := cfg.TaskSpawn.Strategies
	base := strats[0]
	if slices.Contains(strats, "CPU") {
		base = "CPU"
	}
	baseline := map[unit.Bytes]float64{}
	for _, p := range points {
		if p.Strategy == base && !p.CPUTask {
			baseline[p.Size] = float64(p.Result.EndToEnd)
		}
	}
	summary := report.Table{Name: "end-to-end", Columns: []string{"size", "strategy", "impl", "agent", "end_to_end", "end_to_end_us", "vs_" + base, "events", "table_hits", "table_misses", "verified"}}
	breakdown := report.Table{Name: "breakdown", Columns: []string{"size", "strategy", "agent", "node", "phase", "start", "end", "duration"}}
	shown := breakdownSizes(cfg.TaskSpawn.sizes())
	plot := &report.Plot{Title: fmt.Sprintf("Remote task spawn breakdown (memcpy active message), preset %s", cfg.Run.Preset),
		XLabel: "time since the initiator's post (us)"}
	verified := true
	for _, p := range points {
		r := p.Result
		summary.Rows = append(summary.Rows, []any{p.Size, p.Strategy, r.Impl, r.Agent, r.EndToEnd, round3(r.EndToEnd.Micros()),
			round3(float64(r.EndToEnd) / baseline[p.Size]), p.Events, r.TableHits, r.TableMisses, r.Verified})
		for _, seg := range r.Phases {
			breakdown.Rows = append(breakdown.Rows, []any{p.Size, p.Strategy, r.Agent, seg.Node, seg.Phase, seg.Start, seg.End, seg.End - seg.Start})
			if slices.Contains(shown, p.Size) {
				plot.Bars = append(plot.Bars, report.Bar{Row: p.row(), Phase: seg.Phase,
					Start: seg.Start.Micros(), End: seg.End.Micros()})
			}
		}
		verified = verified && r.Verified
	}
	res := &report.Result{Experiment: "taskspawn", Seed: cfg.Run.Seed, Tables: []report.Table{summary, breakdown}, Plot: plot}
	res.Notes = append(res.Notes,
		"end-to-end = the initiator starts posting to the target CPU observing completion; phases share that time axis (0 = post)",
		"XTQ/HSA post ends when the NIC starts the gather put; CPU/HDN post ends when MPI_Isend returns (the NIC's command fetch is then part of the transfer)",
		"HSA transfer ends when the receive event is visible to the target CPU; XTQ transfer ends when the task's bytes are in the posted buffer",
		fmt.Sprintf("XTQ lookup tables: nic.xtq_tables = %s (table_hits/table_misses count the on-NIC cache of host-memory tables; a miss is a DMA read inside target enqueue)", cfg.NIC.XtqTables))
	if cfg.Run.Functional && verified {
		res.Notes = append(res.Notes, "functional: every target buffer equals the payload")
	}
	if cfg.Run.Preset != "xtq" {
		res.Notes = append(res.Notes, "the documents run this on preset xtq (--preset xtq)")
	}
	return res, nil
}
