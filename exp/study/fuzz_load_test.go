package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad checks that a study file, whatever it holds, is refused with
// an error naming the study or loaded into entries with unique labels;
// Load never panics.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"name = \"bw\"\n[[experiment]]\nname = \"allreduce\"\nsweep = [\"link.bandwidth=25Gbps..400Gbps*2\"]\n",
		"[[experiment]]\nname = \"latency\"\nset = [\"latency.size=64B\"]\n[[experiment]]\nname = \"latency\"\n",
		"[[experiment]]\nname = \"nosuch\"\n", "name = 3\n", "[[experiment]]\nsweep = [\"x=1..\"]\n", "",
		"config = \"../../etc/passwd\"\n[[experiment]]\nname = \"allreduce\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		path := filepath.Join(t.TempDir(), "s.toml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "study") {
				t.Fatalf("error %q does not name the study", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, e := range s.Entries {
			if e.Label == "" || seen[e.Label] {
				t.Fatalf("label %q empty or repeated", e.Label)
			}
			seen[e.Label] = true
		}
	})
}
