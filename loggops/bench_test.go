package loggops

import (
	"runtime"
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
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
// reports memory per rank. Skipped with -short.
func TestBigRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("big runs skipped in -short mode")
	}
	for _, g := range []*goal.Generated{goal.Bcast(1<<20, 8), goal.Ring(1<<16, 1<<20)} {
		t.Run(g.String(), func(t *testing.T) {
			if g.NumRanks() == 1<<16 && testing.Short() {
				t.Skip()
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r, err := Run(g, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			t.Logf("%s: max %v at host %d, %d events, %.2f M events/s, heap %.0f B/rank",
				g, r.Max, r.MaxHost, r.Events, r.EventsPerSecond()/1e6,
				float64(after.HeapSys)/float64(g.NumRanks()))
		})
	}
}
