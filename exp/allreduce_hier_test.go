package exp

import (
	"slices"
	"strings"
	"testing"
)

// The quick sweep runs on h100-cx7 (8 GPUs per node) and on gh200-cx7 (one
// GPU per node, where the intra-node phases are empty and it is the ring);
// every cell is verified and one winner row names each node count.
func TestAllreduceHierExperiment(t *testing.T) {
	for _, preset := range []string{"h100-cx7", "gh200-cx7"} {
		cfg, err := DefaultConfig(preset)
		if err != nil {
			t.Fatal(err)
		}
		quickAllreduceHier(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := runAllreduceHier(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		rows := res.Tables[0].Rows
		if n := 2 * len(cfg.AllreduceHier.Strategies); len(rows) != n || len(res.Tables[1].Rows) != 2 {
			t.Fatalf("%s: %d rows, %d winner rows: want %d and 2", preset, len(rows), len(res.Tables[1].Rows), n)
		}
		for _, r := range rows {
			if r[10] != true {
				t.Errorf("%s %v: not verified", preset, r)
			}
			if intra := r[6].(float64) > 0; intra != (preset == "h100-cx7") {
				t.Errorf("%s %v: intra-node reduce-scatter time with %v GPUs per node", preset, r, cfg.Node.GPUs)
			}
		}
	}
}

func TestAllreduceHierBadInput(t *testing.T) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllreduceHier.Size, cfg.AllreduceHier.Nodes, cfg.AllreduceHier.Strategies = 6, []int{0}, []string{"XTQ"}
	cfg.AllreduceHier.Inter = "star"
	err = cfg.Validate()
	for _, field := range []string{"allreduce_hier.size", "allreduce_hier.nodes", "allreduce_hier.strategies", "allreduce_hier.inter"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}

// One GPU moves nothing in no time: its bus bandwidth is no rate (an
// empty cell), not the 0 GB/s it printed before; two GPUs have one.
func TestAllreduceHierOneGPUHasNoBusRate(t *testing.T) {
	cfg, err := DefaultConfig("gh200-cx7") // one GPU per node
	if err != nil {
		t.Fatal(err)
	}
	quickAllreduceHier(&cfg)
	cfg.AllreduceHier.Nodes, cfg.AllreduceHier.Strategies = []int{1, 2}, []string{"CPU"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := runAllreduceHier(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	j := slices.Index(res.Tables[0].Columns, "bus_GB/s")
	for _, r := range res.Tables[0].Rows {
		bus, ok := r[j].(float64)
		if one := r[1] == 1; one && r[j] != nil || !one && (!ok || bus <= 0) {
			t.Errorf("%v GPUs: bus %v GB/s, want none for one GPU and a positive rate for two", r[1], r[j])
		}
	}
}
