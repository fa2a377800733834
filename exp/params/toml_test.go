package params

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// TestTOMLRoundTrip: the configuration TOML prints loads back, through
// --config, to the same configuration, for every preset and with
// overrides of every kind of value (units, lists, strings, floats, bools).
func TestTOMLRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]Options{}
	for _, p := range cluster.PresetNames() {
		cases[p] = Options{Preset: p}
	}
	cases["sets"] = Options{Preset: "xtq", Sets: []string{
		"link.bandwidth=200Gbps", "gpu.launch=2us", "allreduce.nodes=2-16/2", "allreduce.strategies=CPU,GPUTN",
		"allreduce.size=3MiB", "run.seed=77", "run.functional=false", "cpu.ipc=1.5", "gpu.mode=dgpu",
	}}
	for name, o := range cases {
		want, err := Load(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(path, TOML(want), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Load(Options{File: path})
		if err != nil {
			t.Fatalf("%s: the printed configuration does not load: %v", name, err)
		}
		w, g := List(want), List(got)
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("%s: %s = %s printed, %s loaded", name, w[i].Name, w[i].Value, g[i].Value)
			}
		}
	}
}

// TestTOMLNotDefault: a printed configuration carries the effective values,
// not the preset's.
func TestTOMLNotDefault(t *testing.T) {
	cfg, err := Load(Options{Sets: []string{"link.bandwidth=400Gbps"}})
	if err != nil {
		t.Fatal(err)
	}
	var want exp.Config
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, TOML(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if want, err = Load(Options{File: path}); err != nil {
		t.Fatal(err)
	}
	if v, _ := Get(want, "link.bandwidth"); v != "400Gbps" {
		t.Errorf("link.bandwidth = %s through TOML, want 400Gbps", v)
	}
}
