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

// gdsPeerCluster is an h100-cx7 cluster of ranks GPUs in nodes of g.
func gdsPeerCluster(t *testing.T, g, ranks int) *cluster.Cluster {
	t.Helper()
	hw := cluster.H100CX7()
	hw.Node.GPUs, hw.Topology.Rails = g, g
	c, err := cluster.New(sim.New(1), hw, ranks, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// nicAndCopies counts the NIC packets sent and the peer copies made by
// the cluster's GPUs.
func nicAndCopies(c *cluster.Cluster) (packets, copies uint64) {
	for _, nd := range c.Nodes {
		packets += nd.NIC.Stats().PacketsTx
		if nd.Peer != nil {
			copies += nd.Peer.Stats().Copies
		}
	}
	return packets, copies
}

// GDS between GPUs of one node goes by the copy engines over the node's
// GPU fabric in jacobi, reduce, accumulate and the latency probe: with
// every rank on one node no NIC sends a packet, the result is verified,
// and across two nodes the NIC carries the rest (results verified too).
func TestGDSPeerCopiesOlderWorkloads(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	type run func(c *cluster.Cluster) (bool, error)
	jacobi := func(pr, pc int) run {
		return func(c *cluster.Cluster) (bool, error) {
			r, err := Jacobi{Rows: 24, Cols: 24, PRows: pr, PCols: pc, Iters: 3, WGSize: 64, MaxWGs: 6, CPUThreads: 4}.Run(c, strategy.GDS, cfg)
			return r.Verified, err
		}
	}
	reduce := func(c *cluster.Cluster) (bool, error) {
		r, err := Reduce{Size: 8 * unit.KiB, WGSize: 256, CPUThreads: 4}.Run(c, strategy.GDS, cfg)
		return r.Verified, err
	}
	accumulate := func(c *cluster.Cluster) (bool, error) {
		r, err := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB, 8, 40 * unit.KiB}, PerEpoch: 3, Epochs: 2, Stride: 8 * unit.KiB, WGSize: 256, CPUThreads: 4}.Run(c, strategy.GDS, cfg)
		return r.Verified, err
	}
	var lat LatencyResult
	latency := func(c *cluster.Cluster) (bool, error) {
		var err error
		lat, err = Latency{Size: 4 * unit.KiB}.Run(c, strategy.GDS, cfg)
		return lat.Verified, err
	}
	cases := []struct {
		name        string
		g, ranks    int
		run         run
		wantPackets bool // across nodes: some
	}{
		{"jacobi 2x2 one node", 4, 4, jacobi(2, 2), false},
		{"jacobi 2x2 two nodes", 2, 4, jacobi(2, 2), true},
		{"reduce one node", 4, 4, reduce, false},
		{"reduce two nodes", 2, 4, reduce, true},
		{"accumulate one node", 2, 2, accumulate, false},
		{"latency one node", 2, 2, latency, false},
	}
	for _, tc := range cases {
		c := gdsPeerCluster(t, tc.g, tc.ranks)
		ok, err := tc.run(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		pk, copies := nicAndCopies(c)
		if !ok || copies == 0 || (pk > 0) != tc.wantPackets {
			t.Errorf("%s: verified %v, %d NIC packets, %d peer copies; want verified, copies, packets %v", tc.name, ok, pk, copies, tc.wantPackets)
		}
	}
	phases := map[string]bool{}
	for _, s := range lat.Segments {
		phases[s.Phase] = true
		if s.End < s.Start {
			t.Errorf("latency on one node: %s ends before it starts", s.Phase)
		}
	}
	if !phases["CP copy-engine post"] || !phases["copy engine + GPU fabric"] {
		t.Errorf("latency on one node: phases %v, want the copy engine's", phases)
	}
}

// HSA's MPI (XTQ's baseline, GPU-aware MPI for its kernel-boundary
// workloads) takes the same paths inside a node as HDN's: on one 8-GPU
// h100-cx7 node its ring allreduce sends no NIC packet and its time
// equals HDN's.
func TestHSAMPIInsideNode(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	times := map[strategy.Strategy]sim.Time{}
	for _, s := range []strategy.Strategy{strategy.HDN, strategy.HSA} {
		c := gdsPeerCluster(t, 8, 8)
		r, err := Allreduce{Size: 64 * unit.KiB, WGs: 4, WGSize: 256, CPUThreads: 8, Algorithm: AlgRing}.Run(c, s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if pk, _ := nicAndCopies(c); pk != 0 || !r.Verified {
			t.Errorf("%s on one node: verified %v, %d NIC packets; want verified, none", s, r.Verified, pk)
		}
		times[s] = r.Time
	}
	if times[strategy.HSA] != times[strategy.HDN] {
		t.Errorf("one node: HSA %v, HDN %v; want equal (the same MPI paths)", times[strategy.HSA], times[strategy.HDN])
	}
}

// The two-rank workloads (and reduce's three ranks) on unmodified 8-GPU
// h100-cx7 nodes: node.placement = rails puts rank r on GPU 0 of node r,
// so every byte crosses the NICs and no peer copy is made; fabric packs
// the ranks onto one node, where GDS moves them by copy engines over the
// NVLink fabric and no NIC sends a packet. Both verify.
func TestPlacedRanksOnEightGPUNodes(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	type run func(c *cluster.Cluster) (bool, error)
	cases := []struct {
		name  string
		ranks int
		run   run
	}{
		{"latency", 2, func(c *cluster.Cluster) (bool, error) {
			r, err := Latency{Size: 4 * unit.KiB}.Run(c, strategy.GDS, cfg)
			return r.Verified, err
		}},
		{"accumulate", 2, func(c *cluster.Cluster) (bool, error) {
			r, err := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB, 8}, PerEpoch: 2, Epochs: 2, Stride: 8 * unit.KiB, WGSize: 256, CPUThreads: 4}.Run(c, strategy.GDS, cfg)
			return r.Verified, err
		}},
		{"reduce", 3, func(c *cluster.Cluster) (bool, error) {
			r, err := Reduce{Size: 8 * unit.KiB, WGSize: 256, CPUThreads: 4}.Run(c, strategy.GDS, cfg)
			return r.Verified, err
		}},
	}
	for _, place := range []string{"rails", "fabric"} {
		for _, tc := range cases {
			hw := cluster.H100CX7()
			hw.Node.Placement = place
			c, err := cluster.New(sim.New(1), hw, tc.ranks, true)
			if err != nil {
				t.Fatal(err)
			}
			wantName := map[string]string{"rails": "node[1].gpu[0]", "fabric": "node[0].gpu[1]"}[place]
			if len(c.Nodes) != tc.ranks || c.Nodes[1].Name != wantName {
				t.Fatalf("%s %s: %d ranks, rank 1 is %s, want %s", place, tc.name, len(c.Nodes), c.Nodes[1].Name, wantName)
			}
			ok, err := tc.run(c)
			c.Close()
			if err != nil {
				t.Fatalf("%s %s: %v", place, tc.name, err)
			}
			pk, copies := nicAndCopies(c)
			if rails := place == "rails"; !ok || (pk > 0) != rails || (copies > 0) == rails {
				t.Errorf("%s %s: verified %v, %d NIC packets, %d peer copies", place, tc.name, ok, pk, copies)
			}
		}
	}
}
