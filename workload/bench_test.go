package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// BenchmarkAllreduce64 runs the largest point: an 8 MiB float32
// allreduce on 64 nodes in functional mode (real bytes, verified), per
// strategy. It reports simulated events per wall second and wall seconds
// per run.
func BenchmarkAllreduce64(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		b.Run(string(s), func(b *testing.B) {
			var events uint64
			for range b.N {
				e := sim.New(1)
				c, err := cluster.New(e, cluster.GPUTN(), 64, true)
				if err != nil {
					b.Fatal(err)
				}
				a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
				r, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
				if err != nil || !r.Verified {
					b.Fatalf("%v verified=%v", err, r.Verified)
				}
				events += e.Events()
				e.Close()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
		})
	}
}
