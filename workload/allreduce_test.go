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
	return runAllreduceOn(t, cluster.GPUTN(), s, nodes, size, functional)
}

func runAllreduceOn(t *testing.T, hw cluster.Spec, s strategy.Strategy, nodes int, size unit.Bytes, functional bool) (AllreduceResult, uint64) {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, hw, nodes, functional)
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

// In dGPU mode (preset compnet) stores sit in a write-back L2 until a
// system-scope release; every strategy must still produce the exact sum.
func TestAllreduceCorrectInDGPUMode(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		res, _ := runAllreduceOn(t, cluster.CompNet(), s, 3, 48*unit.KiB+8, true)
		if !res.Verified {
			t.Errorf("%s: not verified", s)
		}
	}
}

// Payload-free runs keep the timing of functional runs exactly.
func TestPayloadFreeTimingMatchesFunctional(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		fun, ev1 := runAllreduce(t, s, 4, 64*unit.KiB, true)
		free, ev2 := runAllreduce(t, s, 4, 64*unit.KiB, false)
		if fun.Time != free.Time || ev1 != ev2 || free.Verified {
			t.Errorf("%s: functional %v (%d events) vs payload-free %v (%d events, verified=%v)", s, fun.Time, ev1, free.Time, ev2, free.Verified)
		}
	}
}

// Two runs with one seed are identical, event for event.
func TestAllreduceDeterministic(t *testing.T) {
	a, ea := runAllreduce(t, strategy.GPUTN, 5, 40*unit.KiB, true)
	b, eb := runAllreduce(t, strategy.GPUTN, 5, 40*unit.KiB, true)
	if a.Time != b.Time || ea != eb {
		t.Fatalf("run 1 %v/%d events, run 2 %v/%d events", a.Time, ea, b.Time, eb)
	}
}
