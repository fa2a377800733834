package validate

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/holds_<group>.txt from this run (only the groups of the entries run)")

// runAll runs the whole shipped calibration set at quick sizes.
func runAll(tb testing.TB) []Result {
	tb.Helper()
	es, err := Parse("calibration.toml", Embedded())
	if err != nil {
		tb.Fatal(err)
	}
	return Run(es, Options{Quick: true})
}

// An entry recorded as holding in testdata/holds_<group>.txt must still
// hold: a change that breaks a calibrated outcome fails here, and a change
// that makes a new entry hold is recorded deliberately with -update (each
// evaluator file's owner updates only their own record).
func TestHeldEntriesStillHold(t *testing.T) {
	rs := runAll(t)
	byID := map[string]Result{}
	for _, r := range rs {
		byID[r.Entry.ID] = r
		if r.Status == RunFailed {
			t.Errorf("%s failed to run: %s", r.Entry.ID, r.Note)
		}
	}
	for _, g := range groupNames(Groups()) {
		path := filepath.Join("testdata", "holds_"+g+".txt")
		if *update {
			var lines []string
			for _, r := range rs {
				if r.Group == g && r.Holds {
					lines = append(lines, r.Entry.ID)
				}
			}
			data := "# entries of " + g + ".go that hold; regenerate with go test ./exp/validate -run TestHeldEntriesStillHold -update\n" + strings.Join(lines, "\n")
			if len(lines) > 0 {
				data += "\n"
			}
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (create it with -update)", err)
		}
		for _, id := range strings.Split(string(data), "\n") {
			id = strings.TrimSpace(id)
			if id == "" || strings.HasPrefix(id, "#") {
				continue
			}
			r, ok := byID[id]
			switch {
			case !ok:
				t.Errorf("%s lists %s, which is not in the calibration set", path, id)
			case r.Group != g:
				t.Errorf("%s lists %s, which group %q judges", path, id, r.Group)
			case !r.Holds:
				t.Errorf("%s held before and no longer holds: %s %s (clauses %v)", id, r.Status, r.Note, r.Clauses)
			}
		}
	}
}

// Evaluators are deterministic: two runs give the same verdicts and values.
func TestDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the calibration set twice")
	}
	es, err := Parse("calibration.toml", Embedded())
	if err != nil {
		t.Fatal(err)
	}
	es, err = Select(es, []string{"d0-fig6.5", "d0-fig4.6"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := Run(es, Options{Quick: true}), Run(es, Options{Quick: true})
	for i := range a {
		if a[i].Holds != b[i].Holds || !slices.Equal(clauseTexts(a[i]), clauseTexts(b[i])) || a[i].Note != b[i].Note {
			t.Errorf("%s: two runs differ", a[i].Entry.ID)
		}
	}
}

func clauseTexts(r Result) []string {
	var out []string
	for _, c := range r.Clauses {
		out = append(out, c.Text)
	}
	return out
}

// BenchmarkValidate reports the wall time of the whole validation at the
// CLI's (full) sizes; the goal is under two minutes on two cores.
func BenchmarkValidate(b *testing.B) {
	es, err := Parse("calibration.toml", Embedded())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rs := Run(es, Options{})
		if Failed(rs) > 0 {
			b.Fatalf("%d entries failed", Failed(rs))
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/validation")
}
