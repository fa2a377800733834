package workload_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// An allreduce of 64 KiB on four nodes under each strategy, on preset
// gputn, with real bytes verified against the serial sum.
func ExampleAllreduce_Run() {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		e := sim.New(1)
		c, _ := cluster.New(e, cluster.GPUTN(), 4, true)
		a := workload.Allreduce{Size: 64 * unit.KiB, WGs: 4, WGSize: 256, CPUThreads: 8}
		r, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-5s %v verified=%v\n", s, r.Time, r.Verified)
	}
	// Output:
	// CPU   18.296652us verified=true
	// HDN   39.58281us verified=true
	// GDS   35.519378us verified=true
	// GPUTN 13.108307us verified=true
}
