package exp

import (
	"strings"
	"testing"
)

// The quick sweep on h100-cx7: every cell verified, a winner per (nodes,
// face), the grid of one node of 8 GPUs is 2x2x2.
func TestHalo3DExperiment(t *testing.T) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	quickHalo3D(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := runHalo3D(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Tables[0].Rows
	if len(rows) != 12 || len(res.Tables[1].Rows) != 6 {
		t.Fatalf("%d rows, %d winner rows: want 12 and 6", len(rows), len(res.Tables[1].Rows))
	}
	for _, r := range rows {
		if r[9] != true {
			t.Errorf("%v: not verified", r)
		}
		if r[0] == 1 && r[2] != "2x2x2" {
			t.Errorf("%v: one node of 8 GPUs, want grid 2x2x2", r)
		}
	}
	cfg.Halo3D.MinFace, cfg.Halo3D.Iters, cfg.Halo3D.Strategies = 12, 0, []string{"GPUTN"}
	err = cfg.Validate()
	for _, field := range []string{"halo3d.min_face", "halo3d.iters", "halo3d.strategies"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}
