package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

type rec struct {
	track, name string
	start, end  sim.Time
}

var spans = []rec{
	{"GPUTN n=4/node[0].gpu.wg[3]", "compute", 1500 * sim.Nanosecond, 2 * sim.Microsecond},
	{"GPUTN n=4/node[0].gpu.wg[3]", "kernel", 0, 5 * sim.Microsecond},
	{"GPUTN n=4/node[1].host", "post \"put\"", 250, 1250},
	{"CPU n=2/node[0].host", "reduce", 1, 3},
	{"loose", "tick", 0, 0},
	{"GPUTN n=4/node[0].gpu.wg[3]", "compute", 1500 * sim.Nanosecond, 2 * sim.Microsecond},
}

func encode(t *testing.T, order []int) []byte {
	t.Helper()
	w := New()
	for _, i := range order {
		s := spans[i]
		w.Span(s.track, s.name, s.start, s.end)
	}
	var b bytes.Buffer
	if err := w.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type traceFile struct {
	DisplayTimeUnit string `json:"displayTimeUnit"`
	TraceEvents     []struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func TestEncode(t *testing.T) {
	out := encode(t, []int{0, 1, 2, 3, 4, 5})
	var f traceFile
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	procs := map[int]string{}
	threads := map[[2]int]string{}
	type x struct {
		proc, thread, name string
		ts, dur            float64
	}
	var xs []x
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.Pid] = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			threads[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
		case e.Ph == "X":
			xs = append(xs, x{procs[e.Pid], threads[[2]int{e.Pid, e.Tid}], e.Name, e.Ts, e.Dur})
		}
	}
	wantProcs := map[int]string{1: "CPU n=2", 2: "GPUTN n=4", 3: "sim"}
	for pid, name := range wantProcs {
		if procs[pid] != name {
			t.Errorf("pid %d named %q; want %q", pid, procs[pid], name)
		}
	}
	if len(threads) != 4 {
		t.Errorf("got %d threads; want 4: %v", len(threads), threads)
	}
	want := []x{
		{"CPU n=2", "node[0].host", "reduce", 0.000001, 0.000002},
		{"GPUTN n=4", "node[0].gpu.wg[3]", "kernel", 0, 5},
		{"GPUTN n=4", "node[0].gpu.wg[3]", "compute", 1.5, 0.5},
		{"GPUTN n=4", "node[0].gpu.wg[3]", "compute", 1.5, 0.5},
		{"GPUTN n=4", "node[1].host", "post \"put\"", 0.00025, 0.001},
		{"sim", "loose", "tick", 0, 0},
	}
	if len(xs) != len(want) {
		t.Fatalf("got %d X events; want %d: %+v", len(xs), len(want), xs)
	}
	for i := range want {
		if xs[i] != want[i] {
			t.Errorf("event %d = %+v; want %+v", i, xs[i], want[i])
		}
	}
}

func TestDeterministicOrder(t *testing.T) {
	base := encode(t, []int{0, 1, 2, 3, 4, 5})
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		order := r.Perm(len(spans))
		if got := encode(t, order); !bytes.Equal(got, base) {
			t.Fatalf("order %v changes the output:\n%s\nvs\n%s", order, got, base)
		}
	}
}

func TestConcurrentSpans(t *testing.T) {
	w := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				w.Span("run/agent", "s", sim.Time(g*1000+i), sim.Time(g*1000+i+1))
			}
		})
	}
	wg.Wait()
	if w.Len() != 4000 {
		t.Fatalf("Len = %d; want 4000", w.Len())
	}
	var b bytes.Buffer
	if err := w.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var f traceFile
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	var last float64 = -1
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			if e.Ts <= last {
				t.Fatalf("events out of order at ts %v", e.Ts)
			}
			last = e.Ts
		}
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		in   sim.Time
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {1500 * sim.Nanosecond, "1.5"}, {3 * sim.Second, "3000000"},
		{-250, "-0.00025"}, {123456789, "123.456789"},
	}
	for _, tt := range tests {
		if got := micros(tt.in); got != tt.want {
			t.Errorf("micros(%d) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := New().Encode(&b); err != nil {
		t.Fatal(err)
	}
	var f traceFile
	if err := json.Unmarshal(b.Bytes(), &f); err != nil || len(f.TraceEvents) != 0 {
		t.Fatalf("empty trace = %s (%v)", b.Bytes(), err)
	}
}

// EncodeWith adds the run's provenance as the object's otherData, quoted
// as JSON strings; the events are unchanged.
func TestEncodeWithOtherData(t *testing.T) {
	w := New()
	w.Span("HDN/node[0].host", "post", 0, 1000)
	var plain, with bytes.Buffer
	if err := w.Encode(&plain); err != nil {
		t.Fatal(err)
	}
	if err := w.EncodeWith(&with, [][2]string{{"command", `gpunetsim run "x"`}, {"commit", "abc"}}); err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
		OtherData   map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(with.Bytes(), &f); err != nil {
		t.Fatalf("%s: %v", with.Bytes(), err)
	}
	if f.OtherData["command"] != `gpunetsim run "x"` || f.OtherData["commit"] != "abc" {
		t.Errorf("otherData %v", f.OtherData)
	}
	var p traceFile
	if err := json.Unmarshal(plain.Bytes(), &p); err != nil || len(p.TraceEvents) != len(f.TraceEvents) {
		t.Errorf("events: %d with otherData, %d without (%v)", len(f.TraceEvents), len(p.TraceEvents), err)
	}
}

func BenchmarkSpan(b *testing.B) {
	w := New()
	tracks := []string{"GPUTN n=64/node[0].gpu.wg[0]", "GPUTN n=64/node[1].host", "GPUTN n=64/node[2].nic"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.Span(tracks[i%len(tracks)], "compute", sim.Time(i), sim.Time(i+10))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

func TestNatural(t *testing.T) {
	sorted := []string{"", "CPU n=2", "CPU n=3", "CPU n=16", "GPUTN n=2", "GPUTN n=10", "node[0].gpu.wg[2]", "node[0].gpu.wg[10]",
		"node[0].host", "node[01]", "node[1]", "node[2]", "node[10]", "x"}
	for i := range sorted {
		for j := range sorted {
			if got, want := Natural(sorted[i], sorted[j]), cmp.Compare(i, j); got != want {
				t.Errorf("Natural(%q, %q) = %d; want %d", sorted[i], sorted[j], got, want)
			}
		}
	}
}

// TestLanesNest checks that random spans, overlapping at will, come out as
// properly nested events on every thread, none lost.
func TestLanesNest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	w := New()
	const n = 2000
	for range n {
		start := sim.Time(r.IntN(1000))
		w.Span("run/nic", "x", start, start+sim.Time(r.IntN(50)))
	}
	var b bytes.Buffer
	if err := w.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var f traceFile
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	open := map[int][]float64{}
	count := 0
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			names[e.Tid] = e.Args["name"].(string)
		}
		if e.Ph != "X" {
			continue
		}
		count++
		st := open[e.Tid]
		for len(st) > 0 && st[len(st)-1] <= e.Ts+1e-9 {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && e.Ts+e.Dur > st[len(st)-1]+1e-9 {
			t.Fatalf("thread %s: event [%v, %v] overlaps an enclosing event ending at %v", names[e.Tid], e.Ts, e.Ts+e.Dur, st[len(st)-1])
		}
		open[e.Tid] = append(st, e.Ts+e.Dur)
	}
	if count != n {
		t.Fatalf("%d events; want %d", count, n)
	}
	if len(names) < 2 || names[1] != "nic" || names[2] != "nic #2" {
		t.Fatalf("lanes named %v", names)
	}
}

func TestOverlapGetsSecondLane(t *testing.T) {
	w := New()
	w.Span("r/nic", "a", 0, 10)
	w.Span("r/nic", "b", 5, 15)  // overlaps a: second lane
	w.Span("r/nic", "c", 2, 4)   // inside a: first lane
	w.Span("r/nic", "d", 10, 12) // after a: first lane
	var b bytes.Buffer
	if err := w.Encode(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"args":{"name":"nic"}`, `"args":{"name":"nic #2"}`,
		`{"name":"a","ph":"X","pid":1,"tid":1,`, `{"name":"c","ph":"X","pid":1,"tid":1,`,
		`{"name":"d","ph":"X","pid":1,"tid":1,`, `{"name":"b","ph":"X","pid":1,"tid":2,`,
	} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("trace lacks %s:\n%s", want, b.Bytes())
		}
	}
}
