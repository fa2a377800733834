package exp

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
)

// The scale points of docs/today.md's Scale section for the halo exchange
// and the hierarchical allreduce, payload-free in the flow model as the
// table runs them. Each reports the simulation's events per CPU-second
// (the rate that does not depend on the load of a shared machine), the CPU
// seconds per run and the memory the Go runtime obtained from the system
// per simulated GPU (its peak, as the process's resident size bounds it).

// benchPoint runs the single point of cfg's sweep of ex b.N times.
func benchPoint(b *testing.B, pts Points, cfg Config, gpus int) {
	b.Helper()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	list, err := pts.List(cfg)
	if err != nil || len(list) != 1 {
		b.Fatalf("%d points, %v: want one", len(list), err)
	}
	cpu0 := cpuSeconds(b)
	var events float64
	for range b.N {
		raw, err := pts.Simulate(list[0], Env{})
		if err != nil {
			b.Fatal(err)
		}
		var p struct {
			Events uint64 `json:"events"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Events == 0 {
			b.Fatalf("result %s: %v", raw, err)
		}
		events += float64(p.Events)
	}
	cpu := cpuSeconds(b) - cpu0
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(events/cpu, "events/cpu-s")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(ms.Sys)/float64(gpus), "sys-bytes/GPU")
}

// BenchmarkHalo3DStrong26MI300A1024Flow: the strong-scaled 26-neighbour
// exchange of a 1024³ cube on 1,024 GPUs (256 nodes of mi300a-ss11) under
// GPU-aware MPI (HDN), two exchanges.
func BenchmarkHalo3DStrong26MI300A1024Flow(b *testing.B) { benchHalo3DStrong26MI300AFlow(b, 256) }

// BenchmarkHalo3DStrong26MI300A2048Flow: the same exchange on 2,048 GPUs
// (512 nodes, four dragonfly groups joined by bundles of 181 global links),
// where the flow model's reallocations are many (each flow ends at its own
// picosecond) and the flows they must reach are a small part of the
// machine (docs/network.md, "Only the flows a change can reach").
func BenchmarkHalo3DStrong26MI300A2048Flow(b *testing.B) { benchHalo3DStrong26MI300AFlow(b, 512) }

// BenchmarkAllreduceHierTree8192Flow: the hierarchical allreduce of 1 MiB
// on 8,192 GPUs (1,024 nodes of h100-cx7) with the per-rail double binary
// tree under HDN.
func BenchmarkAllreduceHierTree8192Flow(b *testing.B) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Network.Model, cfg.Run.Functional = "flow", false
	cfg.AllreduceHier.Nodes, cfg.AllreduceHier.Strategies, cfg.AllreduceHier.Inter = []int{1024}, []string{"HDN"}, "tree"
	benchPoint(b, allreduceHierPoints(), cfg, 8192)
}

// BenchmarkHalo3DStrong26MI300A4096Flow: the same exchange on 4,096 GPUs
// (1,024 nodes, eight dragonfly groups), where bundles of global links
// between the groups are bottlenecks, so a change reaches flows through
// them (docs/network.md).
func BenchmarkHalo3DStrong26MI300A4096Flow(b *testing.B) { benchHalo3DStrong26MI300AFlow(b, 1024) }

// BenchmarkHalo3DStrong26MI300A8192Flow: the same exchange on 8,192 GPUs
// (2,048 nodes, sixteen groups, 36 global links per pair of groups), the
// issue's largest point; run it alone (about 2.5 GB).
func BenchmarkHalo3DStrong26MI300A8192Flow(b *testing.B) { benchHalo3DStrong26MI300AFlow(b, 2048) }

// benchHalo3DStrong26MI300AFlow runs the strong-scaled 26-neighbour
// exchange of a 1024³ cube on nodes mi300a-ss11 nodes (four GPUs each)
// in the flow model under GPU-aware MPI (HDN), two exchanges.
func benchHalo3DStrong26MI300AFlow(b *testing.B, nodes int) {
	cfg, err := DefaultConfig("mi300a-ss11")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Network.Model, cfg.Run.Functional = "flow", false
	cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Scaling, cfg.Halo3D.Domain = []int{nodes}, []int{26}, "strong", 1024
	cfg.Halo3D.Strategies, cfg.Halo3D.Iters = []string{"HDN"}, 2
	benchPoint(b, halo3DPoints(), cfg, 4*nodes)
}

// BenchmarkHalo3DWeak26MI300A4096Flow: the weak-scaled 26-neighbour
// exchange with 64 KiB faces (edges 720 B, corners 8 B) on 4,096 GPUs
// (1,024 nodes of mi300a-ss11) under GPU-aware MPI (HDN), two exchanges.
func BenchmarkHalo3DWeak26MI300A4096Flow(b *testing.B) { benchHalo3DWeakMI300AFlow(b, 1024, 26) }

// BenchmarkHalo3DWeak26GPUTN4096Flow: the same exchange under GPU-TN's
// triggered puts, whose flow-model reallocations gave up their settled
// fill far more often than HDN's as the machine grew (docs/speed.md,
// "GPU-TN's halo3d at 8,192 GPUs").
func BenchmarkHalo3DWeak26GPUTN4096Flow(b *testing.B) {
	benchHalo3DWeakMI300AFlowOn(b, 1024, 26, "GPUTN")
}

// BenchmarkHalo3DWeak26MI300A8192Flow: the same on 8,192 GPUs (2,048
// nodes, sixteen groups), where the small edge and corner messages end at
// the global links' low share (docs/network.md); run it alone (about 3 GB).
func BenchmarkHalo3DWeak26MI300A8192Flow(b *testing.B) { benchHalo3DWeakMI300AFlow(b, 2048, 26) }

// BenchmarkHalo3DWeak26GPUTN8192Flow: GPU-TN's on 8,192 GPUs; run it
// alone (about 3 GB).
func BenchmarkHalo3DWeak26GPUTN8192Flow(b *testing.B) {
	benchHalo3DWeakMI300AFlowOn(b, 2048, 26, "GPUTN")
}

// BenchmarkHalo3DWeak6MI300A8192Flow: the weak-scaled 6-neighbour
// exchange with 64 KiB faces on 8,192 GPUs of mi300a-ss11; run it alone.
func BenchmarkHalo3DWeak6MI300A8192Flow(b *testing.B) { benchHalo3DWeakMI300AFlow(b, 2048, 6) }

// benchHalo3DWeakMI300AFlow runs the weak-scaled exchange with 64 KiB
// faces on nodes mi300a-ss11 nodes (four GPUs each) with the given
// neighbours in the flow model under HDN, two exchanges.
func benchHalo3DWeakMI300AFlow(b *testing.B, nodes, neighbours int) {
	benchHalo3DWeakMI300AFlowOn(b, nodes, neighbours, "HDN")
}

// benchHalo3DWeakMI300AFlowOn is benchHalo3DWeakMI300AFlow under strategy
// st.
func benchHalo3DWeakMI300AFlowOn(b *testing.B, nodes, neighbours int, st string) {
	cfg, err := DefaultConfig("mi300a-ss11")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Network.Model, cfg.Run.Functional = "flow", false
	cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Scaling = []int{nodes}, []int{neighbours}, "weak"
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace = 64*unit.KiB, 64*unit.KiB
	cfg.Halo3D.Strategies, cfg.Halo3D.Iters = []string{st}, 2
	benchPoint(b, halo3DPoints(), cfg, 4*nodes)
}
