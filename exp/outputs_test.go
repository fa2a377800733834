package exp_test

import (
	"bytes"
	"compress/zlib"
	"encoding/csv"
	"encoding/json"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"gonum.org/v1/plot"
)

// TestEveryExperimentOutputs runs every experiment at its quick size and
// checks its outputs as a reader would meet them: each CSV file one
// table that a strict one-header reader loads (every row as wide as the
// header, no comment lines), the sidecar naming them; the text report
// within 120 columns; the plot with at most six series a panel, at least
// four labelled ticks per axis, a log axis exactly where values span more
// than two decades, a PNG at least 1600 pixels wide and a PDF whose text
// is encoded for its fonts.
//
// The CSV headers of every experiment's files are also compared with
// testdata/csv_headers.golden: a reader's script selects columns by these
// names, so a change to one is deliberate (-update rewrites the file when
// every experiment ran).
func TestEveryExperimentOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	var mu sync.Mutex
	headers := map[string][]string{}
	t.Cleanup(func() {
		if len(headers) != len(exp.List()) || t.Failed() {
			return // a subset ran (-run), or something failed already
		}
		var lines []string
		for _, e := range exp.List() {
			lines = append(lines, headers[e.Name]...)
		}
		checkHeadersGolden(t, filepath.Join("testdata", "csv_headers.golden"), strings.Join(lines, "\n")+"\n")
	})
	for _, e := range exp.List() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			cfg, err := exp.DefaultConfig(params.DefaultPreset)
			if err != nil {
				t.Fatal(err)
			}
			if e.Sizes.Quick != nil {
				e.Sizes.Quick(&cfg)
			} else if e.Sizes.Default != nil {
				e.Sizes.Default(&cfg)
			}
			res, err := e.Run(cfg, exp.Env{})
			if err != nil {
				t.Fatal(err)
			}
			res.Params = params.Record(cfg)
			h := checkCSVs(t, res)
			mu.Lock()
			headers[e.Name] = h
			mu.Unlock()
			checkText(t, e.Name, res)
			if res.Plot != nil {
				checkPlot(t, res)
			}
		})
	}
}

// checkCSVs checks res's CSV files and returns one line per file: the
// experiment, the file's name and its header row.
func checkCSVs(t *testing.T, res *report.Result) []string {
	files, err := report.CSVFiles(filepath.Join("dir", "out.csv"), res)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if got, want := len(files), max(1, len(res.Tables))+1; got != want {
		t.Fatalf("%d files, want %d (one per table and the sidecar)", got, want)
	}
	var meta report.Meta
	side := files[len(files)-1]
	if side.Path != filepath.Join("dir", "out.meta.json") {
		t.Errorf("sidecar %s, want dir/out.meta.json", side.Path)
	}
	if err := json.Unmarshal(side.Data, &meta); err != nil {
		t.Fatalf("sidecar: %v", err)
	}
	if len(meta.Params) == 0 || len(meta.Tables) != len(files)-1 {
		t.Errorf("sidecar lists %d tables and %d parameters", len(meta.Tables), len(meta.Params))
	}
	seen := map[string]bool{}
	for i, f := range files[:len(files)-1] {
		if seen[f.Path] {
			t.Errorf("two tables write %s", f.Path)
		}
		seen[f.Path] = true
		if meta.Tables[i].File != filepath.Base(f.Path) {
			t.Errorf("sidecar names %s for table %q, written to %s", meta.Tables[i].File, f.Table, f.Path)
		}
		r := csv.NewReader(bytes.NewReader(f.Data))
		r.FieldsPerRecord = 0 // every record as wide as the first
		recs, err := r.ReadAll()
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		if len(recs) == 0 {
			t.Errorf("%s: no header", f.Path)
			continue
		}
		cols := map[string]bool{}
		for _, c := range recs[0] {
			if c == "" || cols[c] {
				t.Errorf("%s: empty or repeated column name %q", f.Path, c)
			}
			cols[c] = true
		}
		if strings.HasPrefix(string(f.Data), "#") {
			t.Errorf("%s starts with a comment line", f.Path)
		}
		checkColumnTypes(t, f.Path, recs)
		lines = append(lines, res.Experiment+" "+filepath.Base(f.Path)+": "+string(f.Data[:bytes.IndexByte(f.Data, '\n')]))
	}
	return lines
}

// checkHeadersGolden compares got with the file at path, or writes it
// there under -update (the flag of package exp's golden tests).
func checkHeadersGolden(t *testing.T, path, got string) {
	t.Helper()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./exp -run TestEveryExperimentOutputs -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: the CSV headers changed; a reader's scripts select columns by them: if deliberate, say so in docs and run go test ./exp -run TestEveryExperimentOutputs -update\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// checkColumnTypes checks that a loader infers each column's type the
// way a reader means it: a column that holds numbers holds only numbers
// and empty cells (no "-", "n/a" or "8B" that would turn it into text in
// pandas or R), and a header with a unit ("time [us]", "size [B]") heads
// a numeric column.
func checkColumnTypes(t *testing.T, path string, recs [][]string) {
	t.Helper()
	for j, name := range recs[0] {
		var nums, texts int
		example := ""
		for _, r := range recs[1:] {
			c := r[j]
			if c == "" {
				continue
			}
			if _, err := strconv.ParseFloat(c, 64); err == nil {
				nums++
			} else {
				texts++
				example = c
			}
		}
		if nums > 0 && texts > 0 {
			t.Errorf("%s: column %q mixes %d numbers with %d text cells (e.g. %q): a loader reads it as text", path, name, nums, texts, example)
		}
		if strings.HasSuffix(name, "]") && texts > 0 {
			t.Errorf("%s: column %q has a unit but text cells (e.g. %q)", path, name, example)
		}
	}
}

func checkText(t *testing.T, name string, res *report.Result) {
	own, hardware := exp.ParamSections(name)
	var b bytes.Buffer
	if err := report.WriteTextFor(&b, res, own, hardware); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("text line %d is %d columns: %q", i+1, n, line)
		}
	}
}

func checkPlot(t *testing.T, res *report.Result) {
	if lay := report.PlotLayout(res.Plot); lay != nil {
		var xs, ys []float64
		for _, p := range lay.Panels {
			if len(p.Series) > report.MaxSeriesPerPanel {
				t.Errorf("panel %q draws %d series", p.Title, len(p.Series))
			}
			for _, s := range p.Series {
				xs, ys = append(xs, s.X...), append(ys, s.Y...)
			}
		}
		if len(xs) > 0 {
			if n := labelled(lay.XTicks); n < 4 && lay.XMax > lay.XMin {
				t.Errorf("%d labelled x ticks", n)
			}
			if n := labelled(lay.YTicks); n < 4 && lay.YMax > lay.YMin {
				t.Errorf("%d labelled y ticks", n)
			}
			if want := spans(ys); lay.LogY != want {
				t.Errorf("log y axis %v, want %v (values %g..%g)", lay.LogY, want, slices.Min(ys), slices.Max(ys))
			}
			if spans(xs) && !lay.LogX {
				t.Errorf("linear x axis over %g..%g", slices.Min(xs), slices.Max(xs))
			}
		}
	}
	var img bytes.Buffer
	if err := report.WritePlot(&img, res, "png"); err != nil {
		t.Fatal(err)
	}
	if c, err := png.DecodeConfig(&img); err != nil || c.Width < 1600 {
		t.Errorf("PNG: %v, %d pixels wide, want >= 1600", err, c.Width)
	}
	var pdf bytes.Buffer
	if err := report.WritePlot(&pdf, res, "pdf"); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, pdf.Bytes())
	if want := pdfEscape(report.ToWindows1252(res.Plot.Title)); res.Plot.Title != "" && !strings.Contains(text, want) {
		t.Errorf("PDF lacks the title %q encoded as %q", res.Plot.Title, want)
	}
	for _, m := range pdfShown.FindAllStringSubmatch(text, -1) {
		// Text in UTF-8 would print as mojibake ("÷" as "Ã·") in the
		// Windows-1252 fonts.
		if s := m[1]; utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) >= 0 {
			t.Errorf("PDF shows UTF-8 text %q", s)
		}
	}
}

// spans reports whether v is all positive over more than two decades.
func spans(v []float64) bool {
	if len(v) == 0 {
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if x <= 0 {
			return false
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi/lo > 100
}

func labelled(ts []plot.Tick) int {
	n := 0
	for _, t := range ts {
		if t.Label != "" {
			n++
		}
	}
	return n
}

// pdfText returns a PDF's content streams, inflated.
func pdfText(t *testing.T, pdf []byte) string {
	var out strings.Builder
	for rest := pdf; ; {
		i := bytes.Index(rest, []byte("stream\n"))
		if i < 0 {
			break
		}
		rest = rest[i+len("stream\n"):]
		j := bytes.Index(rest, []byte("endstream"))
		if j < 0 {
			break
		}
		if zr, err := zlib.NewReader(bytes.NewReader(rest[:j])); err == nil {
			b, _ := io.ReadAll(zr)
			out.Write(b)
		} else {
			out.Write(rest[:j])
		}
		rest = rest[j:]
	}
	return out.String()
}

// pdfShown matches a string a PDF content stream shows.
var pdfShown = regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\) ?Tj`)

// pdfEscape escapes s as a PDF string literal does.
func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}
