package loggops

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
)

// The estimate follows what a run holds and does: an all-to-all holds
// every operation from the start and its events grow as ranks² (the
// estimate within a factor of two of the run's count), a ring holds a few
// operations per rank.
func TestEstimateRun(t *testing.T) {
	a2a := goal.AllToAll(64, 8)
	est := EstimateRun(a2a)
	if est.HeldOps != 64*2*63 {
		t.Errorf("alltoall 64: held %v operations, want %d", est.HeldOps, 64*2*63)
	}
	res, err := Run(a2a, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if r := est.Events / float64(res.Events); r < 0.5 || r > 2 {
		t.Errorf("alltoall 64: estimated %.3g events, ran %d", est.Events, res.Events)
	}
	if float64(res.PeakOps) > est.HeldOps {
		t.Errorf("alltoall 64: peak %d operations above the estimate %v", res.PeakOps, est.HeldOps)
	}
	big := EstimateRun(goal.AllToAll(10000, 8))
	if big.Bytes() < 30e9 {
		t.Errorf("alltoall 10000: %.3g bytes; its 2·10^8 operations alone take more than 30 GB", big.Bytes())
	}
	ring := EstimateRun(goal.Ring(1<<20, 8<<20))
	if ring.Bytes() > 4e9 || ring.HeldOps > 8<<20 {
		t.Errorf("ring 2^20: %.3g bytes, %v held operations; want a few operations per rank", ring.Bytes(), ring.HeldOps)
	}
}
