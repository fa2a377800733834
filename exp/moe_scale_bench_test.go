package exp

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// BenchmarkMoELowLatencyEP32Flow is the moe scale point of docs/today.md's
// Scale section that runs in reasonable time on the reference machine: one
// payload-free low-latency dispatch and combine at EP = 32 (4 nodes × 8
// GPUs of preset h100-cx7) in the flow model under device shmem (GNN_GIO).
// It reports wall seconds per run and the memory the Go runtime obtained
// from the system per GPU (the device-verbs QPs GNN_GIO connects between
// every pair of GPUs make this grow with EP, see the Scale section).
func BenchmarkMoELowLatencyEP32Flow(b *testing.B) {
	const ep = 32
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Network.Model = "flow"
	cfg.MoE.EP = []int{ep}
	cfg.MoE.Modes = []string{"low-latency"}
	cfg.MoE.Strategies = []string{"GNN_GIO"}
	ex, err := Lookup("moe")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if _, err := ex.Run(cfg, Env{}); err != nil {
			b.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric(float64(ms.Sys)/ep, "sys-bytes/GPU")
}

// BenchmarkMoEThroughputFlow is the moe throughput mode (4,096 tokens per
// GPU) payload-free in the flow model under GPU-aware MPI (HDN) on preset
// h100-cx7 at EP 32 and 64: the all-to-all whose every flow start and end
// re-divides the bandwidth of the flows it shares links with (the
// water-filling's cost, docs/network.md).
func BenchmarkMoEThroughputFlow(b *testing.B) {
	for _, ep := range []int{32, 64} {
		b.Run(fmt.Sprintf("EP%d", ep), func(b *testing.B) {
			benchMoEThroughputFlow(b, "h100-cx7", "HDN", ep, nil)
		})
	}
}

// BenchmarkMoEThroughputGIOFlow is issue 32's GNN_GIO scale point: the moe
// throughput mode payload-free in the flow model under device shmem over
// GPU-initiated verbs (GNN_GIO) on preset h100-cx7, EP 16 to 256 (EP 128
// and 256 skipped under -short). It reports events per CPU-second, so the
// cost per event can be followed as EP doubles, beside the CPU seconds.
// Run one point per process with -benchtime 1x, e.g. -bench
// 'MoEThroughputGIOFlow/EP64$'.
func BenchmarkMoEThroughputGIOFlow(b *testing.B) {
	for _, ep := range []int{16, 32, 64, 128, 256} {
		b.Run(fmt.Sprintf("EP%d", ep), func(b *testing.B) {
			if ep > 64 && testing.Short() {
				b.Skip("EP above 64: not under -short")
			}
			benchMoEThroughputFlow(b, "h100-cx7", "GNN_GIO", ep, nil)
		})
	}
}

// BenchmarkMoEThroughputProxyFlow is issue 32's point for the CPU-proxy and
// command-processor strategies: the moe throughput mode payload-free in the
// flow model at EP 16, 32 and 64, COMPNET and GHN_DGPU on h100-cx7 (the PCIe
// pollers) and GHN_APU on mi300a-ss11 and GHN_DGPU_HOSTQ on h100-cx7 (the
// coherent-cache pollers, whose service threads poll every few nanoseconds
// while they have operations pending: the slow ones). Run one point per
// process, e.g. -bench 'MoEThroughputProxyFlow/COMPNET/EP32$'; compare
// cpu-s/op with BenchmarkMoEThroughputFlow's HDN.
func BenchmarkMoEThroughputProxyFlow(b *testing.B) {
	for _, c := range []struct{ strategy, preset string }{
		{"COMPNET", "h100-cx7"}, {"GHN_DGPU", "h100-cx7"}, {"GHN_DGPU_HOSTQ", "h100-cx7"}, {"GHN_APU", "mi300a-ss11"},
	} {
		b.Run(c.strategy, func(b *testing.B) {
			for _, ep := range []int{16, 32, 64} {
				b.Run(fmt.Sprintf("EP%d", ep), func(b *testing.B) {
					benchMoEThroughputFlow(b, c.preset, c.strategy, ep, func(cfg *Config) { cfg.Run.Functional = false })
				})
			}
		})
	}
}

// benchMoEThroughputFlow runs one moe throughput point (EP ep, one
// strategy, the flow model) on preset, after adjust (if any) has changed
// the configuration further.
func benchMoEThroughputFlow(b *testing.B, preset, strategy string, ep int, adjust func(*Config)) {
	benchMoEFlow(b, preset, strategy, "throughput", ep, adjust)
}

// benchMoEFlow runs one moe point (EP ep, one strategy, one mode, the flow
// model) on preset, after adjust (if any) has changed the configuration
// further.
func benchMoEFlow(b *testing.B, preset, strategy, mode string, ep int, adjust func(*Config)) {
	cfg, err := DefaultConfig(preset)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Network.Model = "flow"
	cfg.MoE.EP, cfg.MoE.Modes, cfg.MoE.Strategies = []int{ep}, []string{mode}, []string{strategy}
	if adjust != nil {
		adjust(&cfg)
	}
	benchPoint(b, moePoints(), cfg, ep)
}

// BenchmarkMoEThroughputFlowInterval is issue 32's large-EP point with the
// flow model's re-division interval (network.flow_interval = 1us, an
// approximation printed with the run's parameters): moe throughput mode
// payload-free on h100-cx7 under device shmem over GPU-initiated verbs
// (GNN_GIO) and the CPU proxy (GHN_DGPU), EP 32 to 256 (EP 128 and 256
// skipped under -short). Compare cpu-s/op with BenchmarkMoEThroughputGIOFlow
// and BenchmarkMoEThroughputProxyFlow (exact re-division). Run one point
// per process, e.g. -bench 'MoEThroughputFlowInterval/GNN_GIO/EP64$'.
func BenchmarkMoEThroughputFlowInterval(b *testing.B) {
	for _, strategy := range []string{"GNN_GIO", "GHN_DGPU"} {
		b.Run(strategy, func(b *testing.B) {
			for _, ep := range []int{32, 64, 128, 256} {
				b.Run(fmt.Sprintf("EP%d", ep), func(b *testing.B) {
					if ep > 64 && testing.Short() {
						b.Skip("EP above 64: not under -short")
					}
					benchMoEThroughputFlow(b, "h100-cx7", strategy, ep, func(cfg *Config) {
						cfg.Run.Functional = false
						cfg.Network.FlowInterval = sim.Microsecond
					})
				})
			}
		})
	}
}

// BenchmarkMoELowLatencyGH200CX7Flow is issue 32's low-latency point on
// gh200-cx7 at EP 128 (128 nodes of one GPU on the fat tree, HDN), payload-
// free in the flow model, exact and with network.flow_interval = 1us:
// every per-entry message starts and ends alone, so the exact run
// re-divides the whole all-to-all at each (over 100 CPU-s, docs/today.md),
// the interval at most once per microsecond. Run one point per process,
// e.g. -bench 'MoELowLatencyGH200CX7Flow/interval1us$'.
func BenchmarkMoELowLatencyGH200CX7Flow(b *testing.B) {
	for _, c := range []struct {
		name     string
		interval sim.Time
	}{{"exact", 0}, {"interval1us", sim.Microsecond}} {
		b.Run(c.name, func(b *testing.B) {
			if c.interval == 0 && testing.Short() {
				b.Skip("the exact form takes minutes: not under -short")
			}
			benchMoEFlow(b, "gh200-cx7", "HDN", "low-latency", 128, func(cfg *Config) {
				cfg.Run.Functional = false
				cfg.Network.FlowInterval = c.interval
			})
		})
	}
}
