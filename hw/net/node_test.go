package net

import (
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
