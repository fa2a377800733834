package report

import (
	"path/filepath"
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
