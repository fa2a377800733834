package net

import (
	"fmt"
)

// maxHops bounds the output ports one route crosses: a dragonfly's Valiant
// route (endpoint up, local, global, local, global, local, endpoint down).
const maxHops = 8

// topology routes packets over the switches of a railfattree or a
// dragonfly; the star and the fat tree keep their own code in net.go,
// whose results the golden tests pin.
type topology interface {
	route(f *Fabric, src, dst int) (route [maxHops]*port, hops int)
	ports() []*port
	// own gives each switch port to the partition of[e] of the endpoints
	// under its switch (Fabric.Partition), refusing a split that cuts
	// the unit whose ports one partition must serve.
	own(of []int) error
}

// buildTopology adds the switches of the railfattree and dragonfly kinds.
func (f *Fabric) buildTopology(n int) error {
	if err := f.topo.ValidateFor(n); err != nil {
		return err
	}
	switch f.topo.Kind {
	case "railfattree":
		f.tp = newRailTree(n, f.topo)
	case "dragonfly":
		f.tp = newDragonfly(n, f.topo)
	}
	return nil
}

// railTree is a rail-optimised two-level fat tree: endpoint e is NIC
// e mod R of node e / R; each leaf switch serves leafSize nodes of one
// rail, and every leaf has one up-link to each of leafSize spines that
// all leaves share. Traffic between the same rail of two nodes under one
// leaf never reaches a spine; everything else crosses one spine.
type railTree struct {
	rails, leafSize, leavesPerRail int
	inOrder                        bool
	leafUp                         [][]*port // leaf → spine s
	spineDn                        [][]*port // spine s → leaf
}

func newRailTree(n int, t TopologySpec) *railTree {
	nodes := n / t.Rails
	rt := &railTree{rails: t.Rails, leafSize: t.LeafSize, leavesPerRail: (nodes + t.LeafSize - 1) / t.LeafSize, inOrder: t.InOrder}
	leaves := rt.rails * rt.leavesPerRail
	for l := range leaves {
		var ups []*port
		for s := range t.LeafSize {
			ups = append(ups, &port{name: fmt.Sprintf("rail[%d].leaf[%d].up[%d]", l/rt.leavesPerRail, l%rt.leavesPerRail, s)})
		}
		rt.leafUp = append(rt.leafUp, ups)
	}
	for s := range t.LeafSize {
		var dns []*port
		for l := range leaves {
			dns = append(dns, &port{name: fmt.Sprintf("spine[%d].down[rail %d leaf %d]", s, l/rt.leavesPerRail, l%rt.leavesPerRail)})
		}
		rt.spineDn = append(rt.spineDn, dns)
	}
	return rt
}

// leaf returns the leaf switch of endpoint e.
func (rt *railTree) leaf(e int) int {
	node, rail := e/rt.rails, e%rt.rails
	return rail*rt.leavesPerRail + node/rt.leafSize
}

func (rt *railTree) route(f *Fabric, src, dst int) (route [maxHops]*port, hops int) {
	route[0] = f.up[src]
	ls, ld := rt.leaf(src), rt.leaf(dst)
	if ls == ld {
		route[1] = f.down[dst]
		return route, 2
	}
	s := (dst / rt.rails) % rt.leafSize
	if !rt.inOrder {
		s = f.draw(src, rt.leafSize)
	}
	route[1], route[2], route[3] = rt.leafUp[ls][s], rt.spineDn[s][ld], f.down[dst]
	return route, 4
}

// own gives each leaf's up-ports and the spines' down-ports to it to the
// partition of the leaf's endpoints: a partition holds whole leaves of
// every rail (leaf_size nodes with all their NICs), as a fat tree's, so a
// packet crosses to another partition only at a spine.
func (rt *railTree) own(of []int) error {
	for l := range rt.leafUp {
		rail, first := l/rt.leavesPerRail, l%rt.leavesPerRail*rt.leafSize
		p := -1
		for node := first; node < first+rt.leafSize && node*rt.rails+rail < len(of); node++ {
			q := of[node*rt.rails+rail]
			if p >= 0 && q != p {
				return fmt.Errorf("net: rail %d's leaf switch %d has nodes in partitions %d and %d: a partition must hold whole leaves", rail, l%rt.leavesPerRail, p, q)
			}
			p = q
		}
		if p < 0 {
			continue // a leaf with no node (its rail's last, past the nodes)
		}
		for s := range rt.leafUp[l] {
			rt.leafUp[l][s].owner = p
			rt.spineDn[s][l].owner = p
		}
	}
	return nil
}

func (rt *railTree) ports() []*port {
	var all []*port
	for _, l := range rt.leafUp {
		all = append(all, l...)
	}
	for _, s := range rt.spineDn {
		all = append(all, s...)
	}
	return all
}

// dragonfly is groups of a switches, all-to-all inside a group by local
// links, every pair of groups joined by the same number of global links,
// as many as the groups' a·h global ports allow (pairs = floor(a·h /
// (groups-1)), at least one); each switch serves p endpoints. A group
// with fewer peers than global ports bundles parallel links to each (a
// two-group machine joins its groups by a·h links, not one, so a
// neighbour exchange across the boundary is not squeezed through one
// port). The j-th link from group g to group g2 leaves from slot
// k = q + j·(groups-1) of group g, q = g2 (or g2-1 past g): switch k / h,
// its port k mod h; it lands on the j-th link from g2 to g, so both ends
// are fixed by the group pair and j. Routes pick j from the destination
// endpoint (j = dst mod pairs: one path per endpoint pair, so minimal
// routing stays in order, and the destinations of a group spread over
// the links as destination-mod-k routing spreads them over a fat tree's
// spines).
type dragonfly struct {
	p, a, h, groups int
	pairs           int // global links between every pair of groups
	routing         string
	local           [][]*port // switch r → switch j of its group (nil for j = r's own index)
	global          [][]*port // switch r's global port k
	// bundle, when the flow model aggregates bundles (AggregateBundles),
	// holds group g's one port to group g2 at g*groups+g2, carrying
	// every route's global hop between them; nil otherwise.
	bundle []*port
}

// AggregateBundles makes, in the flow model, each dragonfly group pair's
// bundle of parallel global links one port of the bundle's whole rate
// (network.flow_bundle = aggregate): the pair's flows share it max-min
// fairly instead of each taking link dst mod k. The local hops stay those
// of link dst mod k (its gateway and landing switches). Call it after
// UseFlows, before the first Send; without bundles (one link per pair, or
// another topology) it changes nothing.
func (f *Fabric) AggregateBundles() {
	d, ok := f.tp.(*dragonfly)
	if !ok || d.pairs < 2 {
		return
	}
	d.bundle = make([]*port, d.groups*d.groups)
	for g := range d.groups {
		for g2 := range d.groups {
			if g != g2 {
				d.bundle[g*d.groups+g2] = &port{name: fmt.Sprintf("group[%d].bundle[%d]", g, g2), capacity: float64(d.pairs) / f.perByte}
			}
		}
	}
}

func newDragonfly(n int, t TopologySpec) *dragonfly {
	d := &dragonfly{p: t.NodesPerRouter, a: t.RoutersPerGroup, h: t.GlobalPerRouter, groups: t.DragonflyGroups(n), routing: t.Routing}
	d.pairs = 1
	if d.groups > 1 {
		d.pairs = max(1, d.a*d.h/(d.groups-1))
	}
	for r := range d.groups * d.a {
		loc := make([]*port, d.a)
		for j := range d.a {
			if j != r%d.a {
				loc[j] = &port{name: fmt.Sprintf("group[%d].switch[%d].local[%d]", r/d.a, r%d.a, j)}
			}
		}
		d.local = append(d.local, loc)
		glob := make([]*port, d.h)
		for k := range d.h {
			glob[k] = &port{name: fmt.Sprintf("group[%d].switch[%d].global[%d]", r/d.a, r%d.a, k)}
		}
		d.global = append(d.global, glob)
	}
	return d
}

// gateway returns the switch of group g that holds its j-th global link
// to group g2, and the index of that port.
func (d *dragonfly) gateway(g, g2, j int) (sw, k int) {
	slot := g2
	if g2 > g {
		slot = g2 - 1
	}
	slot += j * (d.groups - 1)
	return g*d.a + slot/d.h, slot % d.h
}

// link returns which of the parallel global links between two groups a
// route to endpoint dst takes.
func (d *dragonfly) link(dst int) int { return dst % d.pairs }

// hop appends the ports from switch r to switch to, both in one group.
func (d *dragonfly) local1(route *[maxHops]*port, hops *int, r, to int) {
	if r != to {
		route[*hops] = d.local[r][to%d.a]
		*hops++
	}
}

// toGroup appends the ports from switch r to the switch of group g where
// the j-th global link from r's group lands, and returns that switch.
func (d *dragonfly) toGroup(route *[maxHops]*port, hops *int, r, g, j int) int {
	gw, k := d.gateway(r/d.a, g, j)
	d.local1(route, hops, r, gw)
	route[*hops] = d.global[gw][k]
	if d.bundle != nil {
		route[*hops] = d.bundle[r/d.a*d.groups+g]
	}
	*hops++
	land, _ := d.gateway(g, r/d.a, j)
	return land
}

func (d *dragonfly) route(f *Fabric, src, dst int) (route [maxHops]*port, hops int) {
	route[0], hops = f.up[src], 1
	rs, rd := src/d.p, dst/d.p
	gs, gd := rs/d.a, rd/d.a
	j := d.link(dst)
	if gs != gd && d.groups > 2 && d.routing != "minimal" {
		mid := f.draw(src, d.groups-2) // a group other than gs and gd
		for _, g := range []int{min(gs, gd), max(gs, gd)} {
			if mid >= g {
				mid++
			}
		}
		if d.routing == "valiant" || d.preferValiant(f, rs, gd, mid, j) {
			r := d.toGroup(&route, &hops, rs, mid, j)
			r = d.toGroup(&route, &hops, r, gd, j)
			d.local1(&route, &hops, r, rd)
			route[hops] = f.down[dst]
			return route, hops + 1
		}
	}
	r := rs
	if gs != gd {
		r = d.toGroup(&route, &hops, rs, gd, j)
	}
	d.local1(&route, &hops, r, rd)
	route[hops] = f.down[dst]
	return route, hops + 1
}

// preferValiant is UGAL-L's choice at the source switch: the minimal
// path's first global port's backlog times its hop count against the
// Valiant path's (Singh, "Load-Balanced Routing in Interconnection
// Networks", 2005). The backlog is the time the port's server is busy
// ahead of now (packet model) or its active flows (flow model); j is the
// parallel link either path takes out of the source's group.
func (d *dragonfly) preferValiant(f *Fabric, rs, gd, mid, j int) bool {
	gs := rs / d.a
	backlog := func(g int) int64 {
		gw, k := d.gateway(gs, g, j)
		pt := d.global[gw][k]
		if d.bundle != nil {
			pt = d.bundle[gs*d.groups+g]
		}
		if f.fl != nil {
			return int64(len(pt.flows))
		}
		now, free := f.e.Now(), pt.free
		if pt.setAt == now {
			free = pt.before // without this picosecond's packets (port.before)
		}
		return int64(max(0, free-now))
	}
	return backlog(gd)*3 > backlog(mid)*5 // minimal: up to 3 switch hops; Valiant: up to 5
}

// own gives every switch's local and global ports to the partition of
// its group's endpoints: a partition holds whole groups, so a packet
// crosses to another partition only over a global link (UGAL's look at
// its own group's global ports stays inside its partition).
func (d *dragonfly) own(of []int) error {
	per := d.p * d.a
	for g := range d.groups {
		p := -1
		for e := g * per; e < min(len(of), (g+1)*per); e++ {
			if p >= 0 && of[e] != p {
				return fmt.Errorf("net: dragonfly group %d has nodes in partitions %d and %d: a partition must hold whole groups", g, p, of[e])
			}
			p = of[e]
		}
		if p < 0 {
			continue
		}
		for r := g * d.a; r < (g+1)*d.a; r++ {
			for _, pt := range d.local[r] {
				if pt != nil {
					pt.owner = p
				}
			}
			for _, pt := range d.global[r] {
				pt.owner = p
			}
		}
		for g2 := range d.groups {
			if d.bundle != nil && g2 != g {
				d.bundle[g*d.groups+g2].owner = p
			}
		}
	}
	return nil
}

func (d *dragonfly) ports() []*port {
	var all []*port
	for r := range d.local {
		for _, pt := range d.local[r] {
			if pt != nil {
				all = append(all, pt)
			}
		}
		all = append(all, d.global[r]...)
	}
	for _, pt := range d.bundle {
		if pt != nil {
			all = append(all, pt)
		}
	}
	return all
}
