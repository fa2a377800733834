package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

const testVersion = "test-version"

// quickStudy is the allreduce on 2 and 3 nodes, 96KiB, over two link
// bandwidths: 2 × 2 × 4 = 16 points.
func quickStudy(t *testing.T) Study {
	t.Helper()
	e, err := exp.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	sw, err := params.ParseSweep("link.bandwidth=50Gbps..100Gbps*2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Single(e, params.Options{Sets: []string{"allreduce.nodes=2,3", "allreduce.size=96KiB", "allreduce.strategies=CPU,HDN,GDS,GPUTN"}}, []params.Sweep{sw})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func expand(t *testing.T, s Study) *Plan {
	t.Helper()
	p, err := Expand(s, testVersion)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// encode renders results as the CLI's CSV and JSON files would hold them.
func encode(t *testing.T, rs []*report.Result) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rs {
		if err := report.WriteCSV(&b, r); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func openCache(t *testing.T, dir string) *Cache {
	t.Helper()
	c, err := OpenCache(dir, testVersion)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// changed returns a different value of the parameter's type.
func changed(t *testing.T, in params.Info) string {
	t.Helper()
	switch in.Type {
	case "duration":
		d, err := sim.ParseDuration(in.Value)
		if err != nil {
			t.Fatal(err)
		}
		return (d + 1).String()
	case "size":
		b, err := unit.ParseBytes(in.Value)
		if err != nil {
			t.Fatal(err)
		}
		return (b + 1).String()
	case "rate":
		r, err := unit.ParseRate(in.Value)
		if err != nil {
			t.Fatal(err)
		}
		return (r * 1.0000001).String()
	case "freq":
		f, err := unit.ParseFreq(in.Value)
		if err != nil {
			t.Fatal(err)
		}
		return (f * 1.0000001).String()
	case "int", "uint":
		n, err := strconv.ParseInt(in.Value, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(n+1, 10)
	case "float":
		f, err := strconv.ParseFloat(in.Value, 64)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatFloat(f*1.0000001+1e-9, 'g', -1, 64)
	case "bool":
		return strconv.FormatBool(in.Value != "true")
	case "string", "[]string":
		return in.Value + "X"
	case "[]int":
		return in.Value + ",99"
	}
	t.Fatalf("%s: no change for type %s", in.Name, in.Type)
	return ""
}

// Every parameter, the seed included, changes a point's key; run.parallel
// (which cannot change a result) and the program version behave as
// documented.
func TestKeyCoversEveryParameter(t *testing.T) {
	base, err := exp.DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	key := func(cfg exp.Config, version string) string {
		return Key(version, "allreduce", exp.Point{Label: "p", Config: cfg})
	}
	k0 := key(base, testVersion)
	for _, in := range params.List(base) {
		cfg := base
		cfg.Allreduce.Nodes = append([]int(nil), base.Allreduce.Nodes...)
		if err := params.Set(&cfg, in.Name, changed(t, in)); err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		got := key(cfg, testVersion)
		if keyExcluded(in.Name) {
			if got != k0 {
				t.Errorf("%s changed the key", in.Name)
			}
			continue
		}
		if got == k0 {
			t.Errorf("%s: changing it left the key unchanged", in.Name)
		}
	}
	if key(base, "other-version") == k0 {
		t.Error("the program version does not change the key")
	}
	if Key(testVersion, "latency", exp.Point{Label: "p", Config: base}) == k0 {
		t.Error("the experiment does not change the key")
	}
}

// A study cancelled part way, then run again, simulates only the points it
// had not finished and writes exactly what an uncached run writes.
func TestInterruptedStudyResumes(t *testing.T) {
	p := expand(t, quickStudy(t))
	if len(p.Tasks) != 16 {
		t.Fatalf("%d tasks, want 16", len(p.Tasks))
	}
	fresh, err := Execute(context.Background(), p, Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := encode(t, fresh.Results)

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Execute(ctx, p, Options{Cache: openCache(t, dir), Parallel: 2, Progress: func(pr Progress) {
		if pr.Done == 5 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	stored := countEntries(t, dir)
	if stored < 5 || stored >= 16 {
		t.Fatalf("%d entries after the interruption, want 5..15", stored)
	}
	again, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if again.Progress.Cached != stored || again.Progress.Done != 16 {
		t.Fatalf("resumed run: %+v, want %d cached of 16", again.Progress, stored)
	}
	if got := encode(t, again.Results); got != want {
		t.Fatal("the resumed study's output differs from an uncached run's")
	}
	full, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), CacheOnly: true})
	if err != nil || full.Progress.Cached != 16 {
		t.Fatalf("collect: %+v, %v", full.Progress, err)
	}
	if encode(t, full.Results) != want {
		t.Fatal("the collected output differs from an uncached run's")
	}
	// --fresh simulates everything again.
	f, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), Fresh: true, Parallel: 2})
	if err != nil || f.Progress.Cached != 0 {
		t.Fatalf("fresh: %+v, %v", f.Progress, err)
	}
}

func countEntries(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two studies writing every point into one cache at once both succeed,
// agree, and leave a cache that a third reads whole.
func TestConcurrentWritersShareACache(t *testing.T) {
	p := expand(t, quickStudy(t))
	dir := t.TempDir()
	outs := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), Fresh: true, Parallel: 1})
			errs[i] = err
			if err == nil {
				outs[i] = encode(t, o.Results)
			}
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if outs[0] != outs[1] {
		t.Fatal("concurrent runs disagree")
	}
	c, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), CacheOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if encode(t, c.Results) != outs[0] {
		t.Fatal("the shared cache gives a different report")
	}
	if n := countEntries(t, dir); n != 16 {
		t.Fatalf("%d entries, want 16", n)
	}
}

// Slices of a study cover every point once, and collect assembles them.
func TestSlicesThenCollect(t *testing.T) {
	p := expand(t, quickStudy(t))
	dir := t.TempDir()
	total := 0
	for i := range 3 {
		o, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), Slice: &Slice{i, 3}, Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		if o.Results != nil || o.Progress.Cached != 0 {
			t.Fatalf("slice %d: %+v", i, o)
		}
		total += o.Progress.Done
	}
	if total != 16 {
		t.Fatalf("slices ran %d points, want 16", total)
	}
	if _, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir), CacheOnly: true}); err != nil {
		t.Fatal(err)
	}
}

func TestCollectNamesMissingPoints(t *testing.T) {
	p := expand(t, quickStudy(t))
	_, err := Execute(context.Background(), p, Options{Cache: openCache(t, t.TempDir()), CacheOnly: true})
	if err == nil || !strings.Contains(err.Error(), "16 of 16 points are not in the cache") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenCacheRejectsUnusableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCache(filepath.Join(f, "cache"), testVersion); !errors.Is(err, ErrCache) {
		t.Fatalf("got %v", err)
	}
}

// Swept values lead every row, and plot series carry them.
func TestSweptValuesInEveryRow(t *testing.T) {
	p := expand(t, quickStudy(t))
	o, err := Execute(context.Background(), p, Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := o.Results[0]
	for _, tb := range r.Tables {
		if tb.Columns[0] != "link.bandwidth" {
			t.Fatalf("table %s columns %v", tb.Name, tb.Columns)
		}
		for i, row := range tb.Rows {
			// A rate with its unit: "50Gbps" in the text, 50 under
			// "link.bandwidth [Gbps]" in the CSV.
			want := report.Quantity{Text: "50Gbps", Value: 50, Unit: "Gbps"}
			if i >= len(tb.Rows)/2 {
				want = report.Quantity{Text: "100Gbps", Value: 100, Unit: "Gbps"}
			}
			if row[0] != want {
				t.Fatalf("table %s row %d: %v, want %v first", tb.Name, i, row, want)
			}
		}
	}
	files, err := report.CSVFiles("out.csv", r)
	if err != nil {
		t.Fatal(err)
	}
	if csv := string(files[0].Data); !strings.HasPrefix(csv, "link.bandwidth [Gbps],") || !strings.Contains(csv, "\n50,") || !strings.Contains(csv, "\n100,") {
		t.Errorf("CSV of a swept rate:\n%s", csv)
	}
	if len(r.Plot.Series) != 8 || !strings.HasSuffix(r.Plot.Series[7].Name, "link.bandwidth=100Gbps") {
		t.Fatalf("series %+v", r.Plot.Series)
	}
	// The faster link speeds every strategy up: the sweep really changed the runs.
	long := r.Tables[1]
	if long.Rows[0][3].(sim.Time) <= long.Rows[len(long.Rows)/2][3].(sim.Time) {
		t.Fatalf("50Gbps row %v not slower than 100Gbps row %v", long.Rows[0], long.Rows[len(long.Rows)/2])
	}
}

func TestLoadStudyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.toml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`name = "bw"
set = ["allreduce.size=96KiB"]
sweep = ["link.bandwidth=50Gbps,100Gbps"]
[[experiment]]
name = "allreduce"
set = ["allreduce.nodes=2,3"]
sweep = ["gpu.launch=1us..2us+1us"]
[[experiment]]
name = "latency"
[[experiment]]
name = "strategies"
`)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := expand(t, s)
	if len(p.Runs) != 4+2+2 {
		t.Fatalf("%d runs", len(p.Runs))
	}
	if len(s.Entries[0].Sweeps) != 2 || s.Entries[0].Sweeps[1].Name != "gpu.launch" {
		t.Fatalf("sweeps %+v", s.Entries[0].Sweeps)
	}
	for spec, want := range map[string]string{
		"[[experiment]]\nname = \"nope\"":                                       "unknown experiment",
		"[[experiment]]\nname = \"latency\"\nbogus = 1":                         "unknown field",
		"sweep = [\"link.bandwith=1Gbps\"]\n[[experiment]]\nname = \"latency\"": "unknown parameter",
		"name = \"x\"": "no [[experiment]]",
		"sweep = [\"gpu.launch=1us\", \"gpu.launch=2us\"]\n[[experiment]]\nname = \"latency\"": "twice",
	} {
		write(spec)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", spec, err, want)
		}
	}
}

func FuzzParseSlice(f *testing.F) {
	f.Add("3/8")
	f.Add("0/1")
	f.Fuzz(func(t *testing.T, s string) {
		sl, err := ParseSlice(s)
		if err != nil {
			return
		}
		if sl.Count < 1 || sl.Index < 0 || sl.Index >= sl.Count {
			t.Fatalf("%q gave %+v", s, sl)
		}
		if back, err := ParseSlice(strconv.Itoa(sl.Index) + "/" + strconv.Itoa(sl.Count)); err != nil || back != sl {
			t.Fatalf("%q: %+v does not print back", s, sl)
		}
	})
}

// A writer killed between writing an entry and renaming it leaves a
// temporary file; the next OpenCache removes those of dead processes of
// this host and old ones of any host, and keeps a live writer's.
func TestOpenCacheRemovesOrphanedTemporaries(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "ab")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to get a dead pid:", err)
	}
	host, _ := os.Hostname()
	host = strings.NewReplacer("-", "_", "/", "_").Replace(host)
	files := map[string]bool{ // name → kept
		fmt.Sprintf(".tmp-%s-%d-1", host, dead.Process.Pid): false,
		fmt.Sprintf(".tmp-%s-%d-2", host, os.Getpid()):      true,
		".tmp-otherhost-1-3":                                true,
		".tmp-otherhost-1-4":                                false, // made old below
		"ab00.json":                                         true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(sub, name), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(sub, ".tmp-otherhost-1-4"), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCache(dir, "v"); err != nil {
		t.Fatal(err)
	}
	for name, kept := range files {
		_, err := os.Stat(filepath.Join(sub, name))
		if (err == nil) != kept {
			t.Errorf("%s: present %v, want %v", name, err == nil, kept)
		}
	}
}

// Labels become safe, unique file names: no separator, no dot, no control
// character; the first entry keeps a label, a later one takes the
// first label-N no entry asked for, compared without case.
func TestCheckSanitisesAndDeduplicatesLabels(t *testing.T) {
	e, err := exp.Lookup("latency")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		asked, want []string
	}{
		{[]string{"", ""}, []string{"latency", "latency-2"}},
		{[]string{"a", "a", "a-2", "A"}, []string{"a", "a-3", "a-2", "A-4"}},
		{[]string{"../x", "/etc/passwd", "..", ".", "a\x00b\nc", "a b\tc", "v1.2"}, []string{"___x", "_etc_passwd", "__", "_", "a_b_c", "a_b_c-2", "v1_2"}},
		{[]string{"a", "a.meta"}, []string{"a", "a_meta"}},
		{[]string{"x/y", "x_y"}, []string{"x_y", "x_y-2"}},
		{[]string{strings.Repeat("é", 100)}, []string{strings.Repeat("é", maxNameBytes/2)}},
	} {
		s := Study{Name: "../n"}
		for _, l := range tc.asked {
			s.Entries = append(s.Entries, Entry{Label: l, Experiment: e})
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, en := range s.Entries {
			got = append(got, en.Label)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("labels %q became %q, want %q", tc.asked, got, tc.want)
		}
		if s.Name != "___n" {
			t.Errorf("study name %q, want ___n", s.Name)
		}
	}
}
