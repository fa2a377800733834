package workload

import (
	"runtime"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// partitionedAllreduce runs the allreduce on a cluster split into k
// partitions (k = 0: the sequential cluster.New) and returns the result
// and the event count.
func partitionedAllreduce(t testing.TB, hw cluster.Spec, s strategy.Strategy, alg string, nodes, k int, size unit.Bytes, functional bool) (AllreduceResult, uint64) {
	t.Helper()
	var c *cluster.Cluster
	var err error
	if k == 0 {
		c, err = cluster.New(sim.New(1), hw, nodes, functional)
	} else {
		c, err = cluster.NewPartitioned(1, hw, nodes, k, functional)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := Allreduce{Size: size, WGs: 4, WGSize: 256, CPUThreads: 8, Algorithm: alg}
	res, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s %s on %d nodes, %d partitions: %v", s, alg, nodes, k, err)
	}
	return res, c.Events()
}

func fatTree(leaf int) cluster.Spec {
	hw := cluster.GPUTN()
	hw.Topology.Kind, hw.Topology.LeafSize = "fattree", leaf
	return hw
}

// The partitioned allreduce verifies and reproduces the sequential
// engine's times and event counts exactly, for every partitionable
// strategy, both algorithms, both topologies and uneven splits. Where a
// packet handed over at a switch ties at the same picosecond with an event
// of the destination partition, the merged packet runs after it
// (sim.Group), which one engine need not do; only a tie on shared state
// (the switch's output port) could change a time, and in these collectives
// no other packet reaches that port at the same picosecond from the other
// partition (a ring or an rhd pair sends to one peer per step, and
// in-order links space one sender's packets by a serialisation). This test
// and the 64/96-node comparisons in docs/parallel.md check it.
func TestPartitionedAllreduceMatchesSequential(t *testing.T) {
	cases := []struct {
		hw     cluster.Spec
		topo   string
		alg    string
		nodes  int
		splits []int
	}{
		{cluster.GPUTN(), "star", AlgRing, 5, []int{2, 5}},
		{cluster.GPUTN(), "star", AlgRing, 8, []int{3}},
		{fatTree(4), "fattree", AlgRing, 12, []int{2, 3}},
		{cluster.GPUTN(), "star", AlgRHD, 6, []int{2, 4}},
		{fatTree(2), "fattree", AlgRHD, 8, []int{2, 4}},
	}
	for _, c := range cases {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
			if c.alg == AlgRHD && !AllreduceAlgPartitionable(s, c.alg) {
				continue
			}
			want, wantEv := partitionedAllreduce(t, c.hw, s, c.alg, c.nodes, 0, 24*unit.KiB+8, true)
			for _, k := range c.splits {
				got, ev := partitionedAllreduce(t, c.hw, s, c.alg, c.nodes, k, 24*unit.KiB+8, true)
				if !got.Verified || got.Time != want.Time || ev != wantEv {
					t.Errorf("%s %s %s n=%d k=%d: verified=%v %v, %d events; sequential %v, %d events",
						c.topo, c.alg, s, c.nodes, k, got.Verified, got.Time, ev, want.Time, wantEv)
				}
			}
		}
	}
}

// A partitioned run gives the same result whether the partitions share
// one OS thread or run on two.
func TestPartitionedAllreduceIndependentOfGOMAXPROCS(t *testing.T) {
	run := func(procs int) (AllreduceResult, uint64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return partitionedAllreduce(t, cluster.GPUTN(), strategy.GPUTN, AlgRing, 6, 2, 16*unit.KiB, true)
	}
	a, ea := run(1)
	b, eb := run(2)
	if a.Time != b.Time || ea != eb || !a.Verified || !b.Verified {
		t.Fatalf("GOMAXPROCS=1: %v, %d events; GOMAXPROCS=2: %v, %d events", a.Time, ea, b.Time, eb)
	}
}

// Every implementation of the allreduce runs partitioned (GIO's since its
// connections are numbered by who connects to whom, each end made by its
// own node); one that is not known to keep its state on its nodes is
// refused.
func TestEveryAllreduceImplementationPartitions(t *testing.T) {
	for _, im := range AllreduceDef().Impls {
		if !partitionable(im.Name, strategy.CPU) {
			t.Errorf("the %s allreduce does not run partitioned", im.Name)
		}
	}
	if partitionable("another", strategy.CPU) {
		t.Error("an implementation not listed runs partitioned")
	}
	if err := partitionRefusal(2, strategy.CPU, "another"); err == nil || !strings.Contains(err.Error(), "run.partitions = 2") {
		t.Fatalf("err = %v, want a run.partitions refusal", err)
	}
}

// The remote-task allreduce (XTQ's NIC-enqueued tasks, HSA's host
// progress thread) keeps every runtime's state on its node, and so does
// the device-shmem ring over the queued backends (GHN_*, COMPNET: each
// PE's service threads drive its own node's OpenSHMEM over Portals), and
// the device-verbs ring (GNN_GPURDMA: the GPI world built before the run,
// read only during it), and GIO's device-shmem ring (each PE reserves and
// makes its own ends of its connections), so all four run partitioned with the sequential engine's times, event counts
// and service energy: receive resources posted once or every round,
// functional and payload-free, on a star and a fat tree.
func TestPartitionedRemoteTasksAndShmemMatchSequential(t *testing.T) {
	tasks := []strategy.Strategy{strategy.XTQ, strategy.HSA}
	queued := []strategy.Strategy{strategy.GHNDGPU, strategy.GHNDGPUHostQ, strategy.GHNAPU, strategy.COMPNET}
	verbs := []strategy.Strategy{strategy.GNNGPURDMA}
	gio := []strategy.Strategy{strategy.GNNGIO}
	tree := func(hw cluster.Spec) cluster.Spec {
		hw.Topology.Kind, hw.Topology.LeafSize = "fattree", 3
		return hw
	}
	cases := []struct {
		hw         cluster.Spec
		strategies []strategy.Strategy
		nodes      int
		splits     []int
		perRound   bool
		functional bool
	}{
		{cluster.XTQ(), tasks, 5, []int{2, 5}, false, true},
		{cluster.XTQ(), tasks, 8, []int{3}, true, true},
		{cluster.XTQ(), tasks, 16, []int{2}, false, false},
		{tree(cluster.XTQ()), tasks, 12, []int{2, 4}, false, true},
		{cluster.CompNet(), queued, 5, []int{2, 5}, false, true},
		{cluster.CompNet(), queued, 8, []int{2}, false, false},
		{tree(cluster.CompNet()), queued, 6, []int{2}, false, true},
		{cluster.GPURDMA(), verbs, 5, []int{2, 5}, false, true},
		{cluster.GPURDMA(), verbs, 16, []int{2, 3}, false, false},
		{tree(cluster.GPURDMA()), verbs, 12, []int{2, 4}, false, true},
		{cluster.GIO(), gio, 5, []int{2, 5}, false, true},
		{cluster.GIO(), gio, 16, []int{2, 3}, false, false},
		{tree(cluster.GIO()), gio, 12, []int{2, 4}, false, true},
	}
	for _, c := range cases {
		for _, s := range c.strategies {
			run := func(k int) (AllreduceResult, uint64) {
				var cl *cluster.Cluster
				var err error
				hw := c.hw
				if d, err := strategy.Lookup(string(s)); err == nil {
					hw = d.Adjust(hw)
				}
				if k == 0 {
					cl, err = cluster.New(sim.New(1), hw, c.nodes, c.functional)
				} else {
					cl, err = cluster.NewPartitioned(1, hw, c.nodes, k, c.functional)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				a := Allreduce{Size: 24*unit.KiB + 8, WGs: 4, WGSize: 256, CPUThreads: 8, SyncPerRound: c.perRound}
				res, err := a.Run(cl, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
				if err != nil {
					t.Fatalf("%s on %d nodes, %d partitions: %v", s, c.nodes, k, err)
				}
				return res, cl.Events()
			}
			want, wantEv := run(0)
			for _, k := range c.splits {
				got, ev := run(k)
				if got.Verified != c.functional || got.Time != want.Time || ev != wantEv || got.ServiceEnergy != want.ServiceEnergy {
					t.Errorf("%s %s n=%d k=%d perRound=%v functional=%v: verified=%v %v, %d events, %g J; sequential %v, %d events, %g J",
						c.hw.Topology.Kind, s, c.nodes, k, c.perRound, c.functional, got.Verified, got.Time, ev, got.ServiceEnergy, want.Time, wantEv, want.ServiceEnergy)
				}
			}
		}
	}
}

func outOfOrder(hw cluster.Spec) cluster.Spec {
	hw.Topology.InOrder = false
	return hw
}

// AutoPartitions splits where the measurements say it pays (one engine
// per 8 functional or 64 payload-free nodes), within the cores and the
// leaves, and never where a partitioned run would be refused.
func TestAutoPartitions(t *testing.T) {
	flow := cluster.GPUTN()
	flow.Network.Model = net.ModelFlow
	noLookahead := cluster.GPUTN()
	noLookahead.Link.Latency, noLookahead.Switch.Latency = 0, 0
	cases := []struct {
		name       string
		hw         cluster.Spec
		nodes      int
		functional bool
		s          strategy.Strategy
		cores      int
		want       int
	}{
		{"one core", cluster.GPUTN(), 1024, false, strategy.CPU, 1, 1},
		{"no cores said", cluster.GPUTN(), 1024, false, strategy.CPU, 0, 1},
		{"functional 8 nodes", cluster.GPUTN(), 8, true, strategy.HDN, 2, 1},
		{"functional 16 nodes", cluster.GPUTN(), 16, true, strategy.HDN, 2, 2},
		{"functional 64 nodes, 2 cores", cluster.GPUTN(), 64, true, strategy.GPUTN, 2, 2},
		{"functional 64 nodes, 16 cores: two, the most measured", cluster.GPUTN(), 64, true, strategy.GDS, 16, 2},
		{"payload-free 64 nodes", cluster.GPUTN(), 64, false, strategy.CPU, 2, 1},
		{"payload-free 128 nodes", cluster.GPUTN(), 128, false, strategy.CPU, 2, 2},
		{"payload-free 1024 nodes, 64 cores", cluster.GPUTN(), 1024, false, strategy.HDN, 64, 2},
		{"GPU-TN payload-free 1024 nodes: 32 engines on the cores' threads", cluster.GPUTN(), 1024, false, strategy.GPUTN, 2, 32},
		{"GPU-TN payload-free 2048 nodes: 32, the most measured", cluster.GPUTN(), 2048, false, strategy.GPUTN, 2, 32},
		{"GPU-TN payload-free 512 nodes: two", cluster.GPUTN(), 512, false, strategy.GPUTN, 2, 2},
		{"GPU-TN functional 1024 nodes: two", cluster.GPUTN(), 1024, true, strategy.GPUTN, 2, 2},
		{"GPU-TN payload-free 1024 nodes, one core", cluster.GPUTN(), 1024, false, strategy.GPUTN, 1, 1},
		{"GPU-TN payload-free 1024 nodes, fat tree of 16 leaves", fatTree(64), 1024, false, strategy.GPUTN, 2, 16},
		{"CPU payload-free 1024 nodes: two", cluster.GPUTN(), 1024, false, strategy.CPU, 2, 2},
		{"fat tree: whole leaves", fatTree(32), 64, true, strategy.CPU, 8, 2},
		{"fat tree: one leaf", fatTree(32), 32, true, strategy.CPU, 8, 1},
		{"fat tree, random spines: drawn per packet, one engine's results", outOfOrder(fatTree(16)), 64, true, strategy.CPU, 2, 2},
		{"star, in_order off (no spines)", outOfOrder(cluster.GPUTN()), 64, true, strategy.CPU, 2, 2},
		{"device shmem over verbs (GIO): each node makes its connection ends", cluster.GIO(), 64, true, strategy.GNNGIO, 2, 2},
		{"device verbs: the GPI world built before the run", cluster.GPURDMA(), 64, true, strategy.GNNGPURDMA, 2, 2},
		{"device shmem, queued backend", cluster.CompNet(), 64, true, strategy.COMPNET, 2, 2},
		{"remote tasks, payload-free 256 nodes", cluster.XTQ(), 256, false, strategy.XTQ, 2, 2},
		{"remote tasks, HSA functional 16 nodes", cluster.XTQ(), 16, true, strategy.HSA, 2, 2},
		{"flow network", flow, 1024, false, strategy.CPU, 2, 1},
		{"no lookahead", noLookahead, 1024, false, strategy.CPU, 2, 1},
	}
	for _, c := range cases {
		if got := AutoPartitions(c.hw, c.nodes, c.functional, c.s, c.cores); got != c.want {
			t.Errorf("%s: AutoPartitions(%d nodes, functional %v, %s, %d cores) = %d, want %d", c.name, c.nodes, c.functional, c.s, c.cores, got, c.want)
		}
	}
}

// Auto's many engines on few threads (GPU-TN's payload-free ring from
// autoManyFrom nodes: more engines than cores, each thread running its
// share one after the other in every window) reproduce one engine's
// times and event counts, on the threads the cores allow and on one.
func TestManyEnginesOnFewThreadsMatchSequential(t *testing.T) {
	run := func(k, threads int) (AllreduceResult, uint64) {
		var c *cluster.Cluster
		var err error
		if k == 0 {
			c, err = cluster.New(sim.New(1), cluster.GPUTN(), 64, false)
		} else {
			c, err = cluster.NewPartitioned(1, cluster.GPUTN(), 64, k, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Group != nil {
			c.Group.SetThreads(threads)
		}
		a := Allreduce{Size: unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
		res, err := a.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			t.Fatalf("%d engines on %d threads: %v", k, threads, err)
		}
		return res, c.Events()
	}
	want, wantEv := run(0, 0)
	for _, c := range []struct{ k, threads int }{{32, 2}, {32, 1}, {16, 2}} {
		got, ev := run(c.k, c.threads)
		if got.Time != want.Time || ev != wantEv {
			t.Errorf("%d engines on %d threads: %v, %d events; one engine %v, %d events", c.k, c.threads, got.Time, ev, want.Time, wantEv)
		}
	}
}

// Nodes of several GPUs split over partitions at node boundaries (a
// node's GPUs, fabric, peer ports and MPI registry stay on one engine):
// the allreduce of every partitionable strategy — whose ranks on one node
// exchange over the GPU fabric (CPU and HDN through MPI's shared memory
// and copy engines, GDS by stream peer copies, GPU-TN NIC to NIC) —
// verifies and reproduces one engine's times and event counts on a star,
// on a fat tree whose leaves hold whole nodes or split one (a unit of
// whole leaves and whole nodes), on h100-cx7's rail-optimised fat tree
// and mi300a-ss11's dragonfly (made small enough to split), whatever
// GOMAXPROCS, and on the star so does GHN_APU's device shmem and the
// XTQ and HSA remote tasks; a split that would cut a node is refused.
func TestPartitionMultiGPUNodes(t *testing.T) {
	star2 := cluster.GPUTN()
	star2.Node.GPUs = 2
	tree4 := fatTree(4)
	tree4.Node.GPUs = 2
	tree3 := fatTree(3)
	tree3.Node.GPUs = 2 // units of 6 GPUs: two leaves, three nodes
	rails := cluster.H100CX7()
	rails.Topology.LeafSize = 1 // a leaf per rail and node: units of one 8-GPU node
	df := cluster.MI300ASS11()
	df.Topology.NodesPerRouter, df.Topology.RoutersPerGroup, df.Topology.GlobalPerRouter = 2, 2, 1 // a group is one 4-APU node
	cases := []struct {
		name   string
		hw     cluster.Spec
		ranks  int
		splits []int
	}{
		{"star, 2 GPUs per node", star2, 8, []int{2, 4}},
		{"fat tree of 4, 2 GPUs per node", tree4, 12, []int{2, 3}},
		{"fat tree of 3, 2 GPUs per node", tree3, 12, []int{2}},
		{"h100-cx7 rail-optimised fat tree", rails, 16, []int{2}},
		{"mi300a-ss11 dragonfly", df, 12, []int{2, 3}},
	}
	for _, c := range cases {
		if most := cluster.MaxPartitions(c.hw, c.ranks); most < c.splits[len(c.splits)-1] {
			t.Fatalf("%s: at most %d partitions for %d GPUs", c.name, most, c.ranks)
		}
		strategies := []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN}
		if c.hw.Topology.Kind == "star" {
			// The other partitionable implementations: device shmem over
			// the queued backends (peer GPUs of a node by their fabric),
			// remote tasks.
			strategies = append(strategies, strategy.GHNAPU, strategy.XTQ, strategy.HSA)
		}
		for _, s := range strategies {
			want, wantEv := partitionedAllreduce(t, c.hw, s, AlgRing, c.ranks, 0, 24*unit.KiB+8, true)
			for _, k := range c.splits {
				for _, procs := range []int{1, 2} {
					prev := runtime.GOMAXPROCS(procs)
					got, ev := partitionedAllreduce(t, c.hw, s, AlgRing, c.ranks, k, 24*unit.KiB+8, true)
					runtime.GOMAXPROCS(prev)
					if !got.Verified || got.Time != want.Time || ev != wantEv {
						t.Errorf("%s, %s, %d partitions, GOMAXPROCS=%d: verified %v, %v, %d events; one engine %v, %d events",
							c.name, s, k, procs, got.Verified, got.Time, ev, want.Time, wantEv)
					}
				}
			}
		}
	}
	// The unit of a star of 2-GPU nodes is a node: 8 GPUs, at most 4.
	if _, err := cluster.NewPartitioned(1, star2, 8, 5, false); err == nil || !strings.Contains(err.Error(), "must be in [1, 4]") ||
		!strings.Contains(err.Error(), "whole nodes") || strings.Contains(err.Error(), "\n") {
		t.Errorf("5 partitions of 4 two-GPU nodes: err = %v, want one line naming the range and whole nodes", err)
	}
	// Auto splits them where it pays, as single-GPU nodes.
	if k := AutoPartitions(star2, 64, true, strategy.HDN, 8); k != 2 {
		t.Errorf("AutoPartitions on 64 GPUs in 2-GPU nodes, HDN = %d engines, want 2", k)
	}
}

// GDS's ring reaches a next rank on the same node by copy-engine copies
// on the stream, not by the NIC: one 8-GPU h100-cx7 node verifies with no
// NIC packet; on two nodes only the two ranks whose next rank is on the
// other node use the NIC.
func TestAllreduceGDSPeerCopies(t *testing.T) {
	hw := cluster.H100CX7()
	for _, ranks := range []int{8, 16} {
		c, err := cluster.New(sim.New(1), hw, ranks, true)
		if err != nil {
			t.Fatal(err)
		}
		a := Allreduce{Size: 64 * unit.KiB, WGs: 4, WGSize: 256, CPUThreads: 8, Algorithm: AlgRing}
		res, err := a.Run(c, strategy.GDS, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			t.Fatal(err)
		}
		nicRanks, copies := 0, uint64(0)
		for _, nd := range c.Nodes {
			if nd.NIC.Stats().PacketsTx > 0 {
				nicRanks++
			}
			copies += nd.Peer.Stats().Copies
		}
		c.Close()
		wantNIC := 2 * (ranks/8 - 1) // the ranks whose next rank is on the other node
		if nicRanks != wantNIC || !res.Verified || copies == 0 {
			t.Errorf("%d ranks: verified %v, %d ranks used the NIC (want %d), %d peer copies", ranks, res.Verified, nicRanks, wantNIC, copies)
		}
	}
}

// Topologies with several paths per pair partition with one engine's
// results too: an out-of-order fat tree and rail-optimised fat tree
// (random spines), a dragonfly of four groups with Valiant and with
// UGAL routing (random intermediate groups, UGAL reading its own group's
// global ports). The path draws are per packet (net.Fabric.draw), so
// each partition's engine draws what one engine does; the two-sided
// strategies run there (the GDS and GPU-TN allreduce need ordered
// delivery). Auto splits them as it splits ordered ones.
func TestPartitionAdaptiveRoutingMatchesSequential(t *testing.T) {
	tree := fatTree(2)
	tree.Topology.InOrder = false
	rails := cluster.H100CX7()
	rails.Topology.LeafSize, rails.Topology.InOrder = 1, false
	df := cluster.MI300ASS11()
	df.Topology.NodesPerRouter, df.Topology.RoutersPerGroup, df.Topology.GlobalPerRouter = 2, 2, 2 // a group is one 4-APU node
	valiant, ugal := df, df
	valiant.Topology.Routing, ugal.Topology.Routing = "valiant", "ugal"
	cases := []struct {
		name  string
		hw    cluster.Spec
		ranks int
		k     int
	}{
		{"fat tree, in_order = false", tree, 8, 2},
		{"h100-cx7 rail tree, in_order = false", rails, 16, 2},
		{"mi300a-ss11 dragonfly, valiant", valiant, 16, 2},
		{"mi300a-ss11 dragonfly, valiant 4", valiant, 16, 4},
		{"mi300a-ss11 dragonfly, ugal 4", ugal, 16, 4},
		{"mi300a-ss11 dragonfly, ugal", ugal, 16, 2},
	}
	for _, c := range cases {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN} {
			for _, alg := range []string{AlgRing, AlgRHD} {
				if alg == AlgRHD && c.ranks&(c.ranks-1) != 0 {
					continue
				}
				want, wantEv := partitionedAllreduce(t, c.hw, s, alg, c.ranks, 0, 24*unit.KiB+8, true)
				got, ev := partitionedAllreduce(t, c.hw, s, alg, c.ranks, c.k, 24*unit.KiB+8, true)
				if !got.Verified || got.Time != want.Time || ev != wantEv {
					t.Errorf("%s, %s %v, %d partitions: verified %v, %v, %d events; one engine %v, %d events",
						c.name, s, alg, c.k, got.Verified, got.Time, ev, want.Time, wantEv)
				}
			}
		}
		if k := AutoPartitions(c.hw, 1024, false, strategy.HDN, 2); k != 2 {
			t.Errorf("%s: AutoPartitions at 1,024 GPUs on 2 cores = %d, want 2", c.name, k)
		}
	}
}
