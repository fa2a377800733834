package cpu

import (
	"math"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestOneCoreStreamsAtLittlesLaw(t *testing.T) {
	// 64 KiB = 1024 lines of 64 B; 4 misses in flight, each 80 ns: 256
	// latencies = 20.48 µs, i.e. 4 × 64 B / 80 ns = 3.2 GB/s. The issue
	// bound (1.024 µs) and DRAM (0.66 µs) are far below.
	got := runSpec(t, spec(), func(th *Thread) { th.Compute(64<<10, 1) })
	if got != 20480*sim.Nanosecond {
		t.Fatalf("one core, 64KiB: %v, want 20.48us (Little's law)", got)
	}
	if r := spec().CoreStreamRate(); r != 3.2e9 {
		t.Fatalf("CoreStreamRate = %v, want 3.2e9", r)
	}
}

func TestPrefetcherRaisesOutstandingUpToL2(t *testing.T) {
	for _, c := range []struct {
		prefetch bool
		depth    int
		want     int
	}{{false, 16, 4}, {true, 8, 12}, {true, 16, 20}, {true, 100, 20}} {
		s := spec()
		s.Prefetch, s.PrefetchDepth = c.prefetch, c.depth
		if got := s.Outstanding(); got != c.want {
			t.Errorf("prefetch=%v depth=%d: %d misses in flight, want %d", c.prefetch, c.depth, got, c.want)
		}
	}
}

// streamRate returns the bytes per second a region of threads threads
// reaches over 4 MiB.
func streamRate(t *testing.T, s Spec, threads int) float64 {
	t.Helper()
	const bytes = 4 << 20
	d := runSpec(t, s, func(th *Thread) { th.Compute(bytes, threads) })
	return bytes / d.Seconds()
}

func TestRateSaturatesAtDRAMBandwidth(t *testing.T) {
	s := spec()
	s.Cores, s.Prefetch = 16, true // 20 misses per core: 16 GB/s each
	prev := 0.0
	for _, n := range []int{1, 2, 4, 8, 16} {
		r := streamRate(t, s, n)
		want := min(float64(n)*16e9, 100e9)
		if math.Abs(r-want)/want > 0.02 {
			t.Errorf("%d threads: %.2f GB/s, want %.2f GB/s (min(n × Little, DRAM))", n, r/1e9, want/1e9)
		}
		if r < prev*0.999 {
			t.Errorf("%d threads: rate fell from %.2f to %.2f GB/s", n, prev/1e9, r/1e9)
		}
		prev = r
	}
}

func TestLoadedLatencyGrowsWithLoad(t *testing.T) {
	s := spec()
	s.Cores, s.Prefetch = 16, true
	var one, sixteen sim.Duration
	for _, c := range []struct {
		n   int
		out *sim.Duration
	}{{1, &one}, {16, &sixteen}} {
		e := sim.New(1)
		cp := newTestCPU(e, s)
		cp.Spawn("t", func(th *Thread) { th.Compute(4<<20, c.n) })
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		*c.out = cp.Stats().LoadedLatency(s.Outstanding())
	}
	if one != 80*sim.Nanosecond {
		t.Errorf("one core: loaded latency %v, want the unloaded 80ns", one)
	}
	// 16 cores × 20 misses × 64 B at 100 GB/s: 204.8 ns by Little's law.
	if math.Abs(float64(sixteen)-204800)/204800 > 0.03 {
		t.Errorf("16 cores: loaded latency %v, want ≈204.8ns", sixteen)
	}
}

func TestSpecRejectsBadCounts(t *testing.T) {
	for field, edit := range map[string]func(*Spec){
		"cpu.cores":         func(s *Spec) { s.Cores = 0 },
		"cpu.l1d_misses":    func(s *Spec) { s.L1DMisses = 0 },
		"cpu.l2_misses":     func(s *Spec) { s.L2Misses = -1 },
		"cpu.line_size":     func(s *Spec) { s.LineSize = 0 },
		"cpu.compute_model": func(s *Spec) { s.ComputeModel = "magic" },
	} {
		s := spec()
		edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Validate() = %v, want one line naming it", field, err)
		}
	}
}
