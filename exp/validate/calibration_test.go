package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped calibration file is the project's, byte for byte, where the
// project's copy is present (a checkout next to the shared validation set).
func TestEmbeddedMatchesProjectCopy(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "validation", "calibration.toml")
	want, err := os.ReadFile(shared)
	if os.IsNotExist(err) {
		t.Skipf("%s not present: nothing to compare with", shared)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, Embedded()) {
		t.Fatalf("exp/validate/calibration.toml differs from %s: copy it over (cp %s exp/validate/calibration.toml)", shared, shared)
	}
}

func TestParseShipped(t *testing.T) {
	es, err := Parse("calibration.toml", Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if len(es) < 40 {
		t.Fatalf("%d entries, want the whole set (46 when written)", len(es))
	}
	for _, e := range es {
		if GroupOf(e.ID) == "" {
			t.Errorf("entry %s: no evaluator group claims it; register at least a not-runnable evaluator", e.ID)
		}
	}
}

func TestParseRejects(t *testing.T) {
	entry := func(fields string) string {
		return "[[entry]]\n" + fields + "\n"
	}
	ok := `id = "x-1"
doc = "D0"
figure = "Fig 1"
preset = "gputn"
claim = "c"
`
	tests := []struct {
		name, file, want string
	}{
		{"syntax", "[[entry]\nid = 1", "cal.toml:1"},
		{"unknown field", entry(ok + `kind = "ordering"` + "\nvalu = 3"), `unknown field "entry.valu"`},
		{"unknown preset", entry(strings.Replace(ok, "gputn", "nosuch", 1) + `kind = "ordering"`), `entry "x-1": field preset = "nosuch"`},
		{"unknown kind", entry(ok + `kind = "ratios"`), `entry "x-1": field kind = "ratios"`},
		{"unknown doc", entry(strings.Replace(ok, "D0", "D9", 1) + `kind = "shape"`), `entry "x-1": field doc = "D9"`},
		{"ratio without value", entry(ok + `kind = "ratio"`), `entry "x-1": field value is missing`},
		{"absolute without unit", entry(ok + "kind = \"absolute\"\nvalue = 2"), `entry "x-1": field unit is missing`},
		{"bound inverted", entry(ok + "kind = \"bound\"\nlow = 3\nhigh = 2"), `entry "x-1": field low = 3`},
		{"bound one-sided", entry(ok + "kind = \"bound\"\nlow = 3"), `entry "x-1": fields low and high`},
		{"duplicate id", entry(ok+`kind = "shape"`) + entry(ok+`kind = "shape"`), `entry "x-1": field id repeats`},
		{"missing id", entry(strings.Replace(ok, `id = "x-1"`, "", 1) + `kind = "shape"`), "entry 1: field id is missing"},
		{"empty", "", "no [[entry]] tables"},
		// A NaN, infinite or negative published value made the entry a
		// silent miss (every comparison with NaN fails) instead of bad input.
		{"ratio NaN", entry(ok + "kind = \"ratio\"\nvalue = nan"), `entry "x-1": field value = NaN: must be a finite number > 0`},
		{"ratio infinite", entry(ok + "kind = \"ratio\"\nvalue = inf"), `entry "x-1": field value = +Inf: must be a finite number > 0`},
		{"ratio negative", entry(ok + "kind = \"ratio\"\nvalue = -0.9"), `entry "x-1": field value = -0.9: must be a finite number > 0`},
		{"absolute negative", entry(ok + "kind = \"absolute\"\nvalue = -2\nunit = \"us\""), `entry "x-1": field value = -2: must be a finite number > 0`},
		{"bound NaN", entry(ok + "kind = \"bound\"\nlow = nan\nhigh = 2"), `entry "x-1": field low = NaN: must be a finite number`},
		{"bound infinite", entry(ok + "kind = \"bound\"\nlow = 1\nhigh = inf"), `entry "x-1": field high = +Inf: must be a finite number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cal.toml", []byte(tc.file))
			if err == nil {
				t.Fatalf("accepted %q", tc.file)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if line == "" {
					t.Fatalf("empty line in %q", err)
				}
			}
		})
	}
}

func TestSelect(t *testing.T) {
	es, err := Parse("calibration.toml", Embedded())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Select(es, []string{"d0-fig6.5", "d4"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if !strings.HasPrefix(e.ID, "d0-fig6.5") && !strings.HasPrefix(e.ID, "d4") {
			t.Errorf("selected %s", e.ID)
		}
	}
	if len(got) != 7 {
		t.Errorf("selected %d entries, want the 5 of Fig 6.5 and the 2 of D4", len(got))
	}
	if _, err := Select(es, []string{"d0", "d9"}); err == nil || !strings.Contains(err.Error(), `--only "d9"`) || strings.Contains(err.Error(), `"d0"`) {
		t.Errorf("unknown prefix: error %v, want one naming d9 only", err)
	}
	// A prefix listed twice (--only d9,d9, or ",") is one problem, one
	// line: each printed a line of its own.
	for _, list := range [][]string{{"d9", "d0", "d9"}, {"", ""}} {
		if _, err := Select(es, list); err == nil || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("Select(%q): error %q, want one line", list, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Embedded())
	f.Add([]byte("[[entry]]\nid = \"a\"\nkind = \"bound\"\nlow = 1\nhigh = 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := Parse("fuzz.toml", data)
		if err != nil {
			if es != nil {
				t.Fatal("entries returned with an error")
			}
			return
		}
		for _, e := range es {
			switch e.Kind {
			case Ratio, Absolute:
				if e.Value == nil {
					t.Fatalf("%s: %s entry without value accepted", e.ID, e.Kind)
				}
			case Bound:
				if e.Low == nil || e.High == nil || *e.Low > *e.High {
					t.Fatalf("%s: bad bound accepted", e.ID)
				}
			}
		}
	})
}
