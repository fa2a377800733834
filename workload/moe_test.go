package workload

import (
	"runtime"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

func runMoE(t *testing.T, preset string, s strategy.Strategy, m MoE, functional bool) MoEResult {
	t.Helper()
	hw, err := cluster.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(sim.New(1), hw, m.Routing.Shape.GPUs, functional)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := m.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s %s on %s: %v", s, m.Mode, preset, err)
	}
	return r
}

func moeRouting(t *testing.T, sh MoEShape) *Routing {
	t.Helper()
	r, err := SeededRouting(sh, 7)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// Every implementation lands every entry at its experts' GPU and returns
// the weighted sum (verified), in both modes, on both NIC families.
func TestMoEVerified(t *testing.T) {
	cases := []struct {
		preset string
		s      strategy.Strategy
	}{
		{"h100-cx7", strategy.CPU}, {"h100-cx7", strategy.HDN}, {"h100-cx7", strategy.GDS}, {"h100-cx7", strategy.GNNGIO}, {"h100-cx7", strategy.GNNGPURDMA},
		{"mi300a-ss11", strategy.GPUTN}, {"mi300a-ss11", strategy.GDS},
	}
	for _, tc := range cases {
		for _, mode := range []string{MoELowLatency, MoEThroughput} {
			gpus := 16
			if tc.preset == "mi300a-ss11" {
				gpus = 8
			}
			rt := moeRouting(t, MoEShape{GPUs: gpus, Experts: 2 * gpus, TopK: 4, Tokens: 8})
			r := runMoE(t, tc.preset, tc.s, MoE{Mode: mode, Hidden: 256, Routing: rt, CommWGs: 4, WGSize: 256}, true)
			t.Logf("%-12s %-7s %-13s %-16s dispatch %v combine %v intra %.0f inter %.0f B/GPU, %d WGs",
				tc.preset, tc.s, mode, r.Impl, r.Dispatch, r.Combine, r.DispatchIntra, r.DispatchInter, r.CommWGs)
			if !r.Verified || r.Dispatch <= 0 || r.Combine <= 0 {
				t.Errorf("%s %s %s: %+v", tc.preset, tc.s, mode, r)
			}
		}
	}
}

func TestMoEBadInput(t *testing.T) {
	rt := moeRouting(t, MoEShape{GPUs: 8, Experts: 16, TopK: 2, Tokens: 4})
	for _, tc := range []struct {
		m    MoE
		want string
	}{
		{MoE{Mode: "fast", Hidden: 256, Routing: rt, CommWGs: 1, WGSize: 64}, "mode"},
		{MoE{Mode: MoELowLatency, Hidden: 100, Routing: rt, CommWGs: 1, WGSize: 64}, "moe.hidden"},
		{MoE{Mode: MoELowLatency, Hidden: 256, Routing: rt, CommWGs: 0, WGSize: 64}, "moe.comm_wgs"},
	} {
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %s", tc.m, err, tc.want)
		}
	}
}

// gnn.qps in the device-verbs MoE: each peer is served by one work-group,
// so no two work-groups share a QP (a QP belongs to one peer); with fewer
// QPs per peer than work-groups every write still takes its QP's ticket
// (an atomic, a poll, a release and an atomic in GPU memory), so the
// dispatch with 1 QP per peer is a little later than with 8 (43.9 against
// 41.7 µs; 121.1 while one lock per QP index was shared by every peer),
// and the bytes still land (verified).
func TestMoEDeviceVerbsQPs(t *testing.T) {
	hw, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	rt := moeRouting(t, MoEShape{GPUs: 16, Experts: 32, TopK: 4, Tokens: 8})
	run := func(qps int) MoEResult {
		c, err := cluster.New(sim.New(1), hw, 16, true)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		gnn := verbs.DefaultSpec()
		gnn.QPs = qps
		r, err := MoE{Mode: MoELowLatency, Hidden: 256, Routing: rt, CommWGs: 8, WGSize: 256}.Run(c, strategy.GNNGPURDMA,
			strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: gnn})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, eight := run(1), run(8)
	t.Logf("dispatch with 1 QP per peer %v, with 8 %v", one.Dispatch, eight.Dispatch)
	if !one.Verified || !eight.Verified {
		t.Errorf("not verified: %+v %+v", one, eight)
	}
	if one.Dispatch <= eight.Dispatch {
		t.Errorf("dispatch with 1 QP %v, with 8 QPs %v: the ticket should cost", one.Dispatch, eight.Dispatch)
	}
}

// GDS reaches the GPUs of its own node by copy-engine copies (one batch
// per phase), not by the NIC: on one 8-GPU h100-cx7 node no NIC sends a
// packet and both phases verify.
func TestMoEGDSPeerCopies(t *testing.T) {
	hw := cluster.H100CX7()
	c, err := cluster.New(sim.New(1), hw, 8, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	rt := moeRouting(t, MoEShape{GPUs: 8, Experts: 16, TopK: 4, Tokens: 8})
	r, err := MoE{Mode: MoELowLatency, Hidden: 256, Routing: rt, CommWGs: 4, WGSize: 256}.Run(c, strategy.GDS, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatal(err)
	}
	pk, copies := nicPacketsAndPeerCopies(c)
	if !r.Verified || pk != 0 || copies == 0 {
		t.Errorf("one node: verified %v, %d NIC packets, %d peer copies; want verified, none, some", r.Verified, pk, copies)
	}
}

// A payload-free two-sided MoE in the flow model allocates far less than
// the bytes it moves: its messages carry no payload buffers. The flags
// after the slots were control words for every implementation, so every
// message whose last line held the next slot's flag carried a zeroed
// buffer of its whole length (EP 128 in throughput mode ran out of memory).
func TestMoETwoSidedPayloadFreeAllocatesNoPayload(t *testing.T) {
	hw, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	hw.Network.Model = "flow"
	rt := moeRouting(t, MoEShape{GPUs: 16, Experts: 32, TopK: 8, Tokens: 512})
	c, err := cluster.New(sim.New(1), hw, 16, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := MoE{Mode: MoEThroughput, Hidden: 7168, Routing: rt, CommWGs: 4, WGSize: 256}.Run(c, strategy.HDN,
		strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	moved := 16 * (r.DispatchIntra + r.DispatchInter + r.CombineIntra + r.CombineInter)
	if alloc := float64(after.TotalAlloc - before.TotalAlloc); alloc > moved/4 {
		t.Fatalf("allocated %.0f MB for %.0f MB moved", alloc/1e6, moved/1e6)
	}
}
