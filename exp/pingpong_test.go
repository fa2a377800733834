package exp

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// On h100-cx7 the default list drops GPU-TN (ConnectX has no triggered
// operations); every cell is verified, and each size names a winner among
// the strategies that ran. The placement changes the path: over the GPU
// fabric the exchange takes other times than over the rails (not always
// shorter: an intra-node transfer still takes the NIC's PCIe path, which
// bounds it near the rails' rate on h100-cx7; the workload's test checks
// the fabric wins on mi300a-ss11, whose NIC path is the faster one).
func TestPingPongExperiment(t *testing.T) {
	half := map[string]map[string]float64{}
	for _, placement := range []string{"rails", "fabric"} {
		cfg, err := DefaultConfig("h100-cx7")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"CPU", "HDN", "GDS", "GNN_GIO", "GNN_GPURDMA"}; !slices.Equal(cfg.PingPong.Strategies, want) {
			t.Fatalf("h100-cx7 default strategies %v, want %v", cfg.PingPong.Strategies, want)
		}
		cfg.PingPong.MinSize, cfg.PingPong.MaxSize, cfg.PingPong.Placement = 64, 64*unit.KiB, placement
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := runPingPong(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		half[placement] = map[string]float64{}
		for _, r := range res.Tables[0].Rows {
			if r[6] != true {
				t.Errorf("%s %v: not verified", placement, r)
			}
			// The bandwidth column is size / half round trip at full
			// precision (three decimals left 0.021 at 64 B, 0.003 at 8 B).
			if got, want := r[5].(float64), float64(r[0].(unit.Bytes))/r[3].(sim.Time).Seconds()/1e9; got != want {
				t.Errorf("%s %v: bandwidth %v GB/s, want %v", placement, r[:3], got, want)
			}
			if r[0] == 64*unit.KiB {
				half[placement][r[1].(string)] = r[4].(float64)
			}
		}
		if n := len(res.Tables[1].Rows); n != 11 {
			t.Errorf("%s: %d winner rows, want one per size (11)", placement, n)
		}
	}
	for s, rails := range half["rails"] {
		if f, ok := half["fabric"][s]; !ok || f == rails {
			t.Errorf("%s: 64 KiB half round trip %v us over the fabric, %v us over the rails: want the placement to change the path", s, f, rails)
		}
	}
}

func TestPingPongBadInput(t *testing.T) {
	cfg, err := DefaultConfig("gh200-cx7")
	if err != nil {
		t.Fatal(err)
	}
	cfg.PingPong.Placement = "fabric"
	if _, err := pingPongList(cfg); err == nil || !strings.Contains(err.Error(), "node.gpus") {
		t.Errorf("fabric on a 1-GPU node: %v", err)
	}
	cfg.PingPong.Placement, cfg.PingPong.Iters, cfg.PingPong.MinSize = "nvlink", 0, 12
	err = cfg.Validate()
	for _, field := range []string{"pingpong.placement", "pingpong.iters", "pingpong.min_size"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}

// A payload-free run compares nothing: its verified cells are empty ("-")
// with a note saying so, not the false that read as a failed check (the
// pingpong, halo3d and allreduce_hier tables of `today`, which runs them
// payload-free).
func TestPayloadFreeIsNotAFailedCheck(t *testing.T) {
	cfg, err := DefaultConfig("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Functional = false
	cfg.PingPong.MaxSize = cfg.PingPong.MinSize
	cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.MaxFace = []int{1}, []int{6}, cfg.Halo3D.MinFace
	cfg.AllreduceHier.Nodes = []int{1}
	for _, c := range []struct {
		run func(Config, Env) (*report.Result, error)
	}{{runPingPong}, {runHalo3D}, {runAllreduceHier}} {
		res, err := c.run(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		tab := res.Tables[0]
		j := slices.Index(tab.Columns, "verified")
		for _, r := range tab.Rows {
			if r[j] != "-" {
				t.Errorf("%s %v: verified = %v in a payload-free run, want - (not checked)", tab.Name, r[:3], r[j])
			}
		}
		if !slices.Contains(res.Notes, payloadFreeNote) {
			t.Errorf("%s: no note that nothing was verified: %q", tab.Name, res.Notes)
		}
	}
}
