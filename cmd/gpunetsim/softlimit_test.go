package main

import (
	"runtime/debug"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/unit"
)

func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		need  float64
		avail uint64
		cur   int64
		want  int64
	}{
		{"estimate below the limit keeps it", 1 << 30, 16 << 30, 4 << 30, 4 << 30},
		{"estimate above the limit raises it", 11 << 30, 16 << 30, 4 << 30, 11 << 30},
		{"never past what the run may use", 11 << 30, 8 << 30, 4 << 30, 8 << 30},
		{"avail below the limit keeps it", 11 << 30, 2 << 30, 4 << 30, 4 << 30},
	} {
		if got := softLimit(c.need, c.avail, c.cur); got != c.want {
			t.Errorf("%s: softLimit(%v, %v, %v) = %v, want %v", c.name, c.need, c.avail, c.cur, got, c.want)
		}
	}
}

// TestCheckRunMemoryRaisesSoftLimit: a run estimated above the default
// soft heap limit gets its estimate as the limit, so its collector does
// not run back to back once the heap passes 4 GiB.
func TestCheckRunMemoryRaisesSoftLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(defaultMemLimit)
	defer debug.SetMemoryLimit(prev)
	cfg, err := exp.DefaultConfig("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Network.Model, cfg.Run.Functional = "flow", false
	cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Scaling = []int{2048}, []int{26}, "weak"
	cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace = 64*unit.KiB, 64*unit.KiB
	cfg.Halo3D.Strategies, cfg.Halo3D.Iters = []string{"GHN_APU"}, 2
	cfg.Run.MemLimit = 64 * unit.GiB
	need := exp.EstimateMemory("halo3d", cfg)
	if need.Bytes <= defaultMemLimit {
		t.Fatalf("estimate %v: want a run above the default limit", need.Bytes)
	}
	if err := checkRunMemory("halo3d", cfg); err != nil {
		t.Skipf("not run here: %v", err) // a process limit below the estimate
	}
	if got := debug.SetMemoryLimit(-1); got != int64(need.Bytes) {
		t.Errorf("soft limit %v after the check, want the estimate %v", got, int64(need.Bytes))
	}
}
