package strategy

import (
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/model/verbs"
)

// GNNGPURDMA is GPU Native Networking, GPUrdma-style (the dissertation):
// GPU threads build verbs WQEs, ring the NIC's doorbell and poll the CQ.
const GNNGPURDMA Strategy = "GNN_GPURDMA"

// gnnDefs are the registry entries of the GPU-native strategies.
func gnnDefs() []Def {
	return []Def{
		{Info: Info{GNNGPURDMA, "GPUrdma, GPU-side GPI", "No", "Yes", "WQE build, doorbell, CQ poll", "Setup only", "GPU threads post verbs WQEs, ring the NIC doorbell and poll the CQ; no CPU on the path"},
			Caps: Stream | DeviceVerbs, Preset: "gpurdma", GPUMode: "dgpu", Setup: setupGPURDMA},
		gioDef(),
	}
}

// setupGPURDMA gives the node a kernel stream and the run's verbs domain
// (strategy.Get of *verbs.Domain and of the node's *verbs.Node).
func setupGPURDMA(n *Node, w *World) error {
	hw := w.hw(n)
	spec := w.Config.gnnSpec()
	if err := spec.Validate(); err != nil {
		return err
	}
	d := verbsDomain(w, spec)
	n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
	n.Provide(d)
	n.Provide(d.Node(n.Rank))
	return nil
}

// VerbsDomain returns the run's verbs domain as GNN_GPURDMA's node setups
// share it, building it now if none has: a workload that builds run-wide
// verbs state over every node (a GPI world) before the run starts, so
// that no node's setup writes another node's memory while a partitioned
// run's engines run in parallel. ok is false when the GPUrdma knobs are
// invalid (each node's setup reports that).
func VerbsDomain(w *World) (d *verbs.Domain, ok bool) {
	spec := w.Config.gnnSpec()
	if spec.Validate() != nil {
		return nil, false
	}
	return verbsDomain(w, spec), true
}

func verbsDomain(w *World, spec verbs.Spec) *verbs.Domain {
	return w.Shared("verbs", func() any { return verbs.NewDomain(w.Cluster, spec) }).(*verbs.Domain)
}

// gnnSpec returns the GPUrdma knobs, the defaults when the configuration
// leaves them unset.
func (c Config) gnnSpec() verbs.Spec {
	if c.GNN == (verbs.Spec{}) {
		return verbs.DefaultSpec()
	}
	return c.GNN
}

// GNNGIO is GPU Native Networking, GIO-style (the dissertation): the CPU
// templates WQEs ahead of the GPU, work-groups write the dynamic fields,
// flush the PCIe-path cache and ring the doorbell, behind the
// OpenSHMEM-style device API.
const GNNGIO Strategy = "GNN_GIO"

func gioDef() Def {
	return Def{Info: Info{GNNGIO, "GIO", "No", "Yes", "dynamic WQE fields, PPB flush, doorbell, CQ poll", "WQE templating ahead of the GPU",
		"the CPU templates verbs WQEs; work-groups fill the dynamic fields and ring the NIC from inside the kernel (OpenSHMEM-style API)"},
		Caps: Stream | DeviceShmem, Preset: "gio", GPUMode: "dgpu", Setup: setupShmem(shmem.GIO)}
}
