package exp

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// The projection's arithmetic on a hand-computed case: a workload blocked
// 25% of the time whose calls become half as long runs 0.875 of its
// profiled time, a speedup of 8/7.
func TestProjectRuntimeByHand(t *testing.T) {
	if got := projectRuntime(0.25, 0.5); got != 0.875 {
		t.Fatalf("T = %v, want 0.875", got)
	}
	if got := projectRuntime(0.25, 1); got != 1 {
		t.Fatalf("unchanged calls: T = %v, want 1", got)
	}
	if sp := projectRuntime(0.5, 1) / projectRuntime(0.5, 0.5); sp != 4.0/3 {
		t.Fatalf("speedup %v, want 4/3", sp)
	}
}

func writeTable(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A user table: the projection takes R_X from one simulation per distinct
// size (two workloads share one), and every row obeys T = (1−f) + f·R
// against the simulated allreduce times it reports.
func TestMLProjectionFromUserTable(t *testing.T) {
	cfg := quickConfig(t)
	cfg.ML.Table = writeTable(t, "workload,domain,blocked_pct,calls,size\nA,x,50,10,64KiB\nB,y,20,1000,64KiB\nC,z,0,5,16KiB\n")
	cfg.ML.Nodes = 4
	cfg.ML.Strategies = []string{"CPU", "HDN", "GPUTN"}
	cfg.ML.Baseline = "HDN"
	pts, err := mlList(cfg)
	if err != nil || len(pts) != 2*3 {
		t.Fatalf("%d points (%v), want 2 sizes × 3 strategies", len(pts), err)
	}
	res, err := runML(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]float64{} // size/strategy → simulated time
	for _, r := range res.Tables[2].Rows {
		times[r[0].(interface{ String() string }).String()+"/"+r[2].(string)] = r[4].(float64)
	}
	for _, r := range res.Tables[1].Rows {
		f := r[2].(float64) / 100
		size := r[4].(interface{ String() string }).String()
		ratio := times[size+"/"+r[5].(string)] / times[size+"/CPU"]
		base := projectRuntime(f, times[size+"/HDN"]/times[size+"/CPU"])
		if !(ratio > 0) || !(base > 0) {
			t.Fatalf("%v: no simulated time for its size (%v)", r, times)
		}
		if d := r[9].(float64) - projectRuntime(f, ratio); d > 1e-3 || d < -1e-3 {
			t.Errorf("%v: runtime %v, want %v", r, r[9], projectRuntime(f, ratio))
		}
		if d := r[10].(float64) - base/projectRuntime(f, ratio); d > 1e-3 || d < -1e-3 {
			t.Errorf("%v: speedup %v, want %v", r, r[10], base/projectRuntime(f, ratio))
		}
		if r[0] == "C" && r[9] != 1.0 {
			t.Errorf("a workload never blocked in Allreduce must project to 1: %v", r)
		}
	}
}

func TestMLBadTables(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"missing column": {"workload,domain,blocked_pct,size\nA,x,5,1MiB\n", `missing column "calls"`},
		"negative pct":   {"workload,domain,blocked_pct,calls,size\nA,x,-5,10,1MiB\n", `row 1 (A): blocked_pct = "-5": must be a percentage in [0, 100]`},
		"bad size":       {"workload,domain,blocked_pct,calls,size\nA,x,5,10,3B\n", `row 1 (A): size = "3B"`},
		"zero calls":     {"workload,domain,blocked_pct,calls,size\nA,x,5,0,4KiB\n", `calls = "0"`},
		"no rows":        {"workload,domain,blocked_pct,calls,size\n", "no workload rows"},
		"duplicate":      {"workload,domain,blocked_pct,calls,size\nA,x,5,1,4KiB\nA,y,5,1,4KiB\n", "distinct"},
	} {
		cfg := quickConfig(t)
		cfg.ML.Table = writeTable(t, tc.text)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ml.table") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// FuzzMLTable: the parser never panics, and what it accepts is a valid table.
func FuzzMLTable(f *testing.F) {
	f.Add(cntkTable)
	f.Add("workload,domain,blocked_pct,calls,size\nA,x,5,1,4KiB\n")
	f.Fuzz(func(t *testing.T, text string) {
		rows, err := parseMLTable(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Blocked < 0 || r.Blocked > 1 || r.Calls < 1 || r.Size < 4 || r.Size%4 != 0 {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

// The projection's runtime column says it is relative to the profiled
// runtime ("runtime [× profiled]") in the text, the HTML and the CSV;
// before, every form headed it "runtime", which reads as seconds, and only
// a note (the sidecar's, in the CSV) said the profiled run's is 1.
func TestMLRuntimeColumnSaysRelative(t *testing.T) {
	res := runTwoNodeML(t)
	files, err := report.CSVFiles("ml.csv", res)
	if err != nil {
		t.Fatal(err)
	}
	var text, page bytes.Buffer
	if err := report.WriteTable(&text, res.Tables[1]); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, "ml", []report.Section{{Title: "ml", Result: res}}); err != nil {
		t.Fatal(err)
	}
	const want = "runtime [× profiled]"
	for name, s := range map[string]string{"CSV": string(files[1].Data), "text": text.String(), "HTML": page.String()} {
		if !strings.Contains(s, want) {
			t.Errorf("the %s lacks %q", name, want)
		}
	}
	if files[1].Table != "projection" {
		t.Errorf("file 1 holds %q, want the projection", files[1].Table)
	}
}

// The speedup table, the main CSV file, names what its numbers are in
// each column ("GPUTN speedup"); before, its header was the bare strategy
// names, which read as times as easily as speedups.
func TestMLSpeedupColumnsSayWhatTheyHold(t *testing.T) {
	res := runTwoNodeML(t)
	if got, want := res.Tables[0].Columns, []string{"workload", "CPU speedup", "GPUTN speedup"}; !slices.Equal(got, want) {
		t.Errorf("columns %q, want %q", got, want)
	}
}

// runTwoNodeML runs the ML projection on two gputn nodes for CPU and GPU-TN,
// the set-up of the column-naming tests.
func runTwoNodeML(t *testing.T) *report.Result {
	t.Helper()
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ML.Nodes, cfg.ML.Strategies = 2, []string{"CPU", "GPUTN"}
	res, err := runML(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
