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

// TestGPUTNAllreduceOnSpinFourNodes is the regression test of a deadlock:
// on preset spin (the i7-4770's slower DRAM), 4 nodes, 16 slices = the 16
// trigger entries, the first slice's reductions finished well before the
// others' and it raced through the allgather; its trigger of a put the
// host had not registered yet stalled the NIC's trigger FIFO while the
// registrations of the slower slices held every entry and their triggers
// queued behind it. The kernel now triggers a put beyond the first 16
// only once the NIC's registration word covers it: the run completes,
// verified, and the FIFO never stalls.
func TestGPUTNAllreduceOnSpinFourNodes(t *testing.T) {
	e := sim.New(1)
	c, err := cluster.New(e, cluster.Spin(), 4, true)
	if err != nil {
		t.Fatal(err)
	}
	a := Allreduce{Size: 8 * unit.MiB, WGSize: 256, CPUThreads: 8}
	if w := a.Slices(4); w != c.Spec.NIC.TrigMaxEntries {
		t.Fatalf("slices %d, want the %d trigger entries (the deadlocking set-up)", w, c.Spec.NIC.TrigMaxEntries)
	}
	res, err := a.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("GPUTN on spin, 4 nodes: %v", err)
	}
	if !res.Verified {
		t.Fatal("not verified")
	}
	for i, nd := range c.Nodes {
		if s := nd.NIC.Stats(); s.TrigStalls != 0 || s.TrigFires != uint64(2*3*16) {
			t.Errorf("node %d: %d trigger FIFO stalls, %d fires; want 0 and %d", i, s.TrigStalls, s.TrigFires, 2*3*16)
		}
	}
}

// A functional ring gives each receive slot's pages back once the step has
// reduced it (mem.Memory.Consume), and still computes the exact sum: every
// strategy of the main job, on a vector large enough that the node
// memories are mapped outside the heap and the slots span whole pages.
func TestAllreduceConsumesReceiveSlots(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN, strategy.GHNAPU} {
		e := sim.New(1)
		c, err := cluster.New(e, cluster.GPUTN(), 4, true)
		if err != nil {
			t.Fatal(err)
		}
		a := Allreduce{Size: 4*unit.MiB + 12, WGSize: 256, CPUThreads: 8}
		res, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var given uint64
		for _, nd := range c.Nodes {
			given += nd.Mem.Consumed()
		}
		// 3 reduce-scatter steps per node, a quarter of the vector each:
		// every page of the receive slots (a page that slots share goes
		// once all of them are consumed, mem.ScratchSlots) but the two at
		// the range's ends, which it shares with the data.
		if want := uint64(4) * (3*uint64(a.Size)/4 - 2*4096); !res.Verified || given < want {
			t.Errorf("%s: verified=%v, %d bytes of receive slots given back, want ≥ %d", s, res.Verified, given, want)
		}
	}
}
