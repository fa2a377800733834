package exp

import (
	"bytes"
	"flag"
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
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./exp -run TimingGolden -update creates it)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s: simulated timing changed (go test ./exp -run TimingGolden -update rewrites it after a deliberate model change)\n--- got\n%s\n--- want\n%s", path, buf.Bytes(), want)
		}
	}
}
