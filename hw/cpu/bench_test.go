package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// BenchmarkCompute streams an 8 MiB region over 8 team threads under the
// mlp model, the CPU allreduce's reduction at 2 nodes; it reports the
// engine events per simulated region and events per second.
func BenchmarkCompute(b *testing.B) {
	var events uint64
	for b.Loop() {
		e := sim.New(1)
		c := newTestCPU(e, spec())
		c.Spawn("app", func(th *Thread) { th.Compute(8<<20, 8) })
		if err := e.Run(); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/region")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSharedCore runs two threads of 10 ms of work each on one core
// (1 ms slices): the cost of time slicing.
func BenchmarkSharedCore(b *testing.B) {
	var events uint64
	for b.Loop() {
		e := sim.New(1)
		c := newTestCPU(e, spec())
		for range 2 {
			if _, err := c.SpawnOn(0, "busy", func(th *Thread) { th.Instr(instrFor(10 * sim.Millisecond)) }); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Run(); err != nil {
			b.Fatal(err)
		}
		events += e.Events()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
