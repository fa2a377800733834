package loggops

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/sim"
)

// randomSchedule is a GOAL schedule with many operations per rank on few
// CPUs and NICs, so that ready operations and arrivals queue for them:
// messages between random ranks (each a send and its receive, a few
// receives with a wildcard source), calcs, and dependencies on a rank's
// earlier sends and calcs (which never wait on another rank, so that most
// schedules finish).
func randomSchedule(r *rand.Rand) string {
	n := 2 + r.IntN(5)
	ncpu, nnic := 1+r.IntN(2), 1+r.IntN(2)
	type line struct {
		text string
		free bool // a send or a calc: may be depended on
	}
	ranks := make([][]line, n)
	add := func(rank int, text string, free bool) {
		rs := ranks[rank]
		at := r.IntN(len(rs) + 1)
		ranks[rank] = append(rs[:at], append([]line{{text, free}}, rs[at:]...)...)
	}
	for range r.IntN(80) {
		src, dst := r.IntN(n), r.IntN(n)
		size, tag := []int{0, 1, 8, 1000, 70000}[r.IntN(5)], r.IntN(2)
		add(src, fmt.Sprintf("send %db to %d tag %d cpu %d nic %d", size, dst, tag, r.IntN(ncpu), r.IntN(nnic)), true)
		from := fmt.Sprint(src)
		if r.IntN(10) == 0 {
			from = "-1"
		}
		add(dst, fmt.Sprintf("recv %db from %s tag %d cpu %d nic %d", size, from, tag, r.IntN(ncpu), r.IntN(nnic)), false)
	}
	for range r.IntN(20) {
		add(r.IntN(n), fmt.Sprintf("calc %d cpu %d", []int{0, 1, 1000, 70000}[r.IntN(4)], r.IntN(ncpu)), true)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\n", n)
	for rank, rs := range ranks {
		fmt.Fprintf(&b, "rank %d {\n", rank)
		for i, l := range rs {
			fmt.Fprintf(&b, "o%d: %s\n", i, l.text)
		}
		for i := range rs {
			if i == 0 || r.IntN(3) != 0 {
				continue
			}
			if d := r.IntN(i); rs[d].free {
				kind := "requires"
				if r.IntN(4) == 0 {
					kind = "irequires"
				}
				fmt.Fprintf(&b, "o%d %s o%d\n", i, kind, d)
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// Waiting aside for a busy CPU or NIC (wait.go) gives exactly the result
// of re-queueing every waiting entry at each retry (LogGOPSim's way): the
// same finish time on every rank, operations and peak memory, or the same
// error, on random contended schedules and the generated patterns, with
// LogGOPS costs that are positive, zero (where entries start at the
// instant another took the resource) or per byte; only the count of
// processed queue entries shrinks.
func TestWaitingMatchesRetries(t *testing.T) {
	params := []Params{testParams(), {Eager: 4096, CalcUnit: sim.Nanosecond}}
	p := testParams()
	p.OverheadPerByte, p.Eager = 7, 4096
	params = append(params, p)
	var progs []func() (goal.Program, string, func())
	for _, g := range []*goal.Generated{goal.AllToAll(17, 8), goal.AllToAll(9, 100_000), goal.Ring(7, 70_000),
		goal.RecDoub(8, 10_000), goal.Bcast(13, 70_000), goal.Halo(3, 4, 3, 8192, 2000)} {
		progs = append(progs, func() (goal.Program, string, func()) { return g, g.String(), func() {} })
	}
	r := rand.New(rand.NewPCG(23, 5))
	for range 300 {
		text := randomSchedule(r)
		progs = append(progs, func() (goal.Program, string, func()) {
			f, err := goal.Open(strings.NewReader(text))
			if err != nil {
				t.Fatalf("Open: %v\n%s", err, text)
			}
			return f, text, func() { f.Close() }
		})
	}
	fewer := false
	for _, mk := range progs {
		for pi, p := range params {
			prog, text, done := mk()
			want, errW := RunOptions(prog, p, Options{retry: true})
			done()
			prog, _, done = mk()
			got, errG := RunOptions(prog, p, Options{})
			done()
			if fmt.Sprint(errW) != fmt.Sprint(errG) {
				t.Fatalf("params %d: retries: %v, waiting: %v\n%s", pi, errW, errG, text)
			}
			if errW != nil {
				continue
			}
			if got.Max != want.Max || got.MaxHost != want.MaxHost || got.Ops != want.Ops || got.PeakOps != want.PeakOps || fmt.Sprint(got.Finish) != fmt.Sprint(want.Finish) {
				t.Fatalf("params %d: waiting %v (max %v on %d), retries %v (max %v on %d)\n%s", pi, got.Finish, got.Max, got.MaxHost, want.Finish, want.Max, want.MaxHost, text)
			}
			if got.Events > want.Events {
				t.Fatalf("params %d: waiting took %d events, retries %d\n%s", pi, got.Events, want.Events, text)
			}
			fewer = fewer || got.Events < want.Events
		}
	}
	if !fewer {
		t.Error("waiting never saved an event: the test does not exercise it")
	}
}

// Indexed matching queues (match.go) match what scanning the queues in
// order matches: indexing every queue from its first entry, from its
// second, or never gives the same finish times, event counts and errors on
// the random schedules (with wildcard receives) and the generated
// patterns, including an all-to-all whose queues grow past the default
// threshold.
func TestIndexedMatchingMatchesScans(t *testing.T) {
	var texts []string
	r := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		texts = append(texts, randomSchedule(r))
	}
	progs := []goal.Program{goal.AllToAll(150, 8), goal.AllToAll(9, 100_000), goal.Halo(3, 4, 3, 8192, 2000), goal.Bcast(13, 70_000)}
	check := func(name string, open func() (goal.Program, func())) {
		p := testParams()
		var want *Result
		var errW error
		for i, at := range []uint32{1 << 31, 1, 2, 0} {
			prog, done := open()
			got, err := RunOptions(prog, p, Options{indexAt: at})
			done()
			if i == 0 {
				want, errW = got, err
				continue
			}
			if fmt.Sprint(err) != fmt.Sprint(errW) {
				t.Fatalf("%s: indexed from %d: %v, scanned: %v", name, at, err, errW)
			}
			if err == nil && (got.Max != want.Max || got.MaxHost != want.MaxHost || got.Events != want.Events || fmt.Sprint(got.Finish) != fmt.Sprint(want.Finish)) {
				t.Fatalf("%s: indexed from %d: %v (%d events), scanned %v (%d events)", name, at, got.Finish, got.Events, want.Finish, want.Events)
			}
		}
	}
	for _, g := range progs {
		check(fmt.Sprint(g), func() (goal.Program, func()) { return g, func() {} })
	}
	for _, text := range texts {
		check(text, func() (goal.Program, func()) {
			f, err := goal.Open(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			return f, func() { f.Close() }
		})
	}
}
