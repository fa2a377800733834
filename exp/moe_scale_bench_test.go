package exp

import (
	"runtime"
	"testing"
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
