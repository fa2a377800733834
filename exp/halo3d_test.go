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
	n := 2 * 2 * len(cfg.Halo3D.Strategies) // node counts x stencils x strategies
	if len(rows) != n || len(res.Tables[1].Rows) != 4 {
		t.Fatalf("%d rows, %d winner rows: want %d and 4", len(rows), len(res.Tables[1].Rows), n)
	}
	impls := map[any]bool{}
	for _, r := range rows {
		impls[r[7]] = true
		if r[11] != true {
			t.Errorf("%v: not verified", r)
		}
		if r[0] == 1 && r[2] != "2x2x2" {
			t.Errorf("%v: one node of 8 GPUs, want grid 2x2x2", r)
		}
		if want := map[int]uint64{6: 6 * 1024, 26: 6*1024 + 12*8*11 + 8*8}[r[3].(int)]; r[5] != want {
			t.Errorf("%v: %v bytes per GPU, want %d", r, r[5], want)
		}
	}
	for _, im := range []string{"host", "kernel-boundary", "stream-triggered", "device-shmem"} {
		if !impls[im] {
			t.Errorf("no %s rows", im)
		}
	}
	// Strong scaling: a fixed 64^3 domain; the per-GPU bytes shrink from 8
	// to 16 GPUs.
	cfg.Halo3D.Scaling, cfg.Halo3D.Domain, cfg.Halo3D.Neighbours, cfg.Halo3D.Strategies = "strong", 64, []int{26}, []string{"HDN"}
	res, err = runHalo3D(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	rows = res.Tables[0].Rows
	if len(rows) != 2 || rows[0][5].(uint64) <= rows[1][5].(uint64) || rows[1][11] != true {
		t.Errorf("strong scaling rows %v", rows)
	}
	cfg.Halo3D.MinFace, cfg.Halo3D.Iters, cfg.Halo3D.Strategies = 12, 0, []string{"SPIN_RWCP"}
	cfg.Halo3D.Neighbours, cfg.Halo3D.Scaling = []int{8}, "both"
	err = cfg.Validate()
	for _, field := range []string{"halo3d.min_face", "halo3d.iters", "halo3d.strategies", "halo3d.neighbours", "halo3d.scaling"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}
