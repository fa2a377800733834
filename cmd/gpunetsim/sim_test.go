package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
)

// fake is an experiment whose result depends only on its configuration.
func fake(calls *int) exp.Experiment {
	return exp.Experiment{Name: "fake", Summary: "test double", Run: func(cfg exp.Config, env exp.Env) (*report.Result, error) {
		*calls++
		t := report.Table{Name: "times", Columns: []string{"nodes", "time"}}
		var s report.Series
		for i, n := range cfg.Allreduce.Nodes {
			d := sim.Time(cfg.Run.Seed) * sim.Time(n) * sim.Nanosecond
			t.Rows = append(t.Rows, []any{n, d})
			s.X, s.Y = append(s.X, float64(n)), append(s.Y, d.Micros())
			if env.Tracer != nil {
				env.Tracer.Span("FAKE n="+itoa(n)+"/node[0].host", "work", 0, d)
			}
			if env.Progress != nil {
				env.Progress(i+1, len(cfg.Allreduce.Nodes))
			}
		}
		s.Name = "fake"
		return &report.Result{Tables: []report.Table{t}, Plot: &report.Plot{Title: "fake", Series: []report.Series{s}}}, nil
	}}
}

// testRunWith is runWith in a session of its own, which removes what the
// run reserved and did not write, as the command does.
func testRunWith(e exp.Experiment, o runOptions, stdout, stderr *bytes.Buffer) error {
	s := &session{stderr: stderr}
	defer s.discard()
	return runWith(s, e, o, stdout, stderr)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRunWithWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	o := runOptions{
		load: params.Options{Sets: []string{"allreduce.nodes=2,3", "run.seed=5"}},
		csv:  filepath.Join(dir, "out.csv"), json: filepath.Join(dir, "out.json"),
		plot: filepath.Join(dir, "out.svg"), trace: filepath.Join(dir, "trace.json"),
	}
	var stdout, stderr bytes.Buffer
	if err := testRunWith(fake(&calls), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || stderr.Len() != 0 {
		t.Fatalf("calls %d, stderr %q", calls, stderr.String())
	}
	if csv := read(t, o.csv); csv != "nodes,time [us]\n2,0.01\n3,0.015\n" {
		t.Errorf("CSV is not the one table:\n%s", csv)
	}
	meta := read(t, filepath.Join(dir, "out.meta.json"))
	for _, want := range []string{`"experiment": "fake"`, `"seed": 5,`, `{"name":"allreduce.nodes","value":"2,3","src":"DEFAULT"`,
		`{"name":"gpu.launch","value":"1.5us","src":"DOC"`, `"command": "gpunetsim`, `"go_version": "go`} {
		if !strings.Contains(meta, want) {
			t.Errorf("CSV sidecar lacks %q:\n%s", want, meta)
		}
	}
	var res report.Result
	if err := json.Unmarshal([]byte(read(t, o.json)), &res); err != nil || res.Seed != 5 || len(res.Params) < 60 {
		t.Errorf("JSON: %v, seed %d, %d params", err, res.Seed, len(res.Params))
	}
	if !strings.HasPrefix(read(t, o.plot), "<?xml") {
		t.Error("plot is not SVG")
	}
	if tr := read(t, o.trace); !strings.Contains(tr, `"name":"FAKE n=3"`) || !strings.Contains(tr, `"dur":0.015`) {
		t.Errorf("trace lacks the fake spans:\n%s", tr)
	}
	out := stdout.String()
	for _, want := range []string{"experiment fake", "times", "  link      bandwidth=100Gbps", "seed 5", "wrote " + o.csv} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func TestDefaultOptions(t *testing.T) {
	dir := t.TempDir()
	o := defaultOptions(dir)
	if o.experiment != "allreduce" {
		t.Fatalf("default experiment %q", o.experiment)
	}
	calls := 0
	var stdout bytes.Buffer
	if err := testRunWith(fake(&calls), o, &stdout, &stdout); err != nil {
		t.Fatal(err)
	}
	meta := read(t, filepath.Join(dir, "allreduce.meta.json"))
	if !strings.Contains(meta, `{"name":"allreduce.nodes","value":"2,4,8,16,32,64","src":"DEFAULT"`) ||
		!strings.Contains(meta, `{"name":"run.preset","value":"gputn","src":"RUN"`) {
		t.Errorf("default CSV records the wrong sweep:\n%s", meta)
	}
	if !strings.HasPrefix(read(t, filepath.Join(dir, "allreduce.svg")), "<?xml") {
		t.Error("no SVG plot")
	}
	// The list wraps within 120 columns, as every line of the report.
	if want := report.Wrap("wrote ", "  ", filepath.Join(dir, "allreduce.csv")+", "+filepath.Join(dir, "allreduce.meta.json")+", "+filepath.Join(dir, "allreduce.svg")); !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("stdout does not end with %q:\n%s", want, stdout.String())
	}
}

func TestRunWithDeterministic(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		calls := 0
		o := runOptions{load: params.Options{Sets: []string{"allreduce.nodes=2-8/2"}}, csv: filepath.Join(dir, itoa(i)+".csv"), quiet: true}
		var stdout bytes.Buffer
		if err := testRunWith(fake(&calls), o, &stdout, &stdout); err != nil {
			t.Fatal(err)
		}
		if stdout.Len() != 0 {
			t.Fatalf("--quiet printed %q", stdout.String())
		}
		files = append(files, read(t, o.csv))
	}
	if files[0] != files[1] {
		t.Fatal("two runs with one seed wrote different CSV")
	}
}

func TestRunWithRejectsBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		o    runOptions
		has  string
	}{
		{"bad set", runOptions{load: params.Options{Sets: []string{"link.bandwidth=0Gbps"}}, csv: filepath.Join(dir, "a.csv")}, "link.bandwidth"},
		{"missing dir", runOptions{csv: filepath.Join(dir, "nope", "a.csv")}, "does not exist"},
		{"plot extension", runOptions{plot: filepath.Join(dir, "a.jpg"), csv: filepath.Join(dir, "a.csv")}, ".svg, .png or .pdf"},
		{"same file", runOptions{csv: filepath.Join(dir, "a.csv"), json: filepath.Join(dir, "a.csv")}, "same file"},
		{"directory", runOptions{json: dir}, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := testRunWith(fake(&calls), tt.o, &bytes.Buffer{}, &bytes.Buffer{})
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.has) {
				t.Fatalf("error = %v; want bad input containing %q", err, tt.has)
			}
			if calls != 0 {
				t.Fatal("the experiment ran")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("left %v behind", ents)
			}
		})
	}
}

// An output whose directory is a regular file is refused naming that:
// "directory f does not exist" sent the user looking for a missing
// directory where a file stood.
func TestRunWithRejectsAFileAsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := testRunWith(fake(&calls), runOptions{csv: filepath.Join(f, "a.csv")}, &bytes.Buffer{}, &bytes.Buffer{})
	var ue usageError
	if want := f + " is not a directory"; !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v; want bad input containing %q", err, want)
	}
	if calls != 0 {
		t.Fatal("the experiment ran")
	}
}

func TestFailedRunLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	boom := exp.Experiment{Name: "boom", Run: func(exp.Config, exp.Env) (*report.Result, error) {
		return nil, errors.New("deadlock: 3 processes blocked")
	}}
	o := runOptions{csv: filepath.Join(dir, "a.csv"), trace: filepath.Join(dir, "t.json")}
	err := testRunWith(boom, o, &bytes.Buffer{}, &bytes.Buffer{})
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "boom: deadlock") {
		t.Fatalf("error = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v behind", ents)
	}
}

func TestPresetDocs(t *testing.T) {
	for _, name := range cluster.PresetNames() {
		if presetDocs[name] == "" {
			t.Errorf("preset %s has no description in presetDocs", name)
		}
	}
	if len(presetDocs) != len(cluster.PresetNames()) {
		t.Errorf("presetDocs describes presets that do not exist")
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
		has  string
	}{
		{[]string{"presets"}, 0, ""},
		{[]string{"params", "--preset", "compnet"}, 0, ""},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"run"}, 2, "want an experiment name"},
		{[]string{"run", "no-such-experiment"}, 2, `unknown experiment "no-such-experiment"`},
		{[]string{"params", "--preset", "big"}, 2, `unknown preset "big"`},
		{[]string{"params", "--set", "link.bandwidth=fast"}, 2, `--set link.bandwidth=fast: bad rate "fast"`},
		{[]string{"params", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"presets", "extra"}, 2, "want no arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, &stdout, &stderr)
		if code != tt.code {
			t.Errorf("%v: exit %d; want %d (stderr %q)", tt.args, code, tt.code, stderr.String())
		}
		if tt.code != 0 {
			if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.HasPrefix(stderr.String(), "gpunetsim: ") || !strings.Contains(stderr.String(), tt.has) {
				t.Errorf("%v: stderr %q; want one line containing %q", tt.args, stderr.String(), tt.has)
			}
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestListingsWithin120Columns checks that the listings people read in a
// terminal (params on every preset, experiments, presets) keep every
// line within 120 columns, and that each parameter's first line still
// holds its name, type, value (or its first piece) and source, the line
// one greps for.
func TestListingsWithin120Columns(t *testing.T) {
	commands := [][]string{{"experiments"}, {"presets"}, {"--help"}}
	for _, p := range cluster.PresetNames() {
		commands = append(commands, []string{"params", "--preset", p})
	}
	// Every command's help, its flags' descriptions wrapped.
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(slices.Clone(path), sub.Name())
			commands = append(commands, append(slices.Clone(p), "--help"))
			walk(sub, p)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard), nil)
	for _, args := range commands {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		for i, line := range lines {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%v: line %d is %d columns: %q", args, i+1, n, line)
			}
		}
		if args[0] != "params" || len(args) != 3 {
			continue
		}
		cfg, err := params.Load(params.Options{Preset: args[2]})
		if err != nil {
			t.Fatal(err)
		}
		first := map[string]string{}
		for _, line := range lines {
			if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") {
				first[f[0]] = line
			}
		}
		for _, p := range params.List(cfg) {
			if p.Value == "" {
				p.Value = `""`
			}
			f := strings.Fields(first[p.Name])
			value, _, _ := strings.Cut(p.Value, ",")
			if len(f) < 3 || f[1] != p.Type || !strings.HasPrefix(f[2], value) {
				t.Errorf("%v: %s's first line %q lacks its type %s and value %s", args, p.Name, first[p.Name], p.Type, p.Value)
			}
			if len(p.Value) <= paramValueWidth && (len(f) < 4 || f[2] != p.Value || f[3] != p.Src) {
				t.Errorf("%v: %s's first line %q lacks its value %s and source %s", args, p.Name, first[p.Name], p.Value, p.Src)
			}
		}
	}
}
