package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/strategy"
)

// partitionable reports whether allreduce implementation impl runs on a
// partitioned cluster (cluster.NewPartitioned): its nodes share nothing
// but the fabric during the run, so each node's agents can run on its
// partition's engine. The host and kernel-boundary rings (over MPI), the
// stream-triggered and the triggered rings qualify; the device-shmem and
// device-verbs rings build run-wide state (a symmetric heap team, a GPI
// world) and sum service energy into one result, and remote tasks share
// failure bookkeeping across nodes, so they run on one engine.
func partitionable(impl string) bool {
	switch impl {
	case "host", "kernel-boundary", "stream-triggered", "triggered":
		return true
	}
	return false
}

// AllreducePartitionable reports whether strategy s runs the allreduce on
// a partitioned cluster (run.partitions > 1).
func AllreducePartitionable(s strategy.Strategy) bool {
	im, _, err := AllreduceDef().implFor(s)
	return err == nil && partitionable(im.Name)
}

func partitionRefusal(k int, s strategy.Strategy, impl string) error {
	return fmt.Errorf("run.partitions = %d: the %s allreduce (%s implementation) shares run-wide state across nodes and runs on one engine; the partitioned allreduce runs CPU, HDN, GDS and GPUTN; use run.partitions=1", k, s, impl)
}
