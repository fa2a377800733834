package workload

import (
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// BenchmarkSpTS solves the experiment's default circuit-class matrix
// (8192 rows) on 4 nodes per strategy and reports simulated events per
// wall second.
func BenchmarkSpTS(b *testing.B) {
	ref := SpTSReferences()[ClassCircuit]
	a, err := GenSynthetic(8192, int(ref.LowerNNZPerRow()*8192), ClassCircuit, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.GNNGIO, strategy.GHNDGPU, strategy.HDN, strategy.CPU} {
		b.Run(string(s), func(b *testing.B) {
			sd, _ := strategy.Lookup(string(s))
			hw, _ := cluster.Preset("gio")
			var events uint64
			start := time.Now()
			for range b.N {
				c, err := newCluster(sd.Adjust(hw), 4, 1, true)
				if err != nil {
					b.Fatal(err)
				}
				cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: shmem.DefaultSpec()}
				if _, err := (SpTS{Matrix: a, WGs: 128, Seed: 1}).Run(c, s, cfg); err != nil {
					b.Fatal(err)
				}
				events += c.Engine.Events()
				c.Engine.Close()
			}
			b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
		})
	}
}
