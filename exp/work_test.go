package exp

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
)

// TestExpectedWorkGrowsWithSize: a point's expected work grows with its
// node count and payload, and the progress units keep that proportion.
func TestExpectedWorkGrowsWithSize(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	point := func(nodes int, size unit.Bytes) Config {
		c := cfg
		c.Allreduce.Nodes, c.Allreduce.Strategies, c.Allreduce.Size = []int{nodes}, []string{"GPUTN"}, size
		return c
	}
	small, big, bigger := point(2, unit.MiB), point(64, unit.MiB), point(64, 8*unit.MiB)
	ws, wb, wB := ExpectedWork("allreduce", small), ExpectedWork("allreduce", big), ExpectedWork("allreduce", bigger)
	if !(ws < wb && wb < wB) || wb/ws < 30 {
		t.Errorf("work 2 nodes %g, 64 nodes %g, 64 nodes ×8 payload %g: want growing, 64 nodes ≥ 30× 2 nodes", ws, wb, wB)
	}
	units := workUnits([]Point{{Config: small}, {Config: bigger}}, func(p Point) float64 { return ExpectedWork("allreduce", p.Config) })
	if units[1] != 1000 || units[0] < 1 || units[0] > 10 {
		t.Errorf("units %v, want the largest 1000 and the small one a few", units)
	}
	if w := ExpectedWork("strategies", cfg); w != 1 {
		t.Errorf("a run no parameter grows: work %g, want 1", w)
	}
}

// TestRunPointsProgressWeighted: with Env.Work the progress reaches its
// total in units of work, and a large point moves it more.
func TestRunPointsProgressWeighted(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes, cfg.Allreduce.Strategies, cfg.Allreduce.Size = []int{2, 8}, []string{"GPUTN"}, 64*unit.KiB
	cfg.Run.Parallel = 1
	var steps []int
	total := 0
	env := Env{Work: func(c Config) float64 { return ExpectedWork("allreduce", c) },
		Progress: func(done, tot int) { steps = append(steps, done); total = tot }}
	if _, err := RunPoints(allreducePoints(), cfg, env); err != nil {
		t.Fatal(err)
	}
	// The gate runs the larger point first (memGate): its step comes first.
	if len(steps) != 2 || steps[1] != total || steps[0] <= total-steps[0] {
		t.Errorf("progress %v of %d: want the 8-node point (first) to move it more than the 2-node one", steps, total)
	}
}

// TestTodayPointsWeighTheirWorkload: a today point weighs what its
// workload's own point weighs (it weighed 1 while the study's per-preset
// entries weighed nodes × payload, and the study's ETA read hours).
func TestTodayPointsWeighTheirWorkload(t *testing.T) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	pts, err := todayPoints().List(func() Config { c := cfg; quickToday(&c); return c }())
	if err != nil {
		t.Fatal(err)
	}
	e, err := Lookup("today")
	if err != nil {
		t.Fatal(err)
	}
	above := 0
	for _, p := range pts {
		f := strings.Fields(p.Label)
		got, want := e.PointWork(p), ExpectedWork(f[1], p.Config)
		if got != want {
			t.Fatalf("%s: work %g, want its workload's %g", p.Label, got, want)
		}
		if got > 1 {
			above++
		}
	}
	if above == 0 {
		t.Errorf("no today point weighs more than 1 (%d points)", len(pts))
	}
}
