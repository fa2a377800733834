package net

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// randomTraffic has every endpoint send 40 packets of random sizes to
// random destinations at random picoseconds, on k partitions (k = 0: the
// unsplit fabric on a plain engine), and returns every endpoint's
// deliveries (packet id and time) and the fabric's invariants.
func randomTraffic(t *testing.T, n, k int, topo TopologySpec) (string, []sim.Violation) {
	t.Helper()
	return randomNodeTraffic(t, n, k, topo, NodeSpec{})
}

// randomNodeTraffic is randomTraffic on nodes of node.GPUs GPUs joined by
// their fabric (GPUs 0: one GPU per node).
func randomNodeTraffic(t *testing.T, n, k int, topo TopologySpec, node NodeSpec) (string, []sim.Violation) {
	t.Helper()
	parts := max(k, 1)
	g, err := sim.NewGroup(3, parts, link100.Latency+sw100.Latency)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(g.Engine(0), n, link100, sw100, topo)
	if err != nil {
		t.Fatal(err)
	}
	if node.GPUs > 1 {
		if err := f.UseNodeFabric(node); err != nil {
			t.Fatal(err)
		}
	}
	of := make([]int, n)
	shards := []*Fabric{f}
	if k > 0 {
		for i := range of {
			of[i] = i * k / n
		}
		if shards, err = f.Partition(g, of); err != nil {
			t.Fatal(err)
		}
	}
	sinks := make([]*sink, n)
	for i := range sinks {
		sinks[i] = &sink{e: g.Engine(of[i])}
		f.Attach(i, sinks[i])
	}
	for i := range n {
		e, sh := g.Engine(of[i]), shards[of[i]]
		rng := e.Stream(fmt.Sprintf("src[%d]", i))
		for j := range 40 {
			dst := rng.IntN(n)
			if node.GPUs > 1 && dst == i {
				dst = (i + 1) % n // a GPU's fabric has no route to itself
			}
			p := &pkt{src: i, dst: dst, n: unit.Bytes(1 + rng.IntN(4096)), id: i*1000 + j}
			e.At(sim.Time(rng.IntN(20_000_000)), func() { sh.Send(p) })
		}
	}
	if k == 0 {
		err = g.Engine(0).Run()
	} else {
		err = g.Run()
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, s := range sinks {
		fmt.Fprintf(&b, "%d:", i)
		for j, p := range s.got {
			fmt.Fprintf(&b, " %d@%v", p.id, s.at[j])
		}
		b.WriteByte('\n')
	}
	return b.String(), f.Invariants(g.Now())
}

// A fabric split over partitions delivers every packet at the time the
// unsplit fabric does, with random traffic through both topologies (sends
// at random picoseconds, so no two packets meet a port at the same
// picosecond from different partitions, where the merge order could
// differ from the sequential engine's; see sim.Group).
func TestPartitionedFabricMatchesSequential(t *testing.T) {
	for _, topo := range []TopologySpec{star, tree, railSplit, dfSplit, treeOOO, railOOO, dfValiant, dfUGAL} {
		want, _ := randomTraffic(t, 8, 0, topo)
		for _, k := range []int{2, 4} {
			if topo.Kind == "railfattree" && k == 4 {
				continue // its unit is 4 endpoints: 2 nodes of 2 rails
			}
			got, bad := randomTraffic(t, 8, k, topo)
			if got != want {
				t.Fatalf("%s (in order %v, routing %s), %d partitions: deliveries differ:\n%s\nwant\n%s", topo.Kind, topo.InOrder, topo.Routing, k, got, want)
			}
			if len(bad) > 0 {
				t.Fatalf("%s, %d partitions: %v", topo.Kind, k, bad)
			}
		}
	}
}

// Topologies whose units are small enough to split 8 endpoints 2 and 4
// ways: a rail-optimised fat tree of 2 rails whose leaves serve 2 nodes
// (a unit of 4 endpoints), a dragonfly of 2 one-endpoint switches per
// group (4 groups of 2 endpoints; UGAL looks only at its own group's
// global ports).
var (
	railSplit = TopologySpec{Kind: "railfattree", LeafSize: 2, InOrder: true, Rails: 2}
	// The same with several paths per pair: random spines, Valiant's and
	// UGAL's intermediate groups (4 groups: 2 to choose from), drawn per
	// packet (Fabric.draw), and UGAL's look at its own group's global
	// ports (owned by its partition).
	treeOOO   = TopologySpec{Kind: "fattree", LeafSize: 2, InOrder: false}
	railOOO   = TopologySpec{Kind: "railfattree", LeafSize: 2, InOrder: false, Rails: 2}
	dfValiant = TopologySpec{Kind: "dragonfly", LeafSize: 1, InOrder: true, NodesPerRouter: 1, RoutersPerGroup: 2,
		GlobalPerRouter: 2, Radix: 8, Routing: "valiant"}
	dfUGAL = TopologySpec{Kind: "dragonfly", LeafSize: 1, InOrder: true, NodesPerRouter: 1, RoutersPerGroup: 2,
		GlobalPerRouter: 2, Radix: 8, Routing: "ugal"}
	dfSplit = TopologySpec{Kind: "dragonfly", LeafSize: 1, InOrder: true, NodesPerRouter: 1, RoutersPerGroup: 2,
		GlobalPerRouter: 2, Radix: 8, Routing: "minimal"}
)

// Nodes of several GPUs split at node boundaries: the packets between
// GPUs of one node cross its fabric on the node's partition, the others
// the network, all at the unsplit fabric's times, with a switched and a
// fully connected node fabric; a split that cuts a node is refused.
func TestPartitionedNodeFabricMatchesSequential(t *testing.T) {
	mesh := nvswitch
	mesh.Fabric = "mesh"
	for _, node := range []NodeSpec{nvswitch, mesh} {
		node.GPUs = 2
		for _, topo := range []TopologySpec{star, tree, railSplit, dfSplit} {
			want, _ := randomNodeTraffic(t, 8, 0, topo, node)
			for _, k := range []int{2, 4} {
				if topo.Kind == "railfattree" && k == 4 {
					continue
				}
				got, bad := randomNodeTraffic(t, 8, k, topo, node)
				if got != want || len(bad) > 0 {
					t.Fatalf("%s fabric, %s, %d partitions: %v; deliveries\n%s\nwant\n%s", node.Fabric, topo.Kind, k, bad, got, want)
				}
			}
		}
	}
	g, _ := sim.NewGroup(1, 2, 100*sim.Nanosecond)
	f, _ := New(g.Engine(0), 4, link100, sw100, star)
	node := nvswitch
	node.GPUs = 2
	if err := f.UseNodeFabric(node); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Partition(g, []int{0, 1, 1, 1}); err == nil || !strings.Contains(err.Error(), "whole nodes") {
		t.Errorf("a split through a node: err = %v, want a refusal naming whole nodes", err)
	}
	for _, c := range []struct {
		topo TopologySpec
		want string
	}{{railSplit, "whole leaves"}, {dfSplit, "whole groups"}} {
		f, err := New(g.Engine(0), 8, link100, sw100, c.topo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Partition(g, []int{0, 0, 0, 1, 1, 1, 1, 1}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s split through a unit: err = %v, want %q", c.topo.Kind, err, c.want)
		}
	}
}

func TestPartitionRefuses(t *testing.T) {
	g, _ := sim.NewGroup(1, 2, 100*sim.Nanosecond)
	for _, c := range []struct {
		name string
		topo TopologySpec
		of   []int
		flow bool
		want string
	}{
		{"split leaf", tree, []int{0, 0, 0, 1}, false, "whole leaves"},
		{"flow", star, []int{0, 0, 1, 1}, true, "network.model = flow"},
		{"range", star, []int{0, 0, 1, 2}, false, "partition 2 of 2"},
	} {
		f, err := New(g.Engine(0), 4, link100, sw100, c.topo)
		if err != nil {
			t.Fatal(err)
		}
		if c.flow {
			f.UseFlows()
		}
		if _, err := f.Partition(g, c.of); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	slow, _ := sim.NewGroup(1, 2, 200*sim.Nanosecond)
	f, _ := New(slow.Engine(0), 2, link100, sw100, star)
	if _, err := f.Partition(slow, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "lookahead") {
		t.Errorf("lookahead beyond link+switch: err = %v", err)
	}
}

// Out of order (a random spine per packet), the split fabric draws its
// spines from a stream per partition, so times differ from the unsplit
// fabric's; every packet still arrives, and the links' invariants hold.
func TestPartitionedFabricOutOfOrderDeliversEverything(t *testing.T) {
	spread := tree
	spread.InOrder = false
	ids := func(log string) []string {
		var out []string
		for _, f := range strings.Fields(log) {
			if id, _, ok := strings.Cut(f, "@"); ok {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	want, _ := randomTraffic(t, 8, 0, spread)
	got, bad := randomTraffic(t, 8, 2, spread)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if !slices.Equal(ids(got), ids(want)) || len(ids(got)) != 8*40 {
		t.Fatalf("delivered %d packets, want the same %d as unsplit", len(ids(got)), len(ids(want)))
	}
}
