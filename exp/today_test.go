package exp

import (
	"strings"
	"testing"
)

// The quick today study covers every preset × workload, names a winner the
// preset can run (no GPU-TN on the ConnectX presets), and its ranges cover
// every winner row.
func TestTodayStudy(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	quickToday(&cfg)
	res, err := runToday(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	where, winners := res.Tables[0].Rows, res.Tables[1].Rows
	seen := map[string]bool{}
	for _, r := range winners {
		seen[r[0].(string)+" "+r[1].(string)] = true
		if strings.HasSuffix(r[0].(string), "cx7") && (r[3] == "GPUTN" || r[5] == "GPUTN") {
			t.Errorf("%v: GPU-TN on a ConnectX preset", r)
		}
	}
	for _, p := range cfg.Today.Presets {
		for _, w := range []string{"pingpong", "allreduce_hier", "halo3d"} {
			if !seen[p+" "+w] {
				t.Errorf("no winner rows for %s on %s", w, p)
			}
		}
	}
	if len(where) < len(seen) || len(where) > len(winners) {
		t.Errorf("%d ranges for %d (preset, workload) pairs and %d points", len(where), len(seen), len(winners))
	}
	cfg.Today.Presets = []string{"h100"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "today.presets") {
		t.Errorf("unknown preset: %v", err)
	}
}
