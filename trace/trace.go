package trace

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Writer buffers spans and encodes them as Chrome trace-event JSON. The zero
// value is ready to use; a Writer must not be copied after first use.
type Writer struct {
	mu     sync.Mutex
	tracks map[string]int32 // track name → index in names
	labels map[string]int32 // span name → index in names
	names  []string
	spans  []span
}

// span is one recorded interval, names interned.
type span struct {
	track, name int32
	start, end  sim.Time
}

// New returns an empty Writer.
func New() *Writer { return &Writer{} }

// Span records that track did name from start to end. A span whose end
// precedes its start is recorded with zero duration.
func (w *Writer) Span(track, name string, start, end sim.Time) {
	if end < start {
		end = start
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tracks == nil {
		w.tracks, w.labels = map[string]int32{}, map[string]int32{}
	}
	w.spans = append(w.spans, span{track: w.intern(w.tracks, track), name: w.intern(w.labels, name), start: start, end: end})
}

func (w *Writer) intern(m map[string]int32, s string) int32 {
	if i, ok := m[s]; ok {
		return i
	}
	i := int32(len(w.names))
	w.names = append(w.names, s)
	m[s] = i
	return i
}

// Len returns the number of spans recorded so far.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.spans)
}

// split returns the process and thread parts of a track name.
func split(track string) (proc, thread string) {
	if p, t, ok := strings.Cut(track, "/"); ok {
		return p, t
	}
	return "sim", track
}

// event is a span with its process and thread numbers resolved.
type event struct {
	pid, tid int
	name     string
	start    sim.Time
	end      sim.Time
}

// thread is one Chrome thread: an agent's lane within a run.
type thread struct {
	proc, agent string
	lane        int
}

// label names a thread: the agent, with " #k" for its k-th lane (k ≥ 2).
func (t thread) label() string {
	if t.lane == 0 {
		return t.agent
	}
	return t.agent + " #" + strconv.Itoa(t.lane+1)
}

// laned is a span placed on a lane of its track.
type laned struct {
	span
	lane int
}

// assignLanes sorts one track's spans by (start, longest first, name) and
// gives each the first lane on which it nests inside or follows the spans
// already there, so every lane is properly nested as Chrome "X" events
// must be. Agents whose spans overlap (a NIC serving several transfers at
// once) get extra lanes.
func (w *Writer) assignLanes(spans []span) []laned {
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), strings.Compare(w.names[a.name], w.names[b.name]))
	})
	var open [][]sim.Time // per lane, the end times of the enclosing spans
	out := make([]laned, len(spans))
	for i, s := range spans {
		lane := -1
		for l := range open {
			st := open[l]
			for len(st) > 0 && st[len(st)-1] <= s.start && !(st[len(st)-1] == s.start && s.end == s.start) {
				st = st[:len(st)-1]
			}
			open[l] = st
			if lane < 0 && (len(st) == 0 || st[len(st)-1] >= s.end) {
				lane = l
			}
		}
		if lane < 0 {
			lane = len(open)
			open = append(open, nil)
		}
		open[lane] = append(open[lane], s.end)
		out[i] = laned{s, lane}
	}
	return out
}

// Encode writes every recorded span as one JSON object
// {"displayTimeUnit":"ns","traceEvents":[...]} to out.
func (w *Writer) Encode(out io.Writer) error { return w.EncodeWith(out, nil) }

// EncodeWith is Encode with other, name and value pairs (a run's
// provenance: version, commit, command line, host), written as the
// object's "otherData", the trace event format's place for data about the
// trace (viewers show it as metadata and ignore it otherwise).
func (w *Writer) EncodeWith(out io.Writer, other [][2]string) error {
	w.mu.Lock()
	defer w.mu.Unlock()

	// Place each track's spans on lanes.
	perTrack := make(map[int32][]span, len(w.tracks))
	for _, s := range w.spans {
		perTrack[s.track] = append(perTrack[s.track], s)
	}
	type placed struct {
		th thread
		laned
	}
	var all []placed
	threadSet := map[thread]bool{}
	procSet := map[string]bool{}
	for track, spans := range perTrack {
		p, a := split(w.names[track])
		procSet[p] = true
		for _, l := range w.assignLanes(spans) {
			th := thread{p, a, l.lane}
			threadSet[th] = true
			all = append(all, placed{th, l})
		}
	}

	// Number processes, then threads within each process, in natural order.
	procs := sortedKeys(procSet)
	pid := make(map[string]int, len(procs))
	for i, p := range procs {
		pid[p] = i + 1
	}
	threads := make([]thread, 0, len(threadSet))
	for t := range threadSet {
		threads = append(threads, t)
	}
	slices.SortFunc(threads, func(a, b thread) int {
		return cmp.Or(cmp.Compare(pid[a.proc], pid[b.proc]), Natural(a.agent, b.agent), cmp.Compare(a.lane, b.lane))
	})
	tid := make(map[thread]int, len(threads))
	for i, t := range threads {
		tid[t] = i + 1
	}

	events := make([]event, len(all))
	for i, p := range all {
		events[i] = event{pid: pid[p.th.proc], tid: tid[p.th], name: w.names[p.name], start: p.start, end: p.end}
	}
	slices.SortFunc(events, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid), cmp.Compare(a.start, b.start),
			cmp.Compare(b.end, a.end), strings.Compare(a.name, b.name))
	})

	bw := bufio.NewWriter(out)
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	first := true
	sep := func() {
		if !first {
			bw.WriteString(",")
		}
		first = false
		bw.WriteString("\n")
	}
	for i, p := range procs {
		sep()
		bw.WriteString(`{"name":"process_name","ph":"M","pid":` + strconv.Itoa(i+1) + `,"tid":0,"args":{"name":` + quote(p) + `}}`)
		sep()
		bw.WriteString(`{"name":"process_sort_index","ph":"M","pid":` + strconv.Itoa(i+1) + `,"tid":0,"args":{"sort_index":` + strconv.Itoa(i+1) + `}}`)
	}
	for i, t := range threads {
		p := strconv.Itoa(pid[t.proc])
		sep()
		bw.WriteString(`{"name":"thread_name","ph":"M","pid":` + p + `,"tid":` + strconv.Itoa(i+1) + `,"args":{"name":` + quote(t.label()) + `}}`)
		sep()
		bw.WriteString(`{"name":"thread_sort_index","ph":"M","pid":` + p + `,"tid":` + strconv.Itoa(i+1) + `,"args":{"sort_index":` + strconv.Itoa(i+1) + `}}`)
	}
	quoted := map[string]string{}
	for _, e := range events {
		q, ok := quoted[e.name]
		if !ok {
			q = quote(e.name)
			quoted[e.name] = q
		}
		sep()
		bw.WriteString(`{"name":` + q + `,"ph":"X","pid":` + strconv.Itoa(e.pid) + `,"tid":` + strconv.Itoa(e.tid) +
			`,"ts":` + micros(e.start) + `,"dur":` + micros(e.end-e.start) + `}`)
	}
	bw.WriteString("\n]")
	if len(other) > 0 {
		// A line of its own: the part that differs between two runs of
		// one configuration (command line, wall time).
		bw.WriteString(",\n" + `"otherData":{`)
		for i, kv := range other {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString(quote(kv[0]) + ":" + quote(kv[1]))
		}
		bw.WriteString("}")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// micros prints t in microseconds exactly: picoseconds have at most six
// decimals in microseconds, so the decimal is built from the integer.
func micros(t sim.Time) string {
	neg := t < 0
	v := int64(t)
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v/1e6, 10)
	if frac := v % 1e6; frac != 0 {
		f := strconv.FormatInt(frac+1e6, 10)[1:] // six digits, zero padded
		s += "." + strings.TrimRight(f, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, Natural)
	return out
}

var _ sim.Tracer = (*Writer)(nil)

// Natural compares a and b with runs of digits compared as numbers, so
// "node[2]" sorts before "node[10]" and "GPUTN n=8" before "GPUTN n=16".
// Strings equal in that order are compared bytewise, so the order is total.
func Natural(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da, db := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Or(cmp.Compare(len(da), len(db)), strings.Compare(da, db)); c != 0 {
				return c
			}
			continue
		}
		if a[i] != b[j] {
			return cmp.Compare(a[i], b[j])
		}
		i, j = i+1, j+1
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), strings.Compare(a, b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
