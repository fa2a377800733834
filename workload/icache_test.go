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

// An allreduce's reduction kernels are one code launched once per step
// (named reduce[i], step[i] apart for the trace), so a GPU's instruction
// caches miss on a kernel's first launch only: the misses do not grow
// with the ring's steps. Before, the step in the name made every launch
// new code that missed to memory.
func TestReduceKernelsHitTheInstructionCache(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.HDN, strategy.GDS, strategy.HDNOverlap} {
		misses := func(nodes int) uint64 {
			cl, err := cluster.New(sim.New(1), cluster.GPUTN(), nodes, true)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Engine.Close()
			a := Allreduce{Size: 64 * unit.KiB, WGSize: 256, CPUThreads: 8}
			r, err := a.Run(cl, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if !r.Verified {
				t.Errorf("%s: not verified", s)
			}
			return cl.Nodes[0].GPU.Stats().ICacheMisses
		}
		m2, m8 := misses(2), misses(8)
		if m2 == 0 || m8 != m2 {
			t.Errorf("%s: node 0's instruction-cache misses %d on 2 nodes, %d on 8 (7 steps a phase), want the same, not 0", s, m2, m8)
		}
	}
}
