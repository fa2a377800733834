package workload

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func gpurdmaAllreduce(t *testing.T, nodes int, size unit.Bytes, spec verbs.Spec) (AllreduceResult, error) {
	t.Helper()
	hw := cluster.GPURDMA()
	hw.GPU.Mode = "dgpu"
	c, err := cluster.New(sim.New(1), hw, nodes, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	a := Allreduce{Size: size, WGSize: 256, CPUThreads: 8}
	return a.Run(c, strategy.GNNGPURDMA, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: spec})
}

// The device-verbs ring (GPU threads post RDMA writes with a trailing
// sequence word and poll it) gives the exact sum on odd and even node
// counts, with the visibility checker on.
func TestDeviceVerbsAllreduce(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.CheckVisibility = true
	for _, n := range []int{2, 3, 5} {
		res, err := gpurdmaAllreduce(t, n, 96*unit.KiB+4, spec)
		if err != nil || !res.Verified || res.Time <= 0 || res.Slices < 1 {
			t.Errorf("n=%d: %+v, %v", n, res, err)
		}
	}
}

// With peer-to-peer writes reordered under load (the GPUrdma paper), the
// trailing sequence word can land before its slice: the ring reads a
// stale slice and the result no longer matches the serial sum.
func TestDeviceVerbsAllreduceReorderHazard(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.P2PWriteReorder, spec.ReorderThreshold = true, 0.01
	_, err := gpurdmaAllreduce(t, 3, 4*unit.MiB, spec)
	if err == nil || !strings.Contains(err.Error(), "want") {
		t.Fatalf("reordered peer-to-peer writes: %v, want a verification failure", err)
	}
}
