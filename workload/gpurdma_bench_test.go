package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// BenchmarkRdmaMultiQP measures simulation speed on the multi-QP
// experiment's heaviest shape: 30 QPs × 1024 writes of 64 B, per mode.
func BenchmarkRdmaMultiQP(b *testing.B) {
	for _, mode := range []string{"warp", "block", "cpu"} {
		b.Run(mode, func(b *testing.B) {
			var events uint64
			for b.Loop() {
				c, err := newCluster(cluster.GPURDMA(), 2, 1, true)
				if err != nil {
					b.Fatal(err)
				}
				cfg := gnnConfig(func(s *verbs.Spec) { s.WQEReuse, s.Pipeline, s.BatchDoorbell = true, true, true })
				r, err := RdmaMultiQP{Size: 64, Msgs: 1024, Mode: mode, Warps: 30}.Run(c, strategy.GNNGPURDMA, cfg)
				if err != nil || !r.Verified {
					b.Fatal(err)
				}
				events += r.Events
				c.Engine.Close()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
