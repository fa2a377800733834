package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Every file CSVFiles writes beyond the main table and the sidecar is a
// name IsCSVTableFile accepts for the same path (callers check those
// names before the run), and CSVSidecar names the sidecar it writes.
func TestCSVFileNamesKnownBeforeTheRun(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{
		{Name: "x", Columns: []string{"a"}, Rows: [][]any{{1}}},
		{Name: "Time per Size (µs)", Columns: []string{"a"}, Rows: [][]any{{1}}},
		{Name: "time per size", Columns: []string{"a"}, Rows: [][]any{{1}}},
		{Name: "", Columns: []string{"a"}, Rows: [][]any{{1}}},
		{Name: "ü", Columns: []string{"a"}, Rows: [][]any{{1}}},
	}}
	for _, path := range []string{"out.csv", "dir/out.CSV", "out", "a.b.csv"} {
		files, err := CSVFiles(path, r)
		if err != nil {
			t.Fatal(err)
		}
		last := len(files) - 1
		if files[0].Path != path || files[last].Path != CSVSidecar(path) {
			t.Errorf("%s: main %s, sidecar %s (CSVSidecar %s)", path, files[0].Path, files[last].Path, CSVSidecar(path))
		}
		for _, f := range files[1:last] {
			if !IsCSVTableFile(path, f.Path) {
				t.Errorf("%s: IsCSVTableFile(%s) = false for a file CSVFiles writes", path, f.Path)
			}
		}
	}
	for _, c := range []struct {
		path, file string
		want       bool
	}{
		{"out.csv", "out.t.csv", true},
		{"out.csv", "out.csv", false},
		{"out.csv", "out.meta.json", false},
		{"out.csv", "out.T.csv", false},
		{"out.csv", "out..csv", false},
		{"out.csv", "out.a.b.csv", false},
		{"out.csv", filepath.Join("d", "out.t.csv"), false},
		{"out.csv", "outx.t.csv", false},
		{"d/out.csv", "d/out.t_2.csv", true},
	} {
		if got := IsCSVTableFile(c.path, c.file); got != c.want {
			t.Errorf("IsCSVTableFile(%s, %s) = %v, want %v", c.path, c.file, got, c.want)
		}
	}
}

// A column's unit reaches the CSV header from its cells (durations, sizes,
// Quantities of one unit) or from Table.Units; the text table keeps the
// bare name of a column whose cells print their unit ("25Gbps") and names
// a Units column's unit in its header, since its cells are bare numbers; a
// Quantity column of mixed units is two in the CSV, its numbers and their
// units, neither mixing text and numbers.
func TestCSVHeaderUnits(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{Name: "x",
		Columns: []string{"block", "bw", "mixed", "n"},
		Units:   map[string]string{"block": "B"},
		Rows: [][]any{
			{16, Quantity{Text: "25Gbps", Value: 25, Unit: "Gbps"}, Quantity{Text: "1us", Value: 1, Unit: "us"}, 1},
			{32, Quantity{Text: "50Gbps", Value: 50, Unit: "Gbps"}, Quantity{Text: "32", Value: 32}, 2},
		}}}}
	files, err := CSVFiles("out.csv", r)
	if err != nil {
		t.Fatal(err)
	}
	want := "block [B],bw [Gbps],mixed,mixed unit,n\n16,25,1,us,1\n32,50,32,,2\n"
	if got := string(files[0].Data); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  block [B]  bw      mixed  n\n") || !strings.Contains(text.String(), "25Gbps") {
		t.Errorf("text:\n%s", text.String())
	}
}

// A column of Quantities whose text carries the unit ("+12.3%") keeps its
// unit out of the text header (before, "change [%]" headed "+12.3%"
// cells); Units still heads the CSV when every cell is missing, so the
// header does not depend on the data.
func TestQuantityColumnUnitsInHeaders(t *testing.T) {
	pct := func(v float64) Quantity { return Quantity{Text: fmt.Sprintf("%+.1f%%", v), Value: v, Unit: "%"} }
	r := &Result{Experiment: "x", Tables: []Table{{Name: "x",
		Columns: []string{"k", "change", "none"},
		Units:   map[string]string{"change": "%", "none": "%"},
		Rows:    [][]any{{"a", pct(12.5), "-"}, {"b", "-", "-"}}}}}
	files, err := CSVFiles("out.csv", r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "k,change [%],none [%]\na,12.5,\nb,,\n"; string(files[0].Data) != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", files[0].Data, want)
	}
	var text strings.Builder
	if err := WriteTable(&text, r.Tables[0]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  k  change  none [%]\n") || !strings.Contains(text.String(), "+12.5%") {
		t.Errorf("text:\n%s", text.String())
	}
}
