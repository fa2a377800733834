package net

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

var (
	// 4 nodes × 2 rails per leaf... 8 nodes of 2 NICs: 2 leaves per rail.
	railTopo = TopologySpec{Kind: "railfattree", LeafSize: 4, InOrder: true, Rails: 2}
	// 4 endpoints per switch, 4 switches per group, 2 global ports each:
	// up to 9 groups; 6 ports per switch fit a radix of 16.
	dfTopo = TopologySpec{Kind: "dragonfly", LeafSize: 1, InOrder: true, NodesPerRouter: 4, RoutersPerGroup: 4,
		GlobalPerRouter: 2, Radix: 16, Routing: "minimal"}
	// One switch of 16 endpoints per group and one global port: two
	// groups are joined by a single link.
	dfOneLink = TopologySpec{Kind: "dragonfly", LeafSize: 1, InOrder: true, NodesPerRouter: 16, RoutersPerGroup: 1,
		GlobalPerRouter: 1, Radix: 17, Routing: "minimal"}
)

func fabricOf(t *testing.T, n int, topo TopologySpec) *Fabric {
	t.Helper()
	f, err := New(sim.New(1), n, link100, sw100, topo)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func switchHops(hops int) int { return hops - 1 }

// Rail-optimised fat tree: the same rail under one leaf is one switch; the
// same rail under another leaf, or another rail, crosses a spine.
func TestRailFatTreeHops(t *testing.T) {
	f := fabricOf(t, 16, railTopo) // 8 nodes × 2 rails
	ep := func(node, rail int) int { return node*2 + rail }
	for _, c := range []struct {
		name     string
		src, dst int
		switches int
	}{
		{"same rail, same leaf", ep(0, 0), ep(3, 0), 1},
		{"same rail, other leaf", ep(0, 1), ep(5, 1), 3},
		{"other rail, same node", ep(2, 0), ep(2, 1), 3},
		{"other rail, other node", ep(0, 0), ep(1, 1), 3},
	} {
		route, hops := f.route(c.src, c.dst)
		if got := switchHops(hops); got != c.switches {
			t.Errorf("%s: %d switches, want %d", c.name, got, c.switches)
		}
		if c.switches == 1 && !strings.Contains(route[0].name, fmt.Sprintf("node[%d]", c.src)) {
			t.Errorf("%s: first port %s", c.name, route[0].name)
		}
	}
}

// With in_order off, a rail tree spreads one pair's packets over every
// spine (path diversity = leaf_size); in order, over one.
func TestRailFatTreePathDiversity(t *testing.T) {
	for _, c := range []struct {
		inOrder bool
		want    int
	}{{true, 1}, {false, 4}} {
		topo := railTopo
		topo.InOrder = c.inOrder
		f := fabricOf(t, 16, topo)
		seen := map[*port]bool{}
		for range 200 {
			f.sent[0].Pkts++ // the draw is per packet the source sends (Fabric.draw)
			route, _ := f.route(0, 10)
			seen[route[1]] = true
		}
		if len(seen) != c.want {
			t.Errorf("in_order=%v: %d distinct spines, want %d", c.inOrder, len(seen), c.want)
		}
	}
}

// Minimal dragonfly routes take at most local-global-local (3 switches
// with the destination's switch counted once... 4 switch traversals at
// most: source switch, gateway, landing switch, destination switch).
func TestDragonflyMinimalHops(t *testing.T) {
	f := fabricOf(t, 64, dfTopo) // 16 switches: 4 groups
	d := f.tp.(*dragonfly)
	if d.groups != 4 {
		t.Fatalf("%d groups, want 4", d.groups)
	}
	most := 0
	for src := range 64 {
		for dst := range 64 {
			if src == dst {
				continue
			}
			route, hops := f.route(src, dst)
			globals := 0
			for _, pt := range route[:hops] {
				if strings.Contains(pt.name, "global") {
					globals++
				}
			}
			wantGlobals := 0
			if src/16 != dst/16 {
				wantGlobals = 1
			}
			if globals != wantGlobals {
				t.Fatalf("%d→%d: %d global links, want %d", src, dst, globals, wantGlobals)
			}
			if src/4 == dst/4 && hops != 2 {
				t.Fatalf("%d→%d on one switch: %d hops", src, dst, hops)
			}
			most = max(most, switchHops(hops))
		}
	}
	if most != 4 {
		t.Errorf("longest minimal route crosses %d switches, want 4 (source, gateway, landing, destination)", most)
	}
}

// Valiant routing goes through an intermediate group: two global links,
// and every group other than source and destination serves as one.
func TestDragonflyValiantDiversity(t *testing.T) {
	topo := dfTopo
	topo.Routing = "valiant"
	f := fabricOf(t, 96, topo) // 6 groups
	mids := map[string]bool{}
	for range 400 {
		f.sent[0].Pkts++ // the draw is per packet the source sends (Fabric.draw)
		route, hops := f.route(0, 95)
		globals := 0
		for _, pt := range route[:hops] {
			if strings.Contains(pt.name, "global") {
				globals++
				if globals == 1 {
					continue
				}
				mids[pt.name[:strings.Index(pt.name, "]")+1]] = true
			}
		}
		if globals != 2 {
			t.Fatalf("valiant route with %d global links", globals)
		}
	}
	if len(mids) != 4 {
		t.Errorf("%d intermediate groups used, want 4 (6 groups less source and destination): %v", len(mids), mids)
	}
}

// bisectionTime runs a flow-model permutation in which every endpoint of
// the first half sends msg bytes to one endpoint of the second half, and
// returns the time the last message lands.
func bisectionTime(t *testing.T, n int, topo TopologySpec, msg unit.Bytes) sim.Time {
	t.Helper()
	e, f, r := flowFabric(t, n, topo)
	for i := range n / 2 {
		f.Send(testMsg{src: i, dst: n/2 + i, n: msg, id: i})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	last := sim.Time(0)
	for _, at := range r.at {
		last = max(last, at)
	}
	return last
}

// A rail tree has full bisection: half the endpoints send to the other
// half at the link rate. A minimal dragonfly whose halves are joined by
// few global links does not: the global links bound the rate.
func TestBisection(t *testing.T) {
	const msg = 4 * unit.MiB
	alone := wireNs(int(msg))
	tree := bisectionTime(t, 16, railTopo, msg)
	if got := float64(tree) / 1000; got > alone*1.02 {
		t.Errorf("rail tree permutation took %.0f ns, want the link rate's %.0f ns (full bisection)", got, alone)
	}
	// 2 groups of 16 endpoints joined by one global link: 16 flows share it.
	df := bisectionTime(t, 32, dfOneLink, msg)
	if got, want := float64(df)/1000, 16*alone; got < want*0.98 || got > want*1.05 {
		t.Errorf("dragonfly with one global link between its halves took %.0f ns, want about %.0f ns (16 flows on one link)", got, want)
	}
	// 2 groups of 4 switches with 2 global ports each: the groups are
	// joined by all 8 of them, and the destinations spread over them (2
	// flows per link), not the one link a pair of groups needs at least.
	df = bisectionTime(t, 32, dfTopo, msg)
	if got, want := float64(df)/1000, 2*alone; got < want*0.98 || got > want*1.05 {
		t.Errorf("dragonfly with 8 global links between its halves took %.0f ns, want about %.0f ns (2 flows per link)", got, want)
	}
}

// The packet model and the flow model agree on a permutation's time at
// small scale on every topology (docs/network.md, "Topologies").
func TestFlowMatchesPacketOnTopologies(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		topo TopologySpec
	}{{"railfattree", 16, railTopo}, {"dragonfly", 32, dfOneLink}} {
		flow := float64(bisectionTime(t, c.n, c.topo, 256*unit.KiB))
		pkt := float64(packetPermutation(t, c.n, c.topo, 256*unit.KiB))
		if d := flow/pkt - 1; d > 0.05 || d < -0.05 {
			t.Errorf("%s: flow %.0f ns, packet %.0f ns (%.1f%%)", c.name, flow/1000, pkt/1000, 100*d)
		}
	}
}

// packetPermutation is bisectionTime in the packet model: each message is
// sent as 2 KiB packets, interleaved across senders.
func packetPermutation(t *testing.T, n int, topo TopologySpec, msg unit.Bytes) sim.Time {
	t.Helper()
	e, f, sinks := build(t, n, topo)
	id := 0
	for off := unit.Bytes(0); off < msg; off += link100.Payload {
		for i := range n / 2 {
			f.Send(&pkt{src: i, dst: n/2 + i, n: min(link100.Payload, msg-off), id: id})
			id++
		}
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	last := sim.Time(0)
	for _, s := range sinks {
		for _, at := range s.at {
			last = max(last, at)
		}
	}
	if v := f.Invariants(e.Now()); len(v) > 0 {
		t.Fatal(v)
	}
	return last
}

func TestTopologyValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		topo TopologySpec
		n    int
		want string
	}{
		{"rails not dividing endpoints", railTopo, 15, "topology.rails = 2"},
		{"groups exceed global ports", dfTopo, 16 * 10, "global ports"},
		{"radix too small", func() TopologySpec { d := dfTopo; d.Radix = 8; return d }(), 16, "topology.radix = 8"},
		{"unknown routing", func() TopologySpec { d := dfTopo; d.Routing = "adaptive"; return d }(), 16, "topology.routing"},
	} {
		_, err := New(sim.New(1), c.n, link100, sw100, c.topo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

// TestPrintFlowVsPacket prints the table of docs/network.md ("Topologies")
// under -v.
func TestPrintFlowVsPacket(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		topo TopologySpec
		msg  unit.Bytes
	}{{"railfattree 8×2", 16, railTopo, 64 * unit.KiB}, {"railfattree 8×2", 16, railTopo, 1 * unit.MiB},
		{"dragonfly 2 groups × 1 switch × 16 endpoints, 1 global link", 32, dfOneLink, 64 * unit.KiB},
		{"dragonfly 2 groups × 1 switch × 16 endpoints, 1 global link", 32, dfOneLink, 1 * unit.MiB},
		{"dragonfly 2 groups × 4 switches × 4 endpoints, 8 global links", 32, dfTopo, 64 * unit.KiB},
		{"dragonfly 2 groups × 4 switches × 4 endpoints, 8 global links", 32, dfTopo, 1 * unit.MiB}} {
		flow := float64(bisectionTime(t, c.n, c.topo, c.msg)) / 1e6
		pkt := float64(packetPermutation(t, c.n, c.topo, c.msg)) / 1e6
		t.Logf("| %s | %d | %v | %.2f | %.2f | %+.1f%% |", c.name, c.n, c.msg, pkt, flow, 100*(flow/pkt-1))
	}
}

// A group joins each other group by floor(a·h / (groups-1)) global links,
// and routes to the destinations of another group spread over all of them.
func TestDragonflyParallelGlobalLinks(t *testing.T) {
	for _, c := range []struct {
		n, want int
	}{{32, 8}, {64, 2}, {144, 1}} { // 2 groups: all 8 ports; 4 groups: 8/3; 9 groups: one each
		f := fabricOf(t, c.n, dfTopo)
		used := map[*port]bool{}
		for src := range 16 {
			for dst := 16; dst < 32; dst++ {
				route, hops := f.route(src, dst)
				for _, pt := range route[:hops] {
					if strings.Contains(pt.name, "global") {
						used[pt] = true
					}
				}
			}
		}
		if len(used) != c.want {
			t.Errorf("%d endpoints: group 0 reaches group 1 over %d global links, want %d", c.n, len(used), c.want)
		}
	}
}

// network.flow_bundle = aggregate: two flows from group 0 whose
// destinations (16 and 24) both take link 0 of the 8-link bundle to group
// 1 share that link at half the rate each when the links are exact, and
// run at the full link rate when the bundle is one port of 8 links' rate;
// the bundle port is counted by the fabric's invariants.
func TestFlowAggregateBundle(t *testing.T) {
	end := func(aggregate bool) sim.Time {
		e, f, r := flowFabric(t, 32, dfTopo)
		if aggregate {
			f.AggregateBundles()
		}
		f.Send(testMsg{0, 16, 1 << 20, 1})
		f.Send(testMsg{1, 24, 1 << 20, 2})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if v := f.Invariants(e.Now()); len(v) > 0 {
			t.Fatalf("aggregate %v: %v", aggregate, v)
		}
		ports := 0
		for _, pt := range f.ports() {
			if strings.Contains(pt.name, "bundle") {
				ports++
				if aggregate && pt.bytes == 0 && pt.name == "group[0].bundle[1]" {
					t.Errorf("%s carried nothing", pt.name)
				}
			}
		}
		if want := map[bool]int{false: 0, true: 2}[aggregate]; ports != want {
			t.Errorf("aggregate %v: %d bundle ports, want %d", aggregate, ports, want)
		}
		return max(r.at[1], r.at[2])
	}
	exact, agg := end(false), end(true)
	near(t, "aggregate", agg, wireNs(1<<20)+3*100+3*wireNs(2048)) // up, bundle, local, down: 3 switches
	if float64(exact) < 1.9*float64(agg) {
		t.Errorf("exact links %v, aggregate bundle %v: want the exact ones about twice as long (one link shared by two flows)", exact, agg)
	}
}
