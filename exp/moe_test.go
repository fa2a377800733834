package exp

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The quick sweep: every strategy the preset runs, both modes, verified
// at small scale, one winner per (mode, EP); over moe.verify_max a point
// runs payload-free and says so; bad knobs name their field.
func TestMoEExperiment(t *testing.T) {
	for _, tc := range []struct {
		preset    string
		verifyMax unit.Bytes
		want      string
		strategy  string
	}{
		{"h100-cx7", 1 * unit.GiB, "yes", "GNN_GIO"},
		{"mi300a-ss11", 1 * unit.GiB, "yes", "GPUTN"},
		{"h100-cx7", 1 * unit.KiB, "payload-free", "GNN_GIO"},
	} {
		cfg, err := DefaultConfig(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		quickMoE(&cfg)
		cfg.MoE.EP, cfg.MoE.VerifyMax = []int{8}, tc.verifyMax
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := runMoE(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		rows, win := res.Tables[0].Rows, res.Tables[1].Rows
		if len(rows) != 2*len(cfg.MoE.Strategies) || len(win) != 2 {
			t.Fatalf("%s: %d rows, %d winner rows for %d strategies", tc.preset, len(rows), len(win), len(cfg.MoE.Strategies))
		}
		seen := false
		for _, r := range rows {
			if r[14] != tc.want {
				t.Errorf("%s: %v: verified = %v, want %s", tc.preset, r, r[14], tc.want)
			}
			if r[4] == tc.strategy {
				seen = true
				if r[13].(int) != cfg.MoE.CommWGs {
					t.Errorf("%v: comm_wgs %v, want moe.comm_wgs = %d", r, r[13], cfg.MoE.CommWGs)
				}
			}
			if r[4] == "CPU" && r[13].(int) != 0 {
				t.Errorf("%v: the host implementation occupies no work-groups", r)
			}
		}
		if !seen {
			t.Errorf("%s: no %s row", tc.preset, tc.strategy)
		}
	}
	cfg, _ := DefaultConfig("h100-cx7")
	cfg.MoE.Modes, cfg.MoE.TopK, cfg.MoE.CommWGs, cfg.MoE.Strategies = []string{"fast"}, 0, 0, []string{"SPIN_RWCP"}
	err := cfg.Validate()
	for _, field := range []string{"moe.modes", "moe.topk", "moe.comm_wgs", "moe.strategies"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}

// A phase's GB/s keeps its precision: 8 B in 3 us is 0.00267 GB/s, not
// the 0.003 that rounding to three decimals made of it.
func TestMoEGBpsKeepsPrecision(t *testing.T) {
	if got, want := rateGBps(8, 3*sim.Microsecond), 8/(3*sim.Microsecond).Seconds()/1e9; got != want {
		t.Errorf("8 B in 3us: %v GB/s, want %v", got, want)
	}
}

// A phase with no bytes of a class (inter-node traffic on one node) or no
// simulated time has no rate: an empty cell, not the 0 GB/s (or +Inf)
// it printed before, in the text, CSV and JSON forms.
func TestMoENoTrafficHasNoRate(t *testing.T) {
	for _, c := range []struct {
		bytes float64
		t     sim.Time
	}{{0, 3 * sim.Microsecond}, {8, 0}, {0, 0}} {
		if got := rateGBps(c.bytes, c.t); got != nil {
			t.Errorf("%v B in %v: %v GB/s, want no rate (nil)", c.bytes, c.t, got)
		}
	}
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	quickMoE(&cfg)
	cfg.MoE.EP, cfg.MoE.Modes, cfg.MoE.Strategies = []int{8}, []string{"low-latency"}, []string{"GNN_GIO"}
	res, err := runMoE(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	cols := res.Tables[0].Columns
	for _, r := range res.Tables[0].Rows {
		for j, c := range cols {
			inter, intra := strings.HasSuffix(c, "_inter_GB/s"), strings.HasSuffix(c, "_intra_GB/s")
			if inter && r[j] != nil {
				t.Errorf("%v: %s = %v on one node, want no rate", r[:6], c, r[j])
			}
			if v, ok := r[j].(float64); intra && (!ok || v <= 0) {
				t.Errorf("%v: %s = %v, want a positive rate", r[:6], c, r[j])
			}
		}
	}
	files, err := report.CSVFiles("moe.csv", res)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(files[0].Data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	j := slices.Index(recs[0], "dispatch_inter [GB/s]")
	if j < 0 || recs[1][j] != "" {
		t.Errorf("CSV header %q, row %q: want an empty dispatch_inter [GB/s] cell", recs[0], recs[1])
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js, res); err != nil || strings.Contains(js.String(), "NaN") || strings.Contains(js.String(), "Inf") {
		t.Errorf("JSON: %v, NaN or Inf in it: %v", err, strings.Contains(js.String(), "NaN"))
	}
}

// A routing table enters the points' labels (and so the study cache's
// keys) by its content: an edited table under the same path lists other
// points.
func TestMoERoutingKeysByContent(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.csv")
	cfg.MoE.EP, cfg.MoE.Modes, cfg.MoE.Experts, cfg.MoE.TopK, cfg.MoE.TokensLL = []int{2}, []string{"low-latency"}, 2, 1, 1
	cfg.MoE.Routing = path
	labels := func(table string) string {
		if err := os.WriteFile(path, []byte(table), 0o600); err != nil {
			t.Fatal(err)
		}
		pts, err := moeList(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return pts[0].Label
	}
	a, b := labels("0,0,1,1\n1,0,0,1\n"), labels("0,0,0,1\n1,0,1,1\n")
	if a == b || !strings.Contains(a, "routing=") {
		t.Errorf("labels %q and %q: want the table's hash, different per content", a, b)
	}
}
