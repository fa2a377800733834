package workload_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// The README's second Go API snippet: a workload on an engine and a
// cluster directly.
func Example_cluster() {
	seed := uint64(1)
	e := sim.New(seed)
	c, _ := cluster.New(e, cluster.GPUTN(), 8, true) // 8 nodes, real bytes
	r, err := workload.Allreduce{Size: 1 << 20, WGs: 16, WGSize: 256, CPUThreads: 8}.
		Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Time, r.Verified)
	// Output:
	// 157.326772us true
}

// Example_partitioned is Example_cluster split over two engines run in
// parallel (docs/parallel.md): the same result, on two cores.
func Example_partitioned() {
	seed := uint64(1)
	c, err := cluster.NewPartitioned(seed, cluster.GPUTN(), 8, 2, true) // 8 nodes, 2 partitions
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	r, err := workload.Allreduce{Size: 1 << 20, WGs: 16, WGSize: 256, CPUThreads: 8}.
		Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Time, r.Verified, c.Group.Partitions())
	// Output:
	// 157.326772us true 2
}
