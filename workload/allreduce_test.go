package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func runAllreduce(t *testing.T, s strategy.Strategy, nodes int, size unit.Bytes, functional bool) (AllreduceResult, uint64) {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), nodes, functional)
	if err != nil {
		t.Fatal(err)
	}
	a := Allreduce{Size: size, WGs: 4, WGSize: 256, CPUThreads: 8}
	res, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s on %d nodes: %v", s, nodes, err)
	}
	return res, e.Events()
}

func TestAllreduceCorrectOnAnyNodeCount(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		for _, n := range []int{2, 3, 5, 8, 13} {
			res, _ := runAllreduce(t, s, n, 64*unit.KiB+12, true)
			if !res.Verified || res.Time <= 0 {
				t.Errorf("%s n=%d: verified=%v time=%v", s, n, res.Verified, res.Time)
			}
		}
	}
}
