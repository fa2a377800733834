package loggops

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/sim"
)

func benchRun(b *testing.B, g *goal.Generated) {
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		r, err := Run(g, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRing1024 is the speed target: a 1024-rank 8 MiB ring
// allreduce, about 6.3 M events.
func BenchmarkRing1024(b *testing.B) { benchRun(b, goal.Ring(1024, 8<<20)) }

// BenchmarkBcast64Ki is a 65,536-rank binomial broadcast.
func BenchmarkBcast64Ki(b *testing.B) { benchRun(b, goal.Bcast(1<<16, 8)) }

// TestBigRuns runs the scale targets generated on the fly and
// logs memory per rank: a 1,048,576-rank binomial broadcast and a 4,096-rank
// ring allreduce (100 M events). The 65,536-rank ring allreduce has 25.8 G
// events (about an hour); set GPUNETSIM_HUGE=1 to include it. Skipped with
// -short.
func TestBigRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("big runs skipped in -short mode")
	}
	progs := []*goal.Generated{goal.Bcast(1<<20, 8), goal.Ring(1<<12, 8<<20)}
	if os.Getenv("GPUNETSIM_HUGE") == "1" {
		progs = append(progs, goal.Ring(1<<16, 8<<20))
	}
	p := DefaultParams()
	for _, g := range progs {
		t.Run(g.String(), func(t *testing.T) {
			runtime.GC()
			r, err := Run(g, p)
			if err != nil {
				t.Fatal(err)
			}
			n := g.NumRanks()
			var want sim.Time
			step := 2*p.O + p.L
			switch {
			case n == 1<<20:
				want = 20 * (step + perByte(8, p.GapPerByte))
			default:
				want = sim.Time(2*(n-1)) * (step + perByte(uint64(8<<20/n), p.GapPerByte))
			}
			if r.Max != want {
				t.Errorf("max finish %v, want %v", r.Max, want)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			t.Logf("%s: max %v at host %d, %d events, %.2f M events/s, peak %d operations in memory, Go heap in use %.0f B/rank",
				g, r.Max, r.MaxHost, r.Events, r.EventsPerSecond()/1e6, r.PeakOps, float64(ms.HeapInuse)/float64(n))
		})
	}
}

// BenchmarkRing1024File is the speed target read from GOAL text:
// the 1024-rank 8 MiB ring allreduce written to a 229 MB file (once, before
// the timer), then opened, indexed and simulated in every iteration, as
// "gpunetsim goal run FILE" does. events/s counts the whole from-file run.
func BenchmarkRing1024File(b *testing.B) {
	path := filepath.Join(b.TempDir(), "ring1024.goal")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := goal.WriteText(fh, goal.Ring(1024, 8<<20)); err != nil {
		b.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f, err := goal.Open(fh)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Run(f, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
		f.Close()
		fh.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAlltoall300 is a 300-rank linear all-to-all (8 B): every rank
// holds its 598 operations from the start, so its sends queue on one CPU
// and its arrivals meet long matching queues.
func BenchmarkAlltoall300(b *testing.B) { benchRun(b, goal.AllToAll(300, 8)) }

// BenchmarkAlltoall1000 is the 1,000-rank linear all-to-all of the
// reliability corpus: 6.0 M events (1.5 G, minutes, while every waiting
// entry retried).
func BenchmarkAlltoall1000(b *testing.B) { benchRun(b, goal.AllToAll(1000, 8)) }

// BenchmarkAlltoallReversed300 is a 300-rank all-to-all whose ranks post
// their receives in the reverse of the order their messages arrive, so
// each arrival's match is the last of about 300 posted receives: the
// queues are indexed by key (match.go) instead of scanned.
func BenchmarkAlltoallReversed300(b *testing.B) {
	const n = 300
	var t strings.Builder
	fmt.Fprintf(&t, "num_ranks %d\n", n)
	for r := range n {
		fmt.Fprintf(&t, "rank %d {\n", r)
		for j := n - 1; j >= 1; j-- {
			fmt.Fprintf(&t, "r%d: recv 8b from %d tag 0\n", j, (r-j+n)%n)
		}
		for j := 1; j < n; j++ {
			fmt.Fprintf(&t, "s%d: send 8b to %d tag 0\n", j, (r+j)%n)
		}
		t.WriteString("}\n")
	}
	text := t.String()
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		f, err := goal.Open(strings.NewReader(text))
		if err != nil {
			b.Fatal(err)
		}
		r, err := Run(f, DefaultParams())
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
