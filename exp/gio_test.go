package exp

import (
	"strings"
	"testing"
)

// gioScaling runs the gio experiment's work-group scaling on preset gio
// (GNN_GIO and GHN_DGPU, 64 B, 1 and 8 work-groups) under one timing and
// returns GNN_GIO's latency per work-group count.
func gioScaling(t *testing.T, timing string) map[int]float64 {
	t.Helper()
	cfg, err := DefaultConfig("gio")
	if err != nil {
		t.Fatal(err)
	}
	g := &cfg.GIOBench
	g.Sizes, g.Strategies, g.WGs, g.Small, g.Large = []int{8}, []string{"GNN_GIO"}, []int{1, 8}, 64, 64
	g.Timing, g.Iters, g.ItersLarge, g.Skip = timing, 4, 4, 1
	res, err := runGIOBench(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]float64{}
	for _, r := range res.Tables[1].Rows {
		if r[0] == "GNN_GIO" {
			if r[4] != true {
				t.Fatalf("%s: row %v not verified", timing, r)
			}
			got[r[2].(int)] = r[3].(float64)
		}
	}
	return got
}

// Per-work-group timing (ROC_SHMEM's put tester) leaves out what the
// tester does not time: the kernel launch (3 µs on preset gio) and the
// dispatcher's start of the work-groups, which end-to-end timing
// includes. So a lone work-group's put is at least the launch cheaper,
// and eight work-groups add less to it than they add end to end.
func TestGIOPerWGTiming(t *testing.T) {
	e2e, per := gioScaling(t, "end-to-end"), gioScaling(t, "per-wg")
	if !(per[1] < e2e[1]-3) {
		t.Errorf("1 WG: per-wg %.3f us, end-to-end %.3f us: the 3 us launch should be left out", per[1], e2e[1])
	}
	if !(per[8]-per[1] < e2e[8]-e2e[1]) {
		t.Errorf("1→8 WGs: per-wg grows %.3f us, end-to-end %.3f us: the work-groups' start stagger should be left out",
			per[8]-per[1], e2e[8]-e2e[1])
	}
	t.Logf("end-to-end %v, per-wg %v", e2e, per)
}

// A timing other than the two is refused naming the field; so are
// iteration counts out of range.
func TestGIOTimingRefused(t *testing.T) {
	for _, c := range []struct {
		mod  func(*GIOBenchSpec)
		want string
	}{
		{func(g *GIOBenchSpec) { g.Timing = "kernel" }, `giobench.timing = "kernel": must be end-to-end or per-wg`},
		{func(g *GIOBenchSpec) { g.Iters = 0 }, "giobench.iters = 0: must be in [1, 100000]"},
		{func(g *GIOBenchSpec) { g.Skip = -1 }, "giobench.skip = -1: must be in [0, 100000]"},
	} {
		g := defaultGIOBench()
		c.mod(&g)
		if err := g.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
