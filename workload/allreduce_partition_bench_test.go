package workload

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// BenchmarkAllreducePartitioned is the 8 MiB payload-free ring allreduce
// on one engine (p1, cluster.New) and split over two engines run in
// parallel (p2, cluster.NewPartitioned), per strategy, at 128, 256 and
// 1024 nodes: wall seconds and events per wall second, whose ratio p1/p2 is
// the speed-up on two cores (docs/parallel.md), the cores the run used
// (CPU over wall seconds: on a shared machine a second thread also wins a
// larger share), events per CPU-second (the cost of the windows and
// barriers), events per synchronisation window, the balance of the
// partitions and the speed-up their per-window balance allows on idle
// cores (ideal-speedup, independent of the load). The simulated results are
// identical (TestPartitionedAllreduceMatchesSequential). Run one size at a
// time with -benchtime 1x and -timeout 0 at 1024 nodes (a run takes up to
// a few minutes per strategy on one core). GPU-TN runs 16 slices up to 256
// nodes and the default at 1024, which is 16 slices too since fe52eed
// (Allreduce.Slices; before, one per 16 KiB of a chunk: 1 at 1024 nodes,
// about 82 M events against about 745 M now). The remote-task strategies (XTQ, HSA) run on the
// xtq hardware and the queued device-shmem ones (GHN_*, COMPNET) on
// compnet's, each in its memory mode (strategy.Def.Adjust).
func BenchmarkAllreducePartitioned(b *testing.B) {
	for _, n := range []int{128, 256, 1024} {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN,
			strategy.XTQ, strategy.HSA, strategy.GHNDGPU, strategy.GHNDGPUHostQ, strategy.GHNAPU, strategy.COMPNET} {
			for _, k := range []int{1, 2} {
				b.Run(fmt.Sprintf("%d/%s/p%d", n, s, k), func(b *testing.B) { benchPartitioned(b, s, n, k) })
			}
		}
	}
}

// benchSpec is the hardware strategy s runs on in the benchmarks: its
// preset's cluster, in its memory mode.
func benchSpec(s strategy.Strategy) cluster.Spec {
	hw := cluster.GPUTN()
	switch s {
	case strategy.XTQ, strategy.HSA:
		hw = cluster.XTQ()
	case strategy.GHNDGPU, strategy.GHNDGPUHostQ, strategy.GHNAPU, strategy.COMPNET:
		hw = cluster.CompNet()
	}
	if d, err := strategy.Lookup(string(s)); err == nil {
		hw = d.Adjust(hw)
	}
	return hw
}

func benchPartitioned(b *testing.B, s strategy.Strategy, n, k int) {
	var events, windows, busiest, critical uint64
	cpu0 := cpuSeconds(b)
	hw := benchSpec(s)
	for range b.N {
		var c *cluster.Cluster
		var err error
		if k == 1 {
			c, err = cluster.New(sim.New(1), hw, n, false)
		} else {
			c, err = cluster.NewPartitioned(1, hw, n, k, false)
		}
		if err != nil {
			b.Fatal(err)
		}
		a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
		if n > 256 {
			// The default slices, as the CLI runs it: 16 at every node
			// count since fe52eed (Allreduce.Slices).
			a.WGs, a.MaxWGs = 0, 16
		}
		if _, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
			b.Fatal(err)
		}
		events += c.Events()
		if g := c.Group; g != nil {
			windows += g.Windows()
			critical += g.Critical()
			for p := range g.Partitions() {
				busiest = max(busiest, g.Engine(p).Events())
			}
		}
		c.Close()
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(wall/float64(b.N), "s/run")
	b.ReportMetric(float64(events)/wall, "events/s")
	cpu := cpuSeconds(b) - cpu0
	b.ReportMetric(cpu/wall, "cores")
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	if windows > 0 {
		b.ReportMetric(float64(events)/float64(windows), "events/window")
		// The busiest partition's share of the events, times k: 1 is a
		// perfect balance, and bounds the speed-up at k/balance.
		b.ReportMetric(float64(busiest)*float64(k)/float64(events/uint64(b.N)), "balance")
		// Events over the critical path (per window the busiest
		// partition's events): the speed-up the windows allow on k idle
		// cores, whatever the machine's load now.
		b.ReportMetric(float64(events)/float64(critical), "ideal-speedup")
	}
}
