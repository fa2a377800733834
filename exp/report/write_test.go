package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// sample returns a Result exercising every cell type.
func sample() *Result {
	return &Result{
		Experiment: "allreduce",
		Seed:       42,
		Params: []Param{
			{Name: "link.bandwidth", Value: "100Gbps", Src: "DOC", Doc: "bandwidth per direction"},
			{Name: "allreduce.nodes", Value: "2,3,4", Src: "DEFAULT", Doc: "node counts to sweep"},
			{Name: "run.seed", Value: "42", Src: "RUN", Doc: "seed of every random stream"},
		},
		Tables: []Table{
			{
				Name:    "allreduce 8MiB float32 sum",
				Columns: []string{"nodes", "strategy", "time", "speedup", "verified"},
				Rows: [][]any{
					{2, "CPU", 1234567 * sim.Picosecond, 1.0, true},
					{2, "GPUTN", 2500 * sim.Nanosecond, 0.4938268, true},
					{3, "CPU", 3 * sim.Millisecond, 1.0, false},
					{3, "GPUTN, \"quoted\"", 41 * sim.Microsecond, 73.17073170731707, nil},
				},
			},
			{
				Name:    "counts",
				Columns: []string{"what", "n", "u", "ratio"},
				Rows: [][]any{
					{"events", int64(1 << 40), uint64(7), math.NaN()},
					{"packets", 12, uint64(0), 0.000123456},
				},
			},
		},
		Plot: &Plot{Title: "Allreduce", XLabel: "nodes", YLabel: "speedup", LogX: true, Series: []Series{
			{Name: "CPU", X: []float64{2, 3}, Y: []float64{1, 1}},
			{Name: "GPUTN", X: []float64{2, 3}, Y: []float64{0.49, math.Inf(1)}},
		}},
		Notes: []string{"functional: every node's result verified against a serial sum"},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tt := range []struct {
		file  string
		write func(io.Writer, *Result) error
	}{
		{"sample.txt.golden", WriteText},
		{"sample.csv.golden", WriteCSV},
		{"sample.json.golden", WriteJSON},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, sample()); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, b.Bytes())
		})
	}
}

// TestDeterministic checks that equal results give byte-identical files.
func TestDeterministic(t *testing.T) {
	for name, write := range map[string]func(io.Writer, *Result) error{
		"text": WriteText, "csv": WriteCSV, "json": WriteJSON,
		"svg": func(w io.Writer, r *Result) error { return WritePlot(w, r, "svg") },
	} {
		var a, b bytes.Buffer
		if err := write(&a, sample()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := write(&b, sample()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two writes of one result differ", name)
		}
	}
}

func TestCSVKeepsPrecision(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"nodes,strategy,time [us],speedup,verified\n",
		"2,CPU,1.234567,1,true\n",
		"3,\"GPUTN, \"\"quoted\"\"\",41,73.17073170731707,\n",
		"events,1099511627776,7,NaN\n",
		"# link.bandwidth = 100Gbps [DOC] bandwidth per direction\n",
		"# seed = 42\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("CSV lacks %q:\n%s", want, s)
		}
	}
}

func TestTextCell(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, "-"},
		{1.0, "1.000"},
		{73.17073170731707, "73.17"},
		{1234.5, "1234"},
		{0.000123456, "0.000123"},
		{0.5, "0.500"},
		{0.97, "0.970"},
		{0.00123, "0.00123"},
		{0.0, "0.000"},
		{math.Inf(-1), "-Inf"},
		{2500 * sim.Nanosecond, "2.5us"},
		{792604202 * sim.Picosecond, "792.6us"},
		{1201460763 * sim.Picosecond, "1.201ms"},
		{1999999999 * sim.Picosecond, "2ms"},
		{160 * sim.Nanosecond, "160ns"},
		{sim.Time(250), "250ps"},
		{-1500 * sim.Nanosecond, "-1.5us"},
		{3 * sim.Second / 2, "1.5s"},
		{true, "true"},
		{int64(-3), "-3"},
	}
	for _, tt := range tests {
		if got := textCell(tt.in); got != tt.want {
			t.Errorf("textCell(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlotFormats(t *testing.T) {
	magic := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF"}
	for format, prefix := range magic {
		got, err := PlotFormat("out/x." + strings.ToUpper(format))
		if err != nil || got != format {
			t.Fatalf("PlotFormat(.%s) = %q, %v", format, got, err)
		}
		var b bytes.Buffer
		if err := WritePlot(&b, sample(), format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.HasPrefix(b.String(), prefix) {
			t.Errorf("%s plot starts with %q", format, b.String()[:min(16, b.Len())])
		}
	}
	if _, err := PlotFormat("x.jpg"); err == nil || !strings.Contains(err.Error(), ".svg, .png or .pdf") {
		t.Errorf("PlotFormat(x.jpg) error = %v", err)
	}
	r := sample()
	r.Plot = nil
	if err := WritePlot(io.Discard, r, "svg"); !errors.Is(err, ErrNoPlot) {
		t.Errorf("WritePlot without plot: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile error = %v; want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("failed write changed the file to %q", b)
	}
	if err := WriteFile(path, func(w io.Writer) error { return WriteCSV(w, sample()) }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "# experiment = allreduce") {
		t.Fatalf("file holds %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries; want only out.csv", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "no", "such.csv"), func(io.Writer) error { return nil }); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
}

// TestEmptyTableSaysNone checks that a table without rows (no crossovers,
// say) prints its header and "(none)", not a header that reads as a
// truncated table, and that a table with rows does not.
func TestEmptyTableSaysNone(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{
		{Name: "crossovers (time)", Columns: []string{"becomes faster", "than"}},
		{Name: "times", Columns: []string{"n"}, Rows: [][]any{{1}}},
	}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "crossovers (time)\n  becomes faster  than\n  (none)\n\ntimes\n  n\n  1\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text report:\n%s\nwant it to contain:\n%s", b.String(), want)
	}
}

// TestCSVDropsRoundedCopies: a table's "X_us" or "X_ns" column beside a
// duration column "X" (the text report's rounded copy) is left out of both CSV forms,
// which write X at full precision; an "_us" column with no duration beside it
// stays (headed "runner_up [us]"), and the text form keeps both.
func TestCSVDropsRoundedCopies(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{
		Name:    "x",
		Columns: []string{"strategy", "time", "time_us", "runner_up_us", "time_ns"},
		Rows: [][]any{
			{"CPU", sim.Time(1234567), 1.235, 2.5, 1234.6},
			{"HDN", "-", "-", 3.0, "-"},
		},
	}}}
	for name, s := range bothCSVForms(t, r) {
		for _, want := range []string{"strategy,time [us],runner_up [us]\n", "CPU,1.234567,2.5\n", "HDN,,3\n"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, s)
			}
		}
	}
	if got := r.Tables[0].Columns; len(got) != 5 {
		t.Errorf("the result's table was modified: %v", got)
	}
}

// TestCSVHeaderUnitSuffix: a plain-number column whose name ends in a unit
// ("dispatch_us") is headed with the unit in brackets in both CSV forms,
// as a column with Units or durations is; a ratio ("instr_per_B"), a
// column with text cells and a name with no unit suffix keep their names.
// The text table heads every column as the CSV does (before, it printed
// "dispatch_us" and "margin_pct" beside the CSV's "dispatch [us]").
func TestCSVHeaderUnitSuffix(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{
		Name: "x",
		Columns: []string{"dispatch_us", "size_B", "bus_GB/s", "fifo_GBps", "qp_MBps", "energy_uj", "margin_pct",
			"init_ns", "instr_per_B", "label_us", "hits", "block_B", "inter_GB/s"},
		Rows: [][]any{
			{1.5, 8, 2.25, 3.0, 4.0, 5.0, 6.0, int64(7), 0.5, "a", 3, "-", nil},
			{2.5, 16, 2.5, 3.5, 4.5, 5.5, 6.5, int64(8), 0.25, "b", 4, 4096, "-"},
		},
		Units: map[string]string{"block_B": "KiB"},
	}}}
	// inter_GB/s has no value in any row (moe's inter-node rate on one
	// node): its header still names the unit, as when a row has one.
	want := "dispatch [us],size [B],bus [GB/s],fifo [GB/s],qp [MB/s],energy [uJ],margin [%]," +
		"init [ns],instr_per_B,label_us,hits,block_B [KiB],inter [GB/s]\n"
	for name, s := range bothCSVForms(t, r) {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, s)
		}
	}
	var text bytes.Buffer
	if err := WriteTable(&text, r.Tables[0]); err != nil {
		t.Fatal(err)
	}
	for _, h := range strings.Split(strings.TrimSuffix(want, "\n"), ",") {
		if !regexp.MustCompile(`(^|\n)  (.*  )?` + regexp.QuoteMeta(h) + `(  |\n)`).MatchString(text.String()) {
			t.Errorf("the text table lacks the CSV's header %q:\n%s", h, text.String())
		}
	}
	for _, old := range []string{"dispatch_us", "margin_pct", "bus_GB/s", "energy_uj"} {
		if strings.Contains(text.String(), old) {
			t.Errorf("the text table still heads %q:\n%s", old, text.String())
		}
	}
}

// bothCSVForms writes r's first table as the one-file CSV (WriteCSV) and as
// the per-table files (CSVFiles), keyed by the writer's name, so a test
// checks a header or row rule in both.
func bothCSVForms(t *testing.T, r *Result) map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	files, err := CSVFiles("out.csv", r)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"WriteCSV": b.String(), "CSVFiles": string(files[0].Data)}
}

// An output with no value (a crossover only perturbed runs have, NaN) is
// null in the JSON form; before, WriteJSON failed on it ("unsupported
// value: NaN"), so `sensitivity --json` exited 1 whenever a crossover
// appeared.
func TestJSONHoldsOutputsWithoutValue(t *testing.T) {
	var b bytes.Buffer
	r := &Result{Experiment: "x", Outputs: []Output{{Name: "c", Value: math.NaN(), Unit: "nodes", Crossover: true}, {Name: "t", Value: 1.5, Unit: "us"}}}
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Outputs []map[string]any `json:"outputs"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Outputs) != 2 || got.Outputs[0]["value"] != nil || got.Outputs[0]["unit"] != "nodes" || got.Outputs[1]["value"] != 1.5 {
		t.Errorf("outputs %v: want c with value null and unit nodes, t with 1.5", got.Outputs)
	}
	if _, ok := got.Outputs[0]["value"]; !ok {
		t.Errorf("output c has no value key: %v", got.Outputs[0])
	}
}
