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

func gnnConfig(mod func(*verbs.Spec)) strategy.Config {
	s := verbs.DefaultSpec()
	if mod != nil {
		mod(&s)
	}
	return strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: s}
}

func gpurdmaCluster(t *testing.T, mod func(*cluster.Spec)) *cluster.Cluster {
	t.Helper()
	hw := cluster.GPURDMA()
	if mod != nil {
		mod(&hw)
	}
	c, err := newCluster(hw, 2, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Engine.Close)
	return c
}

// Each optimisation lowers the per-message time of the single-thread
// benchmark, and the bandwidth of large messages approaches the wire.
func TestRdmaBWOptimisationsHelp(t *testing.T) {
	variants := []func(*verbs.Spec){
		nil,
		func(s *verbs.Spec) { s.WQEReuse = true },
		func(s *verbs.Spec) { s.WQEReuse, s.Pipeline = true, true },
		func(s *verbs.Spec) { s.WQEReuse, s.Pipeline, s.BatchDoorbell = true, true, true },
	}
	var prev RdmaBWResult
	for i, v := range variants {
		r, err := RdmaBW{Size: 64, Msgs: 64}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(v))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Verified {
			t.Fatal("not verified")
		}
		if i > 0 && !(r.PerMsg < prev.PerMsg) {
			t.Errorf("variant %d: %v per message, not below the previous %v", i, r.PerMsg, prev.PerMsg)
		}
		t.Logf("variant %d: %v per message (WQE %v, doorbell %v, poll %v)", i, r.PerMsg, r.WQE, r.Doorbell, r.Poll)
		prev = r
	}
	big, err := RdmaBW{Size: 256 * unit.KiB, Msgs: 16}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA,
		gnnConfig(func(s *verbs.Spec) { s.WQEReuse, s.Pipeline, s.BatchDoorbell = true, true, true }))
	if err != nil {
		t.Fatal(err)
	}
	wire := 56e9 / 8 / 1e9 * 2048 / (2048 + 64) // payload share of FDR
	if big.GBps < 0.8*wire || big.GBps > wire {
		t.Errorf("256 KiB messages at %.2f GB/s: want near the wire's %.2f GB/s", big.GBps, wire)
	}
}

func TestRdmaMultiQPModes(t *testing.T) {
	rates := map[string]float64{}
	for _, mode := range []string{"warp", "block", "cpu"} {
		r, err := RdmaMultiQP{Size: 64, Msgs: 64, Mode: mode, Warps: 8}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA,
			gnnConfig(func(s *verbs.Spec) { s.WQEReuse, s.Pipeline, s.BatchDoorbell, s.QPDepth = true, true, true, 64 }))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if !r.Verified || r.EnginesMax < 2 {
			t.Fatalf("%s: verified %v, engines %d", mode, r.Verified, r.EnginesMax)
		}
		rates[mode] = r.MsgRate
		t.Logf("%s: %.2f Mmsg/s, %d B per QP", mode, r.MsgRate, r.QPBytes)
	}
	if rates["block"] <= rates["warp"] {
		t.Errorf("collaborative post (%.2f Mmsg/s) not faster than per-warp single threads (%.2f)", rates["block"], rates["warp"])
	}
}

func TestGPIPingPong(t *testing.T) {
	rtt := map[string]sim.Time{}
	for _, w := range []string{"gpu", "cpu"} {
		r, err := GPIPingPong{Iters: 20, Worker: w}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
		if err != nil || !r.Verified {
			t.Fatalf("%s: %v verified %v", w, err, r.Verified)
		}
		rtt[w] = r.RoundTrip
	}
	t.Logf("round trip: GPU worker %v, CPU worker %v", rtt["gpu"], rtt["cpu"])
	if rtt["gpu"] <= rtt["cpu"] {
		t.Errorf("the single-thread GPU notify path (%v) should be slower than the CPU's (%v)", rtt["gpu"], rtt["cpu"])
	}
}

func TestGPIThroughputAndOverlap(t *testing.T) {
	for _, tc := range []GPIThroughput{
		{Size: 3 * unit.MiB, Queues: 6, Worker: "cpu"},
		{Size: 3 * unit.MiB, Queues: 6, Worker: "gpu"},
		{Size: 3 * unit.MiB, Queues: 6, Worker: "gpu", Overlap: true},
	} {
		r, err := tc.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
		if err != nil || !r.Verified {
			t.Fatalf("%+v: %v", tc, err)
		}
		t.Logf("%s overlap=%v: %.1f Gbit/s", tc.Worker, tc.Overlap, r.Gbps)
	}
}

// The throughput ping-pong's figure is one direction's bytes over the
// time: whatever the variant, it stays at or below the link's rate per
// direction (the overlapped variant keeps both directions busy, and its
// both-directions sum, labelled as such, is what may exceed it).
func TestGPIThroughputNeverExceedsTheLink(t *testing.T) {
	link := float64(cluster.GPURDMA().Link.Bandwidth) * 8 / 1e9
	for _, tc := range []GPIThroughput{
		{Size: 3 * unit.MiB, Queues: 6, Rounds: 3, Worker: "cpu"},
		{Size: 3 * unit.MiB, Queues: 6, Rounds: 3, Worker: "gpu"},
		{Size: 3 * unit.MiB, Queues: 6, Rounds: 3, Worker: "gpu", Overlap: true},
	} {
		r, err := tc.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
		if err != nil || !r.Verified {
			t.Fatalf("%+v: %v", tc, err)
		}
		if r.Gbps > link || r.Gbps <= 0 {
			t.Errorf("%s overlap=%v: %.1f Gbit/s one direction, link %.0f Gbit/s", tc.Worker, tc.Overlap, r.Gbps, link)
		}
		if r.GbpsBoth != 2*r.Gbps {
			t.Errorf("both directions %.1f, want twice %.1f", r.GbpsBoth, r.Gbps)
		}
	}
}

// With the reorder hazard on, the matrix-vector stream's blocks check
// their share against the batch's CRC before using it and the results
// are right; without the check they are not.
func TestGPIMatVecReorderValidated(t *testing.T) {
	reorder := func(s *verbs.Spec) {
		s.P2PWriteReorder, s.ReorderThreshold, s.ReorderMean = true, 0, 20*sim.Microsecond
	}
	mv := GPIMatVec{Batch: 60 * unit.KiB, Batches: 4, Blocks: 30, Threads: 1024, Worker: "persistent"}
	if _, err := mv.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(reorder)); err == nil {
		t.Fatal("without validation the reordered batch must give wrong products")
	}
	mv.Validate = true
	r, err := mv.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(reorder))
	if err != nil || !r.Verified || r.Revalidate == 0 {
		t.Fatalf("validated: %v, verified %v, %d revalidations", err, r.Verified, r.Revalidate)
	}
}

func TestGPIMatVec(t *testing.T) {
	var rate [2]float64
	for i, w := range []string{"persistent", "relaunch"} {
		r, err := GPIMatVec{Batch: 60 * unit.KiB, Batches: 4, Blocks: 30, Threads: 1024, Worker: w}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
		if err != nil || !r.Verified {
			t.Fatalf("%s: %v verified %v", w, err, r.Verified)
		}
		rate[i] = r.MVecs
		t.Logf("%s: %.2f M vectors/s", w, r.MVecs)
	}
	if rate[0] <= rate[1] {
		t.Errorf("persistent kernel (%.2f) not faster than relaunching (%.2f) at small batches", rate[0], rate[1])
	}
}

// the GPUrdma paper: under the peer-to-peer reorder hazard a slice's
// notification can become visible before its payload. Forwarding at once
// returns stale bytes; validating the known contents first (the
// application workaround) returns the right ones.
func TestReorderHazardNeedsValidation(t *testing.T) {
	reorder := func(s *verbs.Spec) {
		s.P2PWriteReorder, s.ReorderThreshold, s.ReorderMean, s.CheckVisibility = true, 0, 20*sim.Microsecond, true
	}
	tp := GPIThroughput{Size: 3 * unit.MiB, Queues: 6, Worker: "gpu", Overlap: true}
	if _, err := tp.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(reorder)); err == nil {
		t.Fatal("without validation the reordered payload must be forwarded stale")
	}
	tp.Validate = true
	c := gpurdmaCluster(t, nil)
	r, err := tp.Run(c, strategy.GNNGPURDMA, gnnConfig(reorder))
	if err != nil || !r.Verified || r.Revalidate == 0 {
		t.Fatalf("validated: %v, verified %v, %d revalidations", err, r.Verified, r.Revalidate)
	}
	hz := c.Nodes[1].Mem.Checker().Hazards()
	if len(hz) == 0 || !strings.Contains(hz[0].Fix, "validate received contents") || !strings.Contains(hz[0].Agent, "node[1].nic") {
		t.Fatalf("checker: %v", hz)
	}
	if _, err := tp.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil)); err != nil {
		t.Fatalf("hazard off: %v", err)
	}
}

// The memory report's QP and CQ buffers are the GPUrdma paper's "about
// 128 KB each" for one 1024-WQE queue: the QP is its send and receive
// rings of 64 B WQEs, the CQ a ring of 2048 64 B CQEs because the verbs
// provider rounds a CQ asked for 1024 completions up to the next power
// of two above (a CQ of exactly 1024 slots would be 64 KiB).
func TestQPAndCQBuffersAreAbout128KB(t *testing.T) {
	r, err := RdmaBW{Size: 8, Msgs: 4}.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
	if err != nil || !r.Verified {
		t.Fatalf("%v, verified %v", err, r.Verified)
	}
	if r.QPDepth != 1024 {
		t.Fatalf("QP depth %d, want the paper's 1024", r.QPDepth)
	}
	for _, b := range []struct {
		name  string
		bytes uint64
	}{{"QP", r.QPBytes}, {"CQ", r.CQBytes}} {
		if b.bytes < 120<<10 || b.bytes > 136<<10 {
			t.Errorf("%s buffer %d B, want about 128 KB", b.name, b.bytes)
		}
	}
	if r.QPMemBytes != r.QPBytes+r.CQBytes {
		t.Errorf("verbs memory %d B, want QP %d + CQ %d", r.QPMemBytes, r.QPBytes, r.CQBytes)
	}
}
