package exp

import (
	"github.com/gpunetsim/gpunetsim/exp/report"
	"reflect"
	"strings"
	"testing"
)

func quickPULPConfig(t *testing.T, preset string) Config {
	t.Helper()
	cfg, err := DefaultConfig(preset)
	if err != nil {
		t.Fatal(err)
	}
	quickPULP(&cfg)
	return cfg
}

// The PULP studies run verified at their quick sizes, on both HPU models,
// and give identical tables whatever the worker count.
func TestPULPExperiments(t *testing.T) {
	for _, run := range []func(Config, Env) (*report.Result, error){runDDTPULPBW, runDDTPULPKernels} {
		cfg := quickPULPConfig(t, "pulp")
		cfg.Run.Parallel = 1
		a, err := run(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Run.Parallel = 3
		b, err := run(cfg, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Tables, b.Tables) {
			t.Fatalf("%s: tables differ between 1 and 3 workers", a.Experiment)
		}
		rows := a.Tables[0].Rows
		if len(rows) != 6 {
			t.Fatalf("%s: %d rows, want 3 block sizes × 2 models", a.Experiment, len(rows))
		}
		for _, r := range rows {
			if r[0] != "pulp" && r[0] != "arm" || r[len(r)-1] != true {
				t.Fatalf("%s: row %v: want model pulp or arm, verified", a.Experiment, r)
			}
		}
		if !strings.Contains(strings.Join(a.Notes, "\n"), "functional: ") {
			t.Fatalf("%s: no verification note in %v", a.Experiment, a.Notes)
		}
	}
}

// On a preset with ARM HPUs the PULP side comes from the pulp preset, and
// the report says so.
func TestPULPFromARMPreset(t *testing.T) {
	cfg, err := DefaultConfig("spin")
	if err != nil {
		t.Fatal(err)
	}
	cfg.DDTPULP.BWBlocks, cfg.DDTPULP.BWTotal = []int{4096}, 512*1024
	res, err := runDDTPULPBW(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Notes[0], "uses the pulp preset's spin.* values") || res.Tables[0].Rows[0][0] != "pulp" {
		t.Fatalf("notes %v, rows %v", res.Notes, res.Tables[0].Rows)
	}
}
