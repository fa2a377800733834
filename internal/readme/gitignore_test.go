package readme

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tourOutputs returns the files the README's tour (its ```sh blocks)
// writes into the directory it runs in: the values of the output flags,
// with the sidecar and further-table files of a --csv, and the study
// file the tour has the reader write.
func tourOutputs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flag := regexp.MustCompile(`(?:--csv|--plot|--json|--trace|--out) +([^ '"]+\.[a-z]+)\b`)
	var out []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			if !strings.HasPrefix(line, "gpunetsim ") {
				continue
			}
			line, _, _ = strings.Cut(line, "#") // the comment's flags are not run
			for _, m := range flag.FindAllStringSubmatch(line, -1) {
				out = append(out, m[1])
				if stem, ok := strings.CutSuffix(m[1], ".csv"); ok {
					out = append(out, stem+".meta.json", stem+".some_table.csv")
				}
			}
			if f := regexp.MustCompile(`^gpunetsim study run (\S+\.toml)`).FindStringSubmatch(line); f != nil {
				out = append(out, f[1])
			}
		}
	}
	return out
}

// ignored reports whether the root .gitignore's anchored patterns ("/x",
// "/x.*.csv", "/dir/") match file name in the repository root.
func ignored(patterns []string, name string) bool {
	for _, p := range patterns {
		p, ok := strings.CutPrefix(p, "/")
		if !ok || strings.HasSuffix(p, "/") {
			continue
		}
		if m, _ := path.Match(p, name); m {
			return true
		}
	}
	return false
}

// Following the README's tour in a clone leaves nothing for `git status`
// to list: every file its commands write is ignored. Before, thirteen
// (out.csv, speedup.svg, lat.json, matrix.csv, r.html, ring.goal, …) were
// listed as untracked, waiting to be committed by mistake.
func TestTourOutputsAreIgnored(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns := strings.Fields(string(regexp.MustCompile(`(?m)^#.*$`).ReplaceAll(b, nil)))
	outs := tourOutputs(t)
	if len(outs) < 10 {
		t.Fatalf("found %d tour outputs (%q): the README's tour changed shape", len(outs), outs)
	}
	for _, o := range outs {
		if !ignored(patterns, o) {
			t.Errorf("the tour writes %s, which .gitignore does not ignore", o)
		}
	}
}
