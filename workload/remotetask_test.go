package workload

import (
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The remote-task allreduce (XTQ, HSA) verifies on odd and even node
// counts, functional and payload-free runs time the same, and XTQ beats
// HSA, whose target CPUs enqueue every reduction kernel.
func TestRemoteTaskAllreduce(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.XTQ, strategy.HSA} {
		for _, n := range []int{2, 3, 5, 8} {
			res, _ := runAllreduceOn(t, cluster.XTQ(), s, n, 64*unit.KiB+12, true)
			if !res.Verified || res.Time <= 0 {
				t.Errorf("%s n=%d: verified=%v time=%v", s, n, res.Verified, res.Time)
			}
		}
		fun, ev1 := runAllreduceOn(t, cluster.XTQ(), s, 4, 64*unit.KiB, true)
		free, ev2 := runAllreduceOn(t, cluster.XTQ(), s, 4, 64*unit.KiB, false)
		if fun.Time != free.Time || ev1 != ev2 {
			t.Errorf("%s: functional %v (%d events) vs payload-free %v (%d events)", s, fun.Time, ev1, free.Time, ev2)
		}
	}
}

func TestTaskSpawnBreakdown(t *testing.T) {
	for _, size := range []unit.Bytes{64, 4 * unit.KiB} {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.HSA, strategy.XTQ} {
			c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := TaskSpawn{Size: size, WGSize: 256}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			if err != nil || !r.Verified {
				t.Fatalf("%s %v: %v verified=%v", s, size, err, r.Verified)
			}
			prev := sim.Time(0)
			for _, p := range r.Phases {
				if p.Start != prev || p.End < p.Start {
					t.Errorf("%s %v: phase %s [%v, %v] does not follow %v", s, size, p.Phase, p.Start, p.End, prev)
				}
				prev = p.End
			}
			if prev != r.EndToEnd {
				t.Errorf("%s: phases end at %v, end-to-end %v", s, prev, r.EndToEnd)
			}
		}
	}
}

func BenchmarkAllreduce64Remote(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HSA, strategy.XTQ} {
		b.Run(string(s), func(b *testing.B) {
			for b.Loop() {
				c, err := cluster.New(sim.New(1), cluster.XTQ(), 64, true)
				if err != nil {
					b.Fatal(err)
				}
				a := Allreduce{Size: 4 * unit.MiB, WGSize: 256, CPUThreads: 8}
				if _, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(c.Engine.Events()), "events")
				c.Engine.Close()
			}
		})
	}
}
