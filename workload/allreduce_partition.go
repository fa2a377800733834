package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// partitionable reports whether allreduce implementation impl runs on a
// partitioned cluster (cluster.NewPartitioned) under strategy s: its nodes
// share nothing but the fabric during the run, so each node's agents can
// run on its partition's engine. The host and kernel-boundary rings (over
// MPI), the stream-triggered and the triggered rings qualify, and so do
// remote tasks (XTQ, HSA: each node's runtime keeps its own portals,
// queues and failure events, read only once the run is over) and the
// device-shmem ring over the queued backends (GHN_*, COMPNET: a PE's
// service threads drive its own node's OpenSHMEM over Portals; the team
// holds each PE's device in a slot of its own, written by that PE, and
// the service energy is summed per node after the run), and the
// device-verbs ring (GNN_GPURDMA): its GPI world (segments, notification
// areas, the ring's QP pairs and CQs on every node) is built before the
// run and only read during it, each node's verbs runtime on its own
// node's engine. GIO (device-shmem over verbs) too: each PE reserves
// and makes its own ends of its connections, numbered by who connects to
// whom (a connection's remote end is made by its own node when the first
// packet reaches it), and during the run reads of other PEs only what
// their setup wrote (heap keys, the symmetric heap's layout, QP numbers).
func partitionable(impl string, _ strategy.Strategy) bool {
	switch impl {
	case "host", "kernel-boundary", "stream-triggered", "triggered", "remote-tasks", "device-verbs", "device-shmem":
		return true
	}
	return false
}

// AllreducePartitionable reports whether strategy s runs the allreduce on
// a partitioned cluster (run.partitions > 1).
func AllreducePartitionable(s strategy.Strategy) bool {
	im, _, err := AllreduceDef().implFor(s)
	return err == nil && partitionable(im.Name, s)
}

func partitionRefusal(k int, s strategy.Strategy, impl string) error {
	return fmt.Errorf("run.partitions = %d: the %s allreduce (%s implementation) shares run-wide state across nodes and runs on one engine; the partitioned allreduce runs CPU, HDN, HDN_OVERLAP, GDS, GPUTN, XTQ, HSA, GHN_*, COMPNET, GNN_GIO and GNN_GPURDMA; use run.partitions=1", k, s, impl)
}

// Nodes per engine from which a partitioned allreduce pays on two idle
// cores, measured (docs/parallel.md, "When it pays"): a functional run's
// own memory traffic (inputs, payload copies, reductions, verification)
// splits with its nodes, so 8 8-MiB nodes per engine already gain (16
// nodes: 1.3x, 64: 1.4-1.5x); payload-free, the barrier of every window
// costs more than the events in it below about 64 nodes per engine (32
// nodes: 0.9-1.0x, 64: 0.8-1.2x, 128: 1.3-1.55x).
const (
	autoNodesFunctional  = 8
	autoNodesPayloadFree = 64
	// autoMaxEngines bounds the engines auto picks where more engines
	// than cores were not measured to pay; run.partitions = K asks for
	// more.
	autoMaxEngines = 2
	// From autoManyFrom payload-free nodes, an allreduce whose
	// implementation manyEnginesPay runs on autoManyEngines engines (on
	// no more threads than cores, sim.Group.Threads): each engine's
	// window then finds its few nodes' state in the core's caches
	// (docs/speed.md, "Engines per strategy"). Measured at 1,024 nodes
	// (16 and 32 engines alike, 64 slower); at 256 nodes 8 and 32
	// engines cost more CPU than 2 for every strategy measured.
	autoManyFrom    = 1024
	autoManyEngines = 32
)

// manyEnginesPay reports whether the allreduce implementation impl was
// measured to run faster on autoManyEngines engines than on two at
// autoManyFrom payload-free nodes: GPU-TN's triggered ring, whose
// per-node state (a control line per slice of every step) grows with
// the nodes.
func manyEnginesPay(impl string) bool {
	return impl == "triggered"
}

// AutoPartitions is the number of engines run.partitions = 0 (auto) runs
// one allreduce point of n nodes on, given cores free for it: as many as
// pay (one per autoNodes* nodes), no more than the cores, the leaves
// (cluster.MaxPartitions) or autoMaxEngines, and 1 wherever a partitioned
// run is refused
// (a strategy whose allreduce shares run-wide state, the flow network, no
// lookahead); random spines and a dragonfly's Valiant or UGAL routing
// split too (their paths are drawn per packet, net.Fabric.draw). From
// autoManyFrom payload-free nodes, a strategy whose engines were measured
// to pay beyond the cores (manyEnginesPay) gets autoManyEngines (at most
// the leaves); the caller runs them on at most cores threads
// (sim.Group.SetThreads). spec is the strategy's adjusted cluster spec. The results
// are those of one engine (TestPartitionedAllreduceMatchesSequential);
// only the wall time differs.
func AutoPartitions(spec cluster.Spec, n int, functional bool, s strategy.Strategy, cores int) int {
	if cores < 2 || !AllreducePartitionable(s) || cluster.CanPartition(spec) != nil {
		return 1
	}
	most := cluster.MaxPartitions(spec, n)
	if !functional && n >= autoManyFrom {
		if im, _, err := AllreduceDef().implFor(s); err == nil && manyEnginesPay(im.Name) {
			return max(1, min(most, autoManyEngines))
		}
	}
	per := autoNodesPayloadFree
	if functional {
		per = autoNodesFunctional
	}
	return max(1, min(cores, autoMaxEngines, most, n/per))
}
