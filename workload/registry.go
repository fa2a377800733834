package workload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Impl is one implementation of a workload, written against a set of
// programming-model capabilities (design-families.md), not a strategy.
type Impl struct {
	Name  string       // e.g. "triggered", "kernel-boundary"
	Needs strategy.Cap // every capability it programs against
}

// Def is one workload of the registry. The (strategy, workload) matrix is
// computed from it: a cell is the first implementation whose needs the
// strategy provides. A cell with no implementation must carry a reason in
// NotApplicable (the matrix test enforces it).
type Def struct {
	Name    string
	Summary string
	// Baseline is the strategy the workload's speedups are given against
	// (the dissertation: the baseline the workload names).
	Baseline strategy.Strategy
	// Preset is the hardware preset the documents run the workload on: the
	// matrix compares every strategy on it by default (matrix.hardware =
	// workload), so its speedups never divide times from two machines.
	Preset string
	// Impls in preference order.
	Impls []Impl
	// NotApplicable says, per strategy without an implementation, why the
	// workload does not apply to it.
	NotApplicable map[strategy.Strategy]string
	// Small runs the workload once at its small default size on s, on a
	// fresh cluster of hardware hw (the strategy's mode already applied),
	// for the matrix experiment.
	Small func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error)
}

// Cell is what one small run of a workload on a strategy measured.
type Cell struct {
	Impl     string   // implementation that ran
	Nodes    int      // cluster size used
	Time     sim.Time // the workload's own measure of completion
	Events   uint64   // engine events
	Verified bool     // checked against the serial reference
}

// Impl returns the implementation of d that strategy s runs, or false when
// none applies.
func (d Def) Impl(s strategy.Def) (Impl, bool) {
	for _, im := range d.Impls {
		if s.Caps.Has(im.Needs) {
			return im, true
		}
	}
	return Impl{}, false
}

// implFor is Impl for a strategy name, with an error naming the workload
// when the strategy is unknown or has no implementation.
func (d Def) implFor(s strategy.Strategy) (Impl, strategy.Def, error) {
	sd, err := strategy.Lookup(string(s))
	if err != nil {
		return Impl{}, sd, err
	}
	im, ok := d.Impl(sd)
	if !ok {
		why := d.NotApplicable[sd.Strategy]
		if why == "" {
			why = fmt.Sprintf("no implementation needs only %v", sd.Caps)
		}
		return Impl{}, sd, fmt.Errorf("%s does not run on %s: %s", d.Name, s, why)
	}
	return im, sd, nil
}

// Registry returns every workload, sorted by name.
func Registry() []Def {
	return []Def{AccumulateDef(), AllreduceDef(), AllreduceHierDef(), DDTUnpackDef(), Halo3DDef(), JacobiDef(), LatencyDef(), MoEDef(), PingPongDef(), PutLatencyDef(), ReduceDef(), SpTSDef(), TaskSpawnDef()}
}

// Lookup returns the registered workload named name.
func Lookup(name string) (Def, error) {
	var names []string
	for _, d := range Registry() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Def{}, fmt.Errorf("unknown workload %q: must be one of %s", name, strings.Join(names, ", "))
}

// newCluster builds the small cluster of a matrix cell: on nodes of
// several GPUs, fewer GPUs than whole nodes sit where node.placement puts
// them (cluster.New).
func newCluster(hw cluster.Spec, nodes int, seed uint64, functional bool) (*cluster.Cluster, error) {
	if _, total := hw.Node.Slots(nodes); hw.Topology.ValidateFor(total) != nil {
		return nil, fmt.Errorf("%w: %w", ErrHardwareShape, hw.Topology.ValidateFor(total))
	}
	return cluster.New(sim.New(seed), hw, nodes, functional)
}

// ErrHardwareShape wraps the error of a small instance whose node count
// the hardware's topology cannot join (a rail-optimised fat tree takes
// whole nodes of several GPUs): the cell does not fit that machine.
var ErrHardwareShape = errors.New("the small instance does not fit this hardware")

// AllreduceDef is the ring allreduce's registry entry. It has no overlap
// implementation: in the ring every step's reduction needs the chunk just
// received and the next send carries that reduction, so no kernel is
// independent of the host's MPI calls; HDN_OVERLAP runs the
// kernel-boundary ring.
func AllreduceDef() Def {
	return Def{
		Name:     "allreduce",
		Summary:  "strong-scaled float32 SUM ring allreduce (the dissertation)",
		Baseline: strategy.CPU,
		Preset:   "gputn", // the GPU-TN chapter's allreduce (Table 6.1)
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "remote-tasks", Needs: strategy.NICTasks},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: spinNotApplicable("the ring allreduce reduces on host or GPU cores; the sPIN strategies provide " +
			"receive-side datatype handlers on the NIC, and reductions inside handlers are not modelled"),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			const nodes = 4
			c, err := newCluster(hw, nodes, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			a := Allreduce{Size: 256 * unit.KiB, WGSize: 256, CPUThreads: hw.CPU.Cores}
			r, err := a.Run(c, s.Strategy, cfg)
			im, _ := AllreduceDef().Impl(s)
			return Cell{Impl: im.Name, Nodes: nodes, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// LatencyDef is the latency decomposition's registry entry.
func LatencyDef() Def {
	return Def{
		Name:     "latency",
		Summary:  "2-node GPU-kernel-to-remote-detect latency decomposition (the dissertation's GPU-TN chapter)",
		Baseline: strategy.HDN,
		Preset:   "gputn", // the GPU-TN chapter's latency decomposition (Table 6.1)
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
		},
		NotApplicable: map[strategy.Strategy]string{
			strategy.CPU:             "it times a GPU kernel's data reaching a remote node; the CPU strategy has no GPU",
			strategy.SpinSpecialized: spinNoGPU, strategy.SpinHPULocal: spinNoGPU, strategy.SpinROCP: spinNoGPU, strategy.SpinRWCP: spinNoGPU,
			strategy.XTQ: "it times a local kernel's data reaching a remote CPU; XTQ's primitive launches a remote kernel instead (see the taskspawn workload)",
		},
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			c, err := newCluster(hw, 2, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := Latency{Size: 64}.Run(c, s.Strategy, cfg)
			im, _ := LatencyDef().Impl(s)
			return Cell{Impl: im.Name, Nodes: 2, Time: r.EndToEnd, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// spinNoGPU is why the GPU-kernel workloads do not apply to the sPIN
// strategies.
const spinNoGPU = "it times a GPU kernel's data reaching a remote node; the sPIN strategies offload datatype processing to NIC handlers and have no GPU path"

// spinNotApplicable gives every sPIN strategy the same reason.
func spinNotApplicable(why string) map[strategy.Strategy]string {
	return map[strategy.Strategy]string{strategy.SpinSpecialized: why, strategy.SpinHPULocal: why, strategy.SpinROCP: why, strategy.SpinRWCP: why}
}
