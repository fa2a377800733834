package sim

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// hop is a callback that reschedules itself a pseudo-random 1–97 ps ahead
// on its engine.
type hop struct{ e *Engine }

func (h *hop) Handle(arg uint64) {
	h.e.AtH(h.e.now+Time(1+arg%97), h, arg*2862933555777941757+3037000493)
}

// BenchmarkGroupWindows runs the same 4,096 pending events split over k
// partitions of a Group, windows of 100 ps (about 8,400 events per
// window), with no event crossing: what the Group itself costs per
// partition and window (its barrier's scans, each engine's queue at the
// start of its window), without a model's state or code: cpu-ns/event of
// k partitions less that of one, times events/window over k, is the cost
// of one partition's window (CPU time, which a loaded machine inflates
// less than wall time). Run with GOMAXPROCS=1 to leave the threads out
// (docs/speed.md, "The engines' windows (eighteenth session)").
func BenchmarkGroupWindows(b *testing.B) {
	for _, k := range []int{1, 2, 32, 128} {
		b.Run(fmt.Sprintf("p%d", k), func(b *testing.B) {
			const pending, look = 4096, 100
			g, err := NewGroup(1, k, look)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			for p := range k {
				e := g.Engine(p)
				h := &hop{e: e}
				for i := range pending / k {
					e.AtH(Time(i%50), h, uint64(i*7+p))
				}
			}
			e0 := g.Engine(0)
			e0.At(look*Time(b.N), e0.Stop)
			b.ResetTimer()
			cpu0 := cpuTime(b)
			if err := g.Run(); err != nil {
				b.Fatal(err)
			}
			cpu := float64((cpuTime(b) - cpu0).Nanoseconds())
			b.ReportMetric(float64(g.Events())/float64(b.N), "events/window")
			b.ReportMetric(cpu/float64(g.Events()), "cpu-ns/event")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
