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

func TestDims3(t *testing.T) {
	for p, want := range map[int][3]int{1: {1, 1, 1}, 2: {2, 1, 1}, 8: {2, 2, 2}, 12: {3, 2, 2}, 16: {4, 2, 2}, 7: {7, 1, 1}, 64: {4, 4, 4}} {
		if got := dims3(p); got != want {
			t.Errorf("dims3(%d) = %v, want %v", p, got, want)
		}
	}
}

// Every rank receives each neighbour's face of every iteration (grids with
// dimensions of 1, 2 and more); a larger face takes longer; payload-free
// runs take the functional time.
func TestHalo3D(t *testing.T) {
	h100, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN} {
		for _, ranks := range []int{8, 16, 24} {
			run := func(face unit.Bytes, functional bool) Halo3DResult {
				c, err := cluster.New(sim.New(1), h100, ranks, functional)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Engine.Close()
				r, err := Halo3D{Face: face, Iters: 2, WGSize: 256}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
				if err != nil {
					t.Fatalf("%s %d ranks: %v", s, ranks, err)
				}
				return r
			}
			small, big, off := run(1*unit.KiB, true), run(256*unit.KiB, true), run(1*unit.KiB, false)
			t.Logf("%s %d ranks %v: 1 KiB %v, 256 KiB %v", s, ranks, small.Dims, small.Time, big.Time)
			if !small.Verified || !big.Verified || off.Verified {
				t.Errorf("%s %d ranks: verified %v %v, payload-free %v", s, ranks, small.Verified, big.Verified, off.Verified)
			}
			if big.Time <= small.Time {
				t.Errorf("%s %d ranks: 256 KiB faces %v, 1 KiB %v", s, ranks, big.Time, small.Time)
			}
			if off.Time != small.Time {
				t.Errorf("%s %d ranks: payload-free %v, functional %v", s, ranks, off.Time, small.Time)
			}
		}
	}
}
