package params

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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
		"jacobi.sizes=32,48,64,96,128,192,256,384,512,768,1024,1536,2048,3072,4096,6144,8192,12288,16384,24576,32768",
	}}
	for name, o := range cases {
		want, err := Load(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(dir, name+".toml")
		text := TOML(want)
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		// Long meanings and arrays wrap: the file reads within 120
		// columns (the matrix's strategy list spans lines).
		for i, line := range strings.Split(string(text), "\n") {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s: line %d is %d columns: %q", name, i+1, n, line)
			}
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
