package exp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestTimingGolden pins the simulated times and event counts of a reduced
// default allreduce sweep (every strategy, odd and even node counts) and
// of the latency decomposition. Speed work must leave them bit-identical;
// a model change that moves them rewrites the file with -update and says
// why in its commit.
func TestTimingGolden(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes = []int{2, 3, 8}
	cfg.Allreduce.Size = 1 * unit.MiB
	// The first four strategies, pinned: a new strategy adds no row here
	// (its own tests cover it); a change to these rows is a model change.
	cfg.Allreduce.Strategies = []string{"CPU", "HDN", "GDS", "GPUTN"}
	cfg.Latency.Strategies = []string{"HDN", "GDS", "GPUTN"}
	for _, name := range []string{"allreduce", "latency"} {
		ex, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ex.Run(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		res.Params = nil // the parameter list is pinned elsewhere; keep the golden about timing
		if err := report.WriteCSV(&buf, res); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name+"_timing.csv.golden")
		matchGolden(t, path, buf.Bytes(), "TimingGolden")
	}
}

// TestTimingGoldenStrategies pins the simulated times and event counts of
// the strategies TestTimingGolden leaves out, each on the preset the
// documents run it on, functional and payload-free (the two share a
// timing model but not a memory path, and the speed work changes the
// payload-free one): the allreduce on 2, 3 and 8 nodes for every strategy
// that runs it, and a small Jacobi strong and weak scaling on the GIO
// preset with GPU-TN and GNN_GIO added. Speed work must leave them
// bit-identical.
func TestTimingGoldenStrategies(t *testing.T) {
	type tcase struct {
		name, preset, experiment string
		set                      func(*Config)
	}
	allreduce := func(strats ...string) func(*Config) {
		return func(c *Config) {
			c.Allreduce.Nodes = []int{2, 3, 8}
			c.Allreduce.Size = 1 * unit.MiB
			c.Allreduce.Strategies = strats
		}
	}
	var cases []tcase
	for _, g := range []struct {
		preset string
		strats []string
	}{
		{"gputn", []string{"HDN_OVERLAP"}},
		{"xtq", []string{"XTQ", "HSA"}},
		{"compnet", []string{"GHN_DGPU", "GHN_DGPU_HOSTQ", "GHN_APU", "COMPNET"}},
		{"gio", []string{"GNN_GIO"}},
		{"gpurdma", []string{"GNN_GPURDMA"}},
	} {
		cases = append(cases, tcase{"allreduce_" + g.preset, g.preset, "allreduce", allreduce(g.strats...)})
	}
	jacobi := func(c *Config) {
		c.JacobiScale.Grids = []int{256}
		c.JacobiScale.Nodes = []int{1, 4}
		c.JacobiScale.WeakNodes = []int{2, 3}
		c.JacobiScale.WeakSize = 128
		c.JacobiScale.Iters = 3
		c.JacobiScale.Strategies = []string{"HDN", "GPUTN", "GNN_GIO"}
	}
	cases = append(cases,
		tcase{"jacobistrong_gio", "gio", "jacobistrong", jacobi},
		tcase{"jacobiweak_gio", "gio", "jacobiweak", jacobi})
	for _, tc := range cases {
		for _, functional := range []bool{true, false} {
			name := tc.name
			if !functional {
				name += "_payloadfree"
			}
			t.Run(name, func(t *testing.T) {
				cfg, err := DefaultConfig(tc.preset)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Run.Functional = functional
				tc.set(&cfg)
				ex, err := Lookup(tc.experiment)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ex.Run(cfg, Env{})
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				res.Params = nil
				if err := report.WriteCSV(&buf, res); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", "strategies_"+name+".csv.golden")
				matchGolden(t, path, buf.Bytes(), "TimingGoldenStrategies")
			})
		}
	}
}

// TestTimingGoldenHalo3D pins the simulated time and the event count of
// every halo3d implementation on the presets that run them (the Cassini
// machine for the triggered and host-proxy ones, the ConnectX-7 machine for
// the GPU-initiated verbs), 6 and 26 neighbours on two nodes, weak and
// strong scaling, functional and payload-free, packet and flow model. The
// halo exchange is the largest scale the present-day study runs (8,192
// GPUs), and speed work on its kernels and on the flow model must leave
// these bit-identical.
func TestTimingGoldenHalo3D(t *testing.T) {
	var buf bytes.Buffer
	for _, g := range []struct {
		preset string
		strats []string
	}{
		{"mi300a-ss11", []string{"CPU", "HDN", "HDN_OVERLAP", "HSA", "GDS", "GPUTN", "GHN_APU", "GHN_DGPU", "GHN_DGPU_HOSTQ", "COMPNET"}},
		{"h100-cx7", []string{"HDN", "GDS", "GNN_GIO", "GNN_GPURDMA"}},
	} {
		for _, model := range []string{"packet", "flow"} {
			for _, functional := range []bool{true, false} {
				for _, scaling := range []string{"weak", "strong"} {
					cfg, err := DefaultConfig(g.preset)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Network.Model, cfg.Run.Functional = model, functional
					cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Scaling = []int{2}, []int{6, 26}, scaling
					cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace, cfg.Halo3D.Domain = 4*unit.KiB, 4*unit.KiB, 48
					cfg.Halo3D.Strategies, cfg.Halo3D.Iters = g.strats, 2
					pts := halo3DPoints()
					list, err := pts.List(cfg)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range list {
						raw, err := pts.Simulate(p, Env{})
						if err != nil {
							t.Fatalf("%s %s: %v", g.preset, p.Label, err)
						}
						var r halo3DPoint
						if err := json.Unmarshal(raw, &r); err != nil {
							t.Fatal(err)
						}
						if functional && !r.Verified {
							t.Errorf("%s %s: functional run not verified", g.preset, p.Label)
						}
						fmt.Fprintf(&buf, "%s,%s,functional=%v,%s,%d,%d\n", g.preset, model, functional, p.Label, int64(r.Time), r.Events)
					}
				}
			}
		}
	}
	path := filepath.Join("testdata", "halo3d_timing.csv.golden")
	matchGolden(t, path, buf.Bytes(), "TimingGoldenHalo3D")
}

// matchGolden fails the test if got differs from the golden file at path;
// with -update it writes got there instead. test is the name -run takes
// in the hints.
func matchGolden(t *testing.T, path string, got []byte, test string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./exp -run %s -update creates it)", err, test)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: simulated timing changed (go test ./exp -run %s -update rewrites it after a deliberate model change)\n--- got\n%s\n--- want\n%s", path, test, got, want)
	}
}
