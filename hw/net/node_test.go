package net

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

var nvswitch = NodeSpec{GPUs: 4, Fabric: "switch", Bandwidth: unit.Rate(400e9), Latency: 500 * sim.Nanosecond, CopyEngines: 1}

func buildNodes(t *testing.T, n int, topo TopologySpec, node NodeSpec, flows bool) (*sim.Engine, *Fabric, []*sink) {
	t.Helper()
	e, f, sinks := build(t, n, topo)
	if err := f.UseNodeFabric(node); err != nil {
		t.Fatal(err)
	}
	if flows {
		f.UseFlows()
	}
	return e, f, sinks
}

// Two GPUs of one node exchange a packet over their fabric: serialised
// at the fabric's rate on the way to the switch and from it, plus the
// fabric's latency; the network's links carry nothing.
func TestIntraNodePacketCrossesTheGPUFabric(t *testing.T) {
	e, f, sinks := buildNodes(t, 8, star, nvswitch, false)
	f.Send(&pkt{src: 1, dst: 2, n: 2048})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ser := sim.FromPicoseconds(float64(2048+64) * unit.Rate(400e9).PerByte())
	if want := 2*ser + 500*sim.Nanosecond; sinks[2].at[0] != want {
		t.Fatalf("arrival %v, want two serialisations at 400 GB/s plus 500ns = %v", sinks[2].at[0], want)
	}
	if bytes, _ := f.Stats(); bytes != 0 {
		t.Errorf("%d bytes on the network for an intra-node packet", bytes)
	}
	if v := f.Invariants(e.Now()); len(v) > 0 {
		t.Fatal(v)
	}
}

// A pair on different nodes uses the network as before.
func TestInterNodePacketUsesTheNetwork(t *testing.T) {
	e, f, sinks := buildNodes(t, 8, star, nvswitch, false)
	f.Send(&pkt{src: 1, dst: 6, n: 2048})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ser := sim.Time(2112 * 80)
	if want := 2*ser + 100*sim.Nanosecond; sinks[6].at[0] != want {
		t.Fatalf("arrival %v, want the network's %v", sinks[6].at[0], want)
	}
}

// Through a switch, two GPUs sending to a third share its down-link; on a
// mesh each pair has its own link and neither waits.
func TestIntraNodeContention(t *testing.T) {
	for _, c := range []struct {
		fabric string
		shared bool
	}{{"switch", true}, {"mesh", false}} {
		node := nvswitch
		node.Fabric = c.fabric
		for _, flows := range []bool{false, true} {
			e, f, sinks := buildNodes(t, 4, star, node, flows)
			f.Send(&pkt{src: 0, dst: 3, n: 1 << 20})
			f.Send(&pkt{src: 1, dst: 3, n: 1 << 20})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			last := max(sinks[3].at[0], sinks[3].at[1])
			alone := float64(1<<20+64) / 400e9 * 1e12 // ps
			got := float64(last) / alone
			if c.shared && got < 1.9 {
				t.Errorf("%s (flows %v): two 1 MiB packets into one GPU took %.2f× one, want about 2 (shared down-link)", c.fabric, flows, got)
			}
			if !c.shared && got > 1.5 {
				t.Errorf("%s (flows %v): two 1 MiB packets on separate links took %.2f× one, want about 1", c.fabric, flows, got)
			}
		}
	}
}

func TestNodeFabricValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		topo TopologySpec
		node NodeSpec
		want string
	}{
		{"partial node", 6, star, nvswitch, "not whole nodes"},
		{"rails differ from GPUs", 8, TopologySpec{Kind: "railfattree", LeafSize: 2, InOrder: true, Rails: 2}, nvswitch, "topology.rails = 2"},
		{"unknown fabric", 8, star, NodeSpec{GPUs: 4, Fabric: "ring", Bandwidth: 1e9}, "node.fabric"},
		{"no bandwidth", 8, star, NodeSpec{GPUs: 4, Fabric: "mesh"}, "node.fabric_bandwidth"},
	} {
		f, err := New(sim.New(1), c.n, link100, sw100, c.topo)
		if err == nil {
			err = f.UseNodeFabric(c.node)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

// NodeSpec.Slots places fewer ranks than whole nodes: rails one per node
// on GPU 0, fabric filling a node's GPUs first; whole nodes stay as
// they are.
func TestNodeSpecSlots(t *testing.T) {
	for _, c := range []struct {
		place string
		n     int
		slots []int
		total int
	}{
		{PlaceRails, 2, []int{0, 4}, 8},
		{PlaceFabric, 2, []int{0, 1}, 4},
		{PlaceRails, 3, []int{0, 4, 8}, 12},
		{PlaceFabric, 6, []int{0, 1, 2, 3, 4, 5}, 8},
		{"", 2, []int{0, 4}, 8}, // empty is rails
		{PlaceRails, 8, nil, 8}, // whole nodes: every GPU
		{PlaceFabric, 4, nil, 4},
	} {
		s := nvswitch
		s.Placement = c.place
		slots, total := s.Slots(c.n)
		if !slices.Equal(slots, c.slots) || total != c.total {
			t.Errorf("%q, %d ranks: slots %v of %d, want %v of %d", c.place, c.n, slots, total, c.slots, c.total)
		}
	}
}

// Two ranks placed on a machine of 2 nodes × 4 GPUs: on GPU 0 of each
// node (rails) a packet crosses the network, and on GPUs 0 and 1 of one
// node (fabric) the node's GPU fabric, with the network idle; the idle
// slots have no endpoint and the invariants hold.
func TestPlacedEndpointsRouteByTheirSlots(t *testing.T) {
	ser := sim.FromPicoseconds(float64(2048+64) * unit.Rate(400e9).PerByte())
	for _, c := range []struct {
		slots   []int
		want    sim.Time
		network bool
	}{
		{[]int{0, 4}, 2*sim.Time(2112*80) + 100*sim.Nanosecond, true},
		{[]int{0, 1}, 2*ser + 500*sim.Nanosecond, false},
	} {
		e := sim.New(1)
		f, err := New(e, 8, link100, sw100, star)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.UseNodeFabric(nvswitch); err != nil {
			t.Fatal(err)
		}
		if err := f.Place(c.slots); err != nil {
			t.Fatal(err)
		}
		if f.Endpoints() != 2 || f.SameNode(0, 1) == c.network {
			t.Fatalf("slots %v: %d endpoints, same node %v", c.slots, f.Endpoints(), f.SameNode(0, 1))
		}
		sinks := []*sink{{e: e}, {e: e}}
		f.Attach(0, sinks[0])
		f.Attach(1, sinks[1])
		f.Send(&pkt{src: 0, dst: 1, n: 2048})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if len(sinks[1].got) != 1 || sinks[1].at[0] != c.want {
			t.Fatalf("slots %v: arrivals %v, want one at %v", c.slots, sinks[1].at, c.want)
		}
		if bytes, _ := f.Stats(); (bytes > 0) != c.network {
			t.Errorf("slots %v: %d bytes on the network", c.slots, bytes)
		}
		if pk, _ := f.Delivered(1); pk != 1 {
			t.Errorf("slots %v: endpoint 1 delivered %d packets, want 1", c.slots, pk)
		}
		if v := f.Invariants(e.Now()); len(v) > 0 {
			t.Fatal(v)
		}
	}
	f, _ := New(sim.New(1), 8, link100, sw100, star)
	if err := f.Place([]int{0, 0}); err == nil {
		t.Error("two endpoints on one slot accepted")
	}
}
