package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// With c2c.arrays = host on gh200-cx7 the ring allreduce's buffers live
// in the Grace's memory: still exact, its kernels' array traffic (the
// copy-in and every step's reduction) now crosses NVLink-C2C while the
// NIC's DMA no longer does (in HBM the NIC's 12 MiB per node cross it),
// more bytes in all, and it takes longer; the
// node's data pool is host memory for HDN and stays GPU memory for a
// strategy whose runtime heap is cudaMalloc'd (GNN_GIO).
func TestC2CArraysInHostAllreduce(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	run := func(arrays string) (sim.Time, uint64) {
		hw := cluster.GH200CX7()
		hw.C2C.Arrays = arrays
		c, err := cluster.New(sim.New(1), hw, 4, true)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := Allreduce{Size: 4 * unit.MiB, WGs: 4, WGSize: 256, CPUThreads: 8, Algorithm: AlgRing}.Run(c, strategy.HDN, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Verified {
			t.Fatalf("c2c.arrays = %s: not verified", arrays)
		}
		var link uint64
		for _, nd := range c.Nodes {
			_, up := nd.C2C.Stats(pcie.Up)
			_, down := nd.C2C.Stats(pcie.Down)
			link += up + down
		}
		return r.Time, link
	}
	tHBM, bHBM := run(pcie.ArraysHBM)
	tHost, bHost := run(pcie.ArraysHost)
	if tHost <= tHBM || bHost <= bHBM {
		t.Errorf("HDN allreduce 4 MiB: arrays in HBM %v, %d C2C bytes; in host memory %v, %d; want slower and more bytes on the link", tHBM, bHBM, tHost, bHost)
	}
	pools := map[strategy.Strategy]mem.Pool{}
	for _, s := range []strategy.Strategy{strategy.HDN, strategy.GNNGIO} {
		hw := cluster.GH200CX7()
		hw.C2C.Arrays = pcie.ArraysHost
		c, err := cluster.New(sim.New(1), hw, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
			pools[s] = nd.Pool
			return nil
		})
		if err := runGroup(c, g); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if pools[strategy.HDN] != mem.Host || pools[strategy.GNNGIO] != mem.GPU {
		t.Errorf("c2c.arrays = host: data pool HDN %v, GNN_GIO %v; want host, GPU", pools[strategy.HDN], pools[strategy.GNNGIO])
	}
}
