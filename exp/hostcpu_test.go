package exp

import (
	"math"
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
)

func TestHostCPUExperiment(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	// 64 MiB: each team thread streams for milliseconds, several slices.
	cfg.HostCPU = HostCPUSpec{Size: 64 * unit.MiB, Threads: []int{1, 8}}
	ex, err := Lookup("hostcpu")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	rate := map[string]float64{}
	for _, o := range res.Outputs {
		rate[o.Name] = o.Value
	}
	for name, want := range map[string]float64{
		"configured rate with 1 threads": 10.78, // 16 requests × 64 B / 95 ns (the directory, then DRAM)
		// The prefetcher's lines count against the same 16 requests per
		// core: no faster.
		"prefetch flipped rate with 1 threads": 10.78,
		"configured rate with 8 threads":       86.23,  // eight cores, latency-bound
		"flat rate rate with 8 threads":        136.51, // DRAM-bound
	} {
		if got := rate[name]; math.Abs(got-want)/want > 0.01 {
			t.Errorf("%s = %.3f GB/s, want %.3f", name, got, want)
		}
	}
	// The helper takes half of core 1 from the team thread placed there
	// (the region ends with that thread's share; the other seven, near the
	// DRAM's rate, queue a little at the memory).
	if h, c := rate["polling helper on core 1 rate with 8 threads"], rate["configured rate with 8 threads"]; h > 0.55*c || h < 0.35*c {
		t.Errorf("8 threads with a polling helper on a team core: %.2f GB/s, want about half of %.2f", h, c)
	}
	cfg.HostCPU.Threads = []int{0}
	if _, err := ex.Run(cfg, Env{}); err == nil || err.Error() != "hostcpu.threads contains 0: team sizes must be in [1, 1024]" {
		t.Errorf("threads 0: %v", err)
	}
}
