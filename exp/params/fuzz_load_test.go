package params

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadTOML checks that a configuration file, whatever it holds, is
// either refused with an error naming the file or loaded into a
// configuration that passes Validate and the type-wide bounds; Load never
// panics.
func FuzzLoadTOML(f *testing.F) {
	for _, s := range []string{
		"[run]\npreset = \"gputn\"\nseed = 7\n[link]\nbandwidth = \"200Gbps\"\n",
		"[allreduce]\nsize = \"8MiB\"\nnodes = [2, 4, 8]\nstrategies = [\"CPU\", \"GPUTN\"]\n",
		"[link]\nlatency = \"1e300s\"\n", "[gpu]\nfreq = \"0Hz\"\n", "[nope]\nx = 1\n", "run = 3\n",
		"[allreduce]\nnodes = \"2-64/2\"\n", "[run]\npreset = \"nosuch\"\n", "\x00", "[[run]]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		path := filepath.Join(t.TempDir(), "c.toml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(Options{File: path})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("loaded a configuration Validate refuses: %v", err)
		}
		if err := CheckBounds(cfg); err != nil {
			t.Fatalf("loaded a configuration outside the type-wide bounds: %v", err)
		}
	})
}
