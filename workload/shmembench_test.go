package workload

import (
	"errors"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// BenchmarkShmemLoad480 is the fully loaded GPU of the dissertation's ComP-Net chapter at
// the largest service-thread count: 480 work-groups × 64 work-items, one
// 1-byte put each then a quiet, 16 service threads, 2 nodes of preset
// compnet, per strategy. It reports simulated events per wall second and
// wall seconds per run.
func BenchmarkShmemLoad480(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.GHNDGPU, strategy.GHNAPU, strategy.COMPNET} {
		b.Run(string(s), func(b *testing.B) {
			d, _ := strategy.Lookup(string(s))
			sp := shmem.DefaultSpec()
			sp.Threads = 16
			var events uint64
			for range b.N {
				e := sim.New(1)
				c, err := cluster.New(e, d.Adjust(cluster.CompNet()), 2, true)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := (ShmemLoad{WGs: 480, WGSize: 64, Bytes: 1}).Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: sp}); err != nil {
					b.Fatal(err)
				}
				events += e.Events()
				e.Close()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
		})
	}
}

// The load benchmark runs on 4 ComP-Net service threads time-sliced on 2
// CP cores (cp.oversubscribe): every work-group makes its three calls (p,
// quiet, the quiet of ctx_destroy) and the threads are preempted at
// quantum ends.
func TestShmemLoadDelivers(t *testing.T) {
	d, _ := strategy.Lookup(string(strategy.COMPNET))
	hw := cluster.CompNet()
	hw.CP.Oversubscribe = true
	c, err := cluster.New(sim.New(1), d.Adjust(hw), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	sp := shmem.DefaultSpec()
	sp.Threads = 4
	r, err := (ShmemLoad{WGs: 48, WGSize: 64, Bytes: 1}).Run(c, strategy.COMPNET, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: sp})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kernel <= 0 || len(r.Report.Threads) != 4 || r.Report.Calls.Calls != 48*3 || r.Report.Threads[0].Preemptions == 0 {
		t.Fatalf("run %+v", r)
	}
}

// Each microbenchmark's check catches a benchmark that delivers the wrong
// thing: the same kernel with a put to the wrong slot, a wrong value or
// from an unfilled source fails with ErrDelivery, and the right kernel
// passes.
func TestShmemBenchChecksCatchWrongDeliveries(t *testing.T) {
	d, _ := strategy.Lookup(string(strategy.GHNDGPU))
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: shmem.DefaultSpec()}
	run := func(wgs int, chk shmemCheck, sizes []uint64, body func(pe int, sym []mem.Addr, x *shmem.Ctx) error) error {
		c, err := cluster.New(sim.New(1), d.Adjust(cluster.CompNet()), 2, false) // payload-free: the heap still carries bytes
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		_, err = shmemKernelChecked(c, strategy.GHNDGPU, cfg, wgs, 64, sizes, chk, body)
		return err
	}
	svc := ShmemService{WGs: 4, WGSize: 64, Ops: 3}
	load := ShmemLoad{WGs: 4, WGSize: 64, Bytes: 1}
	l2 := CPL2{NetWGs: 2, Puts: 2, Chunk: 64}
	for _, c := range []struct {
		name  string
		wgs   int
		chk   shmemCheck
		sizes []uint64
		body  func(pe int, sym []mem.Addr, x *shmem.Ctx) error
		ok    bool
	}{
		{"service", 4, svc.check(), []uint64{32}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			for i := range 3 {
				if err := x.P(sym[0]+mem.Addr(8*x.WG().ID), uint64(i+1), 8, 1-pe); err != nil {
					return err
				}
			}
			return nil
		}, true},
		{"service, one put short", 4, svc.check(), []uint64{32}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			return x.P(sym[0]+mem.Addr(8*x.WG().ID), 2, 8, 1-pe)
		}, false},
		{"load", 4, load.check(), []uint64{32}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			if err := x.P(sym[0]+mem.Addr(8*x.WG().ID), uint64(pe+1), 1, 1-pe); err != nil {
				return err
			}
			return x.Quiet()
		}, true},
		{"load, wrong slot", 4, load.check(), []uint64{32}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			if err := x.P(sym[0], uint64(pe+1), 1, 1-pe); err != nil {
				return err
			}
			return x.Quiet()
		}, false},
		{"cpl2", 2, l2.check(), []uint64{128, 64}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			if err := x.PutmemNBI(sym[0]+mem.Addr(64*x.WG().ID), sym[1], 64, 1-pe); err != nil {
				return err
			}
			return x.Quiet()
		}, true},
		{"cpl2, unfilled source", 2, CPL2{NetWGs: 2}.check(), []uint64{128, 64}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
			if err := x.PutmemNBI(sym[0]+mem.Addr(64*x.WG().ID), sym[0]+64, 64, 1-pe); err != nil {
				return err
			}
			return x.Quiet()
		}, false},
	} {
		err := run(c.wgs, c.chk, c.sizes, c.body)
		if c.ok && err != nil || !c.ok && !errors.Is(err, ErrDelivery) {
			t.Errorf("%s: %v; want ok = %v", c.name, err, c.ok)
		}
	}
}
