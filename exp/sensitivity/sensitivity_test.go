package sensitivity

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// small is a reduced allreduce sweep: 2 and 4 nodes, 64 KiB, CPU and
// GPU-TN.
func small(t testing.TB) exp.Config {
	t.Helper()
	cfg, err := exp.DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes = []int{2, 4}
	cfg.Allreduce.Size = 64 * unit.KiB
	cfg.Allreduce.Strategies = []string{"CPU", "GPUTN"}
	return cfg
}

func output(t *testing.T, r *report.Result, name string) report.Output {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no output %q", name)
	return report.Output{}
}

// rows returns the "outputs" table rows of output name as knob → the two
// change cells.
func rows(r *report.Result, name string) map[string][2]string {
	out := map[string][2]string{}
	for _, row := range r.Tables[1].Rows {
		if row[0] == name {
			out[row[2].(string)] = [2]string{fmt.Sprint(row[3]), fmt.Sprint(row[4])}
		}
	}
	return out
}

func TestKnobsMoveTheOutputsTheyDrive(t *testing.T) {
	r, err := Run(small(t), "allreduce", Options{Knobs: []string{"cpu.l1d_misses", "gpu.launch", "link.latency"}, Factor: 2}, exp.Env{})
	if err != nil {
		t.Fatal(err)
	}
	// Fewer misses in flight slow the CPU's reductions: its time rises;
	// the GPU's launch overhead does not touch the CPU strategy.
	cpu := rows(r, "CPU time at 2 nodes")
	if c, ok := cpu["cpu.l1d_misses"]; !ok || !strings.HasPrefix(c[0], "+") || !strings.HasPrefix(c[1], "-") {
		t.Errorf("CPU time at 2 nodes vs cpu.l1d_misses: %v, want a rise at ÷2 and a fall at ×2", cpu)
	}
	if _, ok := cpu["gpu.launch"]; ok {
		t.Errorf("gpu.launch listed as moving the CPU strategy's time: %v", cpu)
	}
	gputn := rows(r, "GPUTN time at 2 nodes")
	if c, ok := gputn["gpu.launch"]; !ok || !strings.HasPrefix(c[1], "+") {
		t.Errorf("GPUTN time vs gpu.launch: %v, want a rise at ×2", gputn)
	}
	if o := output(t, r, "GPUTN speedup vs CPU at 4 nodes"); r.Outputs[0] != o || o.Value <= 0 {
		t.Errorf("headline %+v, want GPUTN's speedup at 4 nodes first", r.Outputs[0])
	}
	// link.latency is 0: reported, not run.
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "link.latency ÷ 2 (0s → not perturbed): is 0") {
		t.Errorf("notes do not say link.latency was not perturbed:\n%s", notes)
	}
	// Both perturbed knobs move the headline (GPU-TN's speedup over CPU):
	// the CPU's misses in flight through the baseline, the launch through
	// GPU-TN's own time; the widest bar first.
	if r.Plot == nil || len(r.Plot.Tornado) != 2 {
		t.Fatalf("tornado %+v: want bars for cpu.l1d_misses and gpu.launch", r.Plot)
	}
	labels := []string{r.Plot.Tornado[0].Label, r.Plot.Tornado[1].Label}
	// A bar's size is its larger swing, the measure the tornado sorts by.
	width := func(b int) float64 {
		return math.Max(math.Abs(r.Plot.Tornado[b].High), math.Abs(r.Plot.Tornado[b].Low))
	}
	if !slices.Contains(labels, "cpu.l1d_misses") || !slices.Contains(labels, "gpu.launch") || width(0) < width(1) {
		t.Errorf("tornado %+v: want cpu.l1d_misses and gpu.launch, widest first", r.Plot.Tornado)
	}
}

// The CSV forms of the tables load as numbers where they hold numbers: a
// knob's values (one knob a row, of any kind) beside their units, an
// output's base and perturbed values beside their units, every change in
// percent; a run not made (link.latency is 0) an empty cell, and what has
// no number said in the note column. Before, the changes were text
// ("+12.34%", "not run").
func TestTablesLoadAsNumbers(t *testing.T) {
	r, err := Run(small(t), "allreduce", Options{Knobs: []string{"cpu.l1d_misses", "gpu.launch", "link.latency"}, Factor: 2}, exp.Env{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := report.CSVFiles("s.csv", r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"knobs":   {"knob", "value", "value unit", "value ÷2", "value ÷2 unit", "value ×2", "value ×2 unit", "largest change [%]", "of output", "outputs moved ≥ 1%"},
		"outputs": {"output", "base", "base unit", "knob", "change at ÷2 [%]", "change at ×2 [%]", "note", "at ÷2", "at ÷2 unit", "at ×2", "at ×2 unit"},
	}
	text := map[string]bool{"knob": true, "output": true, "of output": true, "note": true}
	for _, f := range files[:len(files)-1] {
		recs, err := csv.NewReader(bytes.NewReader(f.Data)).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("%s: %v, %d records", f.Path, err, len(recs))
		}
		if cols := want[f.Table]; !slices.Equal(recs[0], cols) {
			t.Errorf("%s: header %q, want %q", f.Path, recs[0], cols)
		}
		numbers := 0
		for j, name := range recs[0] {
			if text[name] || strings.HasSuffix(name, " unit") {
				continue
			}
			for _, rec := range recs[1:] {
				if _, err := strconv.ParseFloat(rec[j], 64); err != nil && rec[j] != "" {
					t.Errorf("%s: column %q holds %q, not a number", f.Path, name, rec[j])
				} else if err == nil {
					numbers++
				}
			}
		}
		if numbers == 0 {
			t.Errorf("%s: no number in any numeric column", f.Path)
		}
	}
}

// A crossover's change reads as a shift in its unit with the percentage;
// one that vanishes or appears, or a side not run, has no number in the
// change columns and says so in the note.
func TestCrossoverOutputsVanishAndAppear(t *testing.T) {
	base := report.Output{Name: "x", Value: 5, Unit: "nodes", Crossover: true}
	for _, c := range []struct {
		v          float64
		ran        bool
		text, flag string
	}{{math.NaN(), true, "-", "vanishes"}, {6.5, true, "+1.5 nodes (+30.0%)", ""}, {5, false, "-", "not run"}} {
		if got := fmt.Sprint(changeCell(base, c.v, c.ran)); got != c.text {
			t.Errorf("changeCell(%v) = %q, want %q", c.v, got, c.text)
		}
		if got := flag(base, c.v, c.ran); got != c.flag {
			t.Errorf("flag(%v) = %q, want %q", c.v, got, c.flag)
		}
	}
	if q, ok := changeCell(base, 6.5, true).(report.Quantity); !ok || q.Value != 30 || q.Unit != "%" {
		t.Errorf("changeCell(6.5) = %#v, want 30 %%", changeCell(base, 6.5, true))
	}
	none := report.Output{Name: "x", Value: math.NaN(), Unit: "nodes", Crossover: true}
	if got := note(none, effect{low: 3, lowRun: true, high: math.NaN()}, 2); got != "÷2 appears; ×2 not run" {
		t.Errorf("note(appearing, not run) = %q", got)
	}
	if got := fmt.Sprint(valueCell(none, 3, true)); got != "3 nodes" {
		t.Errorf("valueCell(appearing) = %q, want the position it appears at", got)
	}
}

func TestCheckRejectsBadOptions(t *testing.T) {
	cfg := small(t)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Factor: 1}, "--factor = 1: must be a finite number > 1"},
		{Options{Factor: 0.5}, "--factor = 0.5"},
		{Options{Factor: 2, Knobs: []string{"cpu.nope"}}, `unknown parameter "cpu.nope"`},
		{Options{Factor: 2, Knobs: []string{"cpu.compute_model"}}, "cpu.compute_model is a string"},
		{Options{Factor: 2, Knobs: []string{"nosuch.*"}}, "nosuch.* matches no numeric DEFAULT knob"},
	} {
		err := Check(cfg, "allreduce", c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("Check(%+v) = %v, want one line containing %q", c.o, err, c.want)
		}
	}
}

func TestSectionWildcard(t *testing.T) {
	ks := knobs(small(t), "allreduce", []string{"cpu.*", "gpu.launch"})
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"cpu.ipc", "cpu.l1d_misses", "cpu.time_slice", "gpu.launch"} {
		if !strings.Contains(got, want) {
			t.Errorf("cpu.*,gpu.launch chose %s: missing %s", got, want)
		}
	}
	if strings.Contains(got, "cpu.cores") || strings.Contains(got, "cpu.compute_model") {
		t.Errorf("cpu.* chose a DOC or non-numeric knob: %s", got)
	}
}

func TestDefaultKnobsLeaveOtherExperimentsAlone(t *testing.T) {
	ks := knobs(small(t), "allreduce", nil)
	if len(ks) < 30 {
		t.Fatalf("%d knobs, want every numeric DEFAULT knob", len(ks))
	}
	for _, k := range ks {
		if strings.HasPrefix(k.Name, "latency.") || k.Src != "DEFAULT" {
			t.Errorf("knob %s (%s) studied for allreduce", k.Name, k.Src)
		}
	}
}

// BenchmarkDefaultAllreduceStudy runs the study the CLI runs by default
// (every DEFAULT knob, ×/÷2, allreduce over 2..64 nodes in powers of two)
// and reports its wall time; it takes minutes (docs/sensitivity.md).
func BenchmarkDefaultAllreduceStudy(b *testing.B) {
	cfg := small(b)
	cfg.Allreduce.Nodes = []int{2, 4, 8, 16, 32, 64}
	cfg.Allreduce.Size = 8 * unit.MiB
	cfg.Allreduce.Strategies = []string{"CPU", "HDN", "GDS", "GPUTN"}
	for b.Loop() {
		r, err := Run(cfg, "allreduce", Options{Factor: 2}, exp.Env{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(r.Tables[0].Rows)), "knobs")
	}
}

// FuzzScaled: any printed value of a numeric type either scales to a value
// that parses back as the same type, or is refused with a reason; never a
// panic.
func FuzzScaled(f *testing.F) {
	for _, s := range [][2]string{{"duration", "1.5us"}, {"size", "2KiB"}, {"rate", "100Gbps"}, {"freq", "1.5GHz"},
		{"int", "4"}, {"float", "2"}, {"int", "0"}, {"int", "1"}, {"duration", "bad"}} {
		f.Add(s[0], s[1], 2.0)
	}
	f.Fuzz(func(t *testing.T, typ, value string, factor float64) {
		p := params.Info{Name: "x.y", Type: typ, Value: value}
		v, err := scaled(p, factor)
		if err != nil {
			return
		}
		if _, _, err := parseNumber(params.Info{Type: typ, Value: v}); err != nil {
			t.Fatalf("scaled %s %q by %v to %q, which does not parse back: %v", typ, value, factor, v, err)
		}
	})
}

// TestScreeningDropsExactlyTheUnusedSections: the allreduce on CPU and
// GPU-TN never reads the device-shmem library's knobs but does read the
// host CPU's. Screening must drop shmem.* with a note and keep cpu.*, and
// the dropped knobs must be ones that, studied one by one, move nothing.
func TestScreeningDropsExactlyTheUnusedSections(t *testing.T) {
	cfg := small(t)
	cfg.Allreduce.Nodes = []int{2}
	o := Options{Knobs: []string{"shmem.*", "cpu.*"}, Factor: 2}
	r, err := Run(cfg, "allreduce", o, exp.Env{})
	if err != nil {
		t.Fatal(err)
	}
	studied := map[string]bool{}
	for _, row := range r.Tables[0].Rows {
		studied[row[0].(string)] = true
	}
	if !studied["cpu.l1d_misses"] || studied["shmem.quiet_rounds"] || len(studied) == 0 {
		t.Errorf("studied knobs %v: want cpu.* kept and shmem.* screened out", studied)
	}
	if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "section shmem (") || strings.Contains(notes, "section cpu (") {
		t.Errorf("notes do not name exactly the screened section:\n%s", notes)
	}

	o.Knobs, o.NoScreen = []string{"shmem.*"}, true
	full, err := Run(cfg, "allreduce", o, exp.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Tables[0].Rows) < 2 {
		t.Fatalf("--no-screen studied %d shmem knobs", len(full.Tables[0].Rows))
	}
	for _, row := range full.Tables[0].Rows {
		if row[4].(float64) != 0 {
			t.Errorf("screened knob %s moves %v by %v%% when studied alone", row[0], row[5], row[4])
		}
	}
}

// A perturbed run that fails is a note naming the knob, its value and the
// error, and the study goes on with the other knobs; only a failing base
// run fails the study. Here halving nic.xtq_table_size (64 → 32) leaves no
// room for the queue indices XTQ registers on 64 nodes: that run fails
// as it sets up, the doubled one and cpu.l1d_misses' runs go through.
func TestFailedPerturbedRunIsANote(t *testing.T) {
	cfg, err := exp.DefaultConfig("xtq")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes = []int{64}
	cfg.Allreduce.Size = 64 * unit.KiB
	cfg.Allreduce.Strategies = []string{"CPU", "XTQ"}
	r, err := Run(cfg, "allreduce", Options{Knobs: []string{"nic.xtq_table_size", "cpu.l1d_misses"}, Factor: 2}, exp.Env{})
	if err != nil {
		t.Fatalf("the study failed on a perturbed run's failure: %v", err)
	}
	if moved := rows(r, "CPU time at 64 nodes"); len(moved["cpu.l1d_misses"][0]) == 0 {
		t.Errorf("cpu.l1d_misses not studied: %v", moved)
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "run FAILED, left out of the tables: nic.xtq_table_size ÷ 2 (= 32): ") {
		t.Errorf("no note names the failed run (nic.xtq_table_size ÷ 2):\n%s", notes)
	}
	if strings.Contains(notes, "nic.xtq_table_size × 2 (= 128): ") {
		t.Errorf("the doubled table, which fits, is reported as failed:\n%s", notes)
	}
}

// TestUnknownOutputFailsAfterTheBase: an --output the experiment does not
// have is found once the base configuration has run, before the perturbed
// runs (it was found at the end, after every one of them: minutes of work
// for a typo), with or without screening.
func TestUnknownOutputFailsAfterTheBase(t *testing.T) {
	for _, noScreen := range []bool{true, false} {
		most := 0
		env := exp.Env{Progress: func(done, total int) { most = max(most, done) }}
		_, err := Run(small(t), "allreduce", Options{Knobs: []string{"gpu.launch", "link.latency", "cpu.l1d_misses"}, Factor: 2, Output: "nope", NoScreen: noScreen}, env)
		if err == nil || !strings.Contains(err.Error(), `--output "nope": the experiment has no such output`) {
			t.Fatalf("no-screen %v: error %v, want the unknown output named", noScreen, err)
		}
		if !errors.Is(err, sim.ErrConfig) {
			t.Errorf("no-screen %v: error %v is not bad input (sim.ErrConfig): the command exited 1", noScreen, err)
		}
		if noScreen && most > 1 {
			t.Errorf("no-screen: %d runs done before the unknown output was reported, want the base alone", most)
		}
		if !noScreen && most > 4 {
			t.Errorf("screened: %d runs done before the unknown output was reported, want the base and the screening runs (at most 4)", most)
		}
	}
}

// TestRoundedCopyIsOneOutput: a table's rounded copy of a duration (X_us
// beside X, for the text report) is the same quantity, so it is not an
// output of its own: where the rounding changed the value both were
// outputs (latency's end_to_end and end_to_end_us: 6 outputs for 3, every
// knob's "outputs moved" counted twice, and a largest change taken on the
// rounded copy).
func TestRoundedCopyIsOneOutput(t *testing.T) {
	r := &report.Result{Tables: []report.Table{{Name: "end-to-end", Columns: []string{"strategy", "end_to_end", "end_to_end_us", "events"},
		Rows: [][]any{{"HDN", 4719123 * sim.Picosecond, 4.719, 120}, {"GPUTN", 2855648 * sim.Picosecond, 2.856, 90}}}}}
	var names []string
	for _, o := range outputs(r) {
		names = append(names, o.Name)
	}
	want := []string{"end-to-end: end_to_end at strategy = HDN", "end-to-end: events at strategy = HDN",
		"end-to-end: end_to_end at strategy = GPUTN", "end-to-end: events at strategy = GPUTN"}
	if !slices.Equal(names, want) {
		t.Fatalf("outputs %q, want %q", names, want)
	}
}
