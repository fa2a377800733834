package exp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/unit"
)

// TodaySpec holds the knobs of the today study: the present-day presets
// it runs the present-day workloads on.
type TodaySpec struct {
	Presets []string `toml:"presets" doc:"present-day presets to compare, each with its own default parameters and the strategies its NIC runs" src:"DEFAULT"`
}

func defaultToday() TodaySpec {
	return TodaySpec{Presets: []string{"h100-cx7", "mi300a-ss11", "gh200", "gh200-cx7"}}
}

func (t TodaySpec) validate() error {
	if len(t.Presets) == 0 {
		return fmt.Errorf("today.presets is empty: must list presets such as h100-cx7, mi300a-ss11, gh200, gh200-cx7")
	}
	var errs []error
	for _, p := range t.Presets {
		if _, err := cluster.Preset(p); err != nil {
			errs = append(errs, fmt.Errorf("today.presets: %w", err))
		}
	}
	return errors.Join(errs...)
}

func quickToday(cfg *Config) {
	cfg.PingPong.MinSize, cfg.PingPong.MaxSize = 8, 64
	cfg.AllreduceHier.Size, cfg.AllreduceHier.Nodes = 16*unit.KiB, []int{1, 2}
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Nodes = 1*unit.KiB, 1*unit.KiB, []int{1}
}

// runToday runs pingpong, allreduce_hier and halo3d on every preset of
// today.presets, each over every strategy with an implementation that the
// preset's NIC runs, and tabulates the fastest strategy per point and the
// ranges each one wins.
func runToday(cfg Config, env Env) (*report.Result, error) {
	points := report.Table{Name: "winners", Columns: []string{"preset", "workload", "point", "fastest", "time_us", "runner_up", "runner_up_us", "margin_pct"}}
	where := report.Table{Name: "where", Columns: []string{"preset", "workload", "points", "fastest"}}
	type run struct {
		name string
		run  func(Config, Env) (*report.Result, error)
		// point names a winner row; the rows' first columns differ per
		// experiment.
		point func(row []any) (string, []any)
	}
	runs := []run{
		{"pingpong", runPingPong, func(r []any) (string, []any) { return fmt.Sprint(r[0]), r[1:] }},
		{"allreduce_hier", runAllreduceHier, func(r []any) (string, []any) { return fmt.Sprintf("%v GPUs", r[1]), r[2:] }},
		{"halo3d", runHalo3D, func(r []any) (string, []any) { return fmt.Sprintf("%v nodes, %v faces", r[0], r[1]), r[2:] }},
	}
	for _, preset := range cfg.Today.Presets {
		pc, err := DefaultConfig(preset)
		if err != nil {
			return nil, fmt.Errorf("today.presets: %w", err)
		}
		pc.Run = cfg.Run
		pc.Run.Preset = preset
		// The workloads' sizes come from the run; the strategies from the
		// preset's defaults (those its NIC runs).
		pc.PingPong.MinSize, pc.PingPong.MaxSize, pc.PingPong.Iters, pc.PingPong.Placement = cfg.PingPong.MinSize, cfg.PingPong.MaxSize, cfg.PingPong.Iters, cfg.PingPong.Placement
		pc.AllreduceHier.Size, pc.AllreduceHier.Nodes = cfg.AllreduceHier.Size, cfg.AllreduceHier.Nodes
		pc.Halo3D.MinFace, pc.Halo3D.MaxFace, pc.Halo3D.Nodes, pc.Halo3D.Iters = cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Nodes, cfg.Halo3D.Iters
		if pc.PingPong.Placement == "fabric" && pc.Node.GPUs < 2 {
			pc.PingPong.Placement = "rails" // one GPU per node: only the rails
		}
		for _, w := range runs {
			res, err := w.run(pc, env)
			if err != nil {
				return nil, fmt.Errorf("today: %s on %s: %w", w.name, preset, err)
			}
			var first, last, cur string
			flush := func() {
				if cur != "" {
					span := first
					if last != first {
						span = first + " – " + last
					}
					where.Rows = append(where.Rows, []any{preset, w.name, span, cur})
				}
			}
			for _, r := range res.Tables[1].Rows {
				pt, rest := w.point(r)
				margin := ""
				if ru, ok := rest[3].(float64); ok && ru > 0 {
					margin = fmt.Sprintf("%.1f", 100*(ru-rest[1].(float64))/ru)
				}
				points.Rows = append(points.Rows, []any{preset, w.name, pt, rest[0], rest[1], rest[2], rest[3], margin})
				if win := rest[0].(string); win != cur {
					flush()
					first, cur = pt, win
				}
				last = pt
			}
			flush()
		}
	}
	res := &report.Result{Experiment: "today", Seed: cfg.Run.Seed, Tables: []report.Table{where, points}}
	res.Notes = append(res.Notes,
		"each preset runs with its own default parameters (hardware --set values do not carry over) and the strategies with an implementation that its NIC runs; workload sizes (pingpong.*, allreduce_hier.*, halo3d.*) come from this run",
		"kernel launch and teardown, switch latency, the GPU fabric's latency and the NIC's command costs are DEFAULT (no source): sweep them (gpunetsim sensitivity, --sweep) before trusting a winner; the tornado over them is not part of this study yet",
		"between GPUs of one node, device-shmem strategies use peer stores, loads and atomics (shmem.peer_access) and GPU-aware MPI moves rendezvous messages by copy engine (mpi.ipc); eager MPI messages, streams and triggered operations take their NIC path carried by the GPU fabric",
		"not in this study yet: MoE dispatch/combine, the 26-neighbour halo, the one-sided and device-initiated families on allreduce_hier and halo3d")
	return res, nil
}
