package workload

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The device rings' work-groups as one state machine each (shmemRingSteps,
// verbsRingSteps) are their blocking loops: the multi-ring allreduce of
// COMPNET, GHN_DGPU_HOSTQ, GNN_GPURDMA (with 1-deep QPs too, whose
// writes wait for room in the coroutine) and GNN_GIO (its puts as steps:
// with 2-entry queues every put polls the CQ for a slot, and the puts
// stall for templates; with 60 template instructions on one host core
// more) ends at the same times per node, verified, with the same service
// energy, in the same number of events, run either way.
func TestDeviceRingStepsMatchLoops(t *testing.T) {
	shallow := verbs.DefaultSpec()
	shallow.QPDepth = 1
	gio2 := shmem.DefaultSpec()
	gio2.QueueEntries = 2
	gioSlow := shmem.DefaultSpec()
	gioSlow.GIO.TemplateInstr = 600
	gioSlowKernel := gioSlow // templates filled with the kernel: the first puts stall too
	gioSlowKernel.GIO.TemplateAtInit = false
	for _, c := range []struct {
		hw  cluster.Spec
		s   strategy.Strategy
		gnn verbs.Spec
		sh  shmem.Spec
	}{
		{cluster.CompNet(), strategy.COMPNET, verbs.Spec{}, shmem.Spec{}},
		{cluster.CompNet(), strategy.GHNDGPUHostQ, verbs.Spec{}, shmem.Spec{}},
		{cluster.GPURDMA(), strategy.GNNGPURDMA, verbs.Spec{}, shmem.Spec{}},
		{cluster.GPURDMA(), strategy.GNNGPURDMA, shallow, shmem.Spec{}},
		{cluster.GIO(), strategy.GNNGIO, verbs.Spec{}, shmem.Spec{}},
		{cluster.GIO(), strategy.GNNGIO, verbs.Spec{}, gio2},
		{cluster.GIO(), strategy.GNNGIO, verbs.Spec{}, gioSlow},
		{cluster.GIO(), strategy.GNNGIO, verbs.Spec{}, gioSlowKernel},
	} {
		run := func(loops bool) string {
			hw := c.hw
			hw.GPU.Mode = "dgpu"
			cl, err := cluster.New(sim.New(1), hw, 4, true)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Engine.Close()
			a := Allreduce{Size: 256 * unit.KiB, WGSize: 256, CPUThreads: 8, loopWGs: loops}
			r, err := a.Run(cl, c.s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: c.gnn, Shmem: c.sh})
			if err != nil {
				t.Fatalf("%s: %v", c.s, err)
			}
			if !r.Verified {
				t.Errorf("%s: not verified", c.s)
			}
			return fmt.Sprintf("%+v events %d", r, cl.Engine.Events())
		}
		loops, steps := run(true), run(false)
		if loops != steps {
			t.Errorf("%s (QP depth %d): loops %s\nsteps %s", c.s, c.gnn.QPDepth, loops, steps)
		}
	}
}
