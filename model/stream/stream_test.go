package stream

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The stream runs in order: a wait-value gates the kernel after it, and the
// CP sees the word at its next 100 ns poll tick.
func TestWaitValueGatesLaterOperations(t *testing.T) {
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := c.Nodes[0]
	flag := nd.Mem.AllocData(mem.GPU, 8, "flag")
	var bodyStart sim.Time
	var run *gpu.Run
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, cost.Default())
		s.WaitValue(flag, "flag", func(v uint64) bool { return v == 1 })
		run = s.Launch(gpu.Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *gpu.WG) { bodyStart = wg.Now() }})
		s.Synchronize()
	})
	e.At(10*sim.Microsecond+30*sim.Nanosecond, func() { nd.Mem.Store64(flag, 1) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !run.Finished() {
		t.Fatal("kernel did not finish")
	}
	if run.LaunchStart < 10*sim.Microsecond+30*sim.Nanosecond {
		t.Fatalf("kernel launched at %v, before the flag was set", run.LaunchStart)
	}
	if run.LaunchStart%(100*sim.Nanosecond) == 30*sim.Nanosecond {
		t.Errorf("the CP saw the flag at the store itself (%v), not at a poll tick", run.LaunchStart)
	}
	if bodyStart < run.LaunchStart+nd.GPU.Spec().Launch {
		t.Errorf("body at %v, before launch %v + overhead", bodyStart, run.LaunchStart)
	}
}

// Host kernel launch and wait: the host sees completion after teardown.
func TestLaunchAndWait(t *testing.T) {
	e := sim.New(1)
	c, _ := cluster.New(e, cluster.GPUTN(), 1, true)
	nd := c.Nodes[0]
	var waited sim.Time
	var run *gpu.Run
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, cost.Default())
		run = s.Launch(gpu.Kernel{Name: "k", WGs: 4, WGSize: 256, Body: func(wg *gpu.WG) { wg.VALU(100) }})
		s.Wait(run)
		waited = th.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if waited < run.Done || run.Done-run.BodyEnd != nd.GPU.Spec().Teardown {
		t.Fatalf("host woke at %v, kernel done %v (teardown %v)", waited, run.Done, run.Done-run.BodyEnd)
	}
}
