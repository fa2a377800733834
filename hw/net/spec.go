package net

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// LinkSpec describes every full-duplex NIC↔switch and switch↔switch link.
type LinkSpec struct {
	Bandwidth unit.Rate  `toml:"bandwidth" doc:"bandwidth per direction" src:"DOC"`
	Latency   sim.Time   `toml:"latency" doc:"propagation delay per link" src:"DEFAULT"`
	Payload   unit.Bytes `toml:"payload" doc:"maximum packet payload (messages are split into packets of at most this)" src:"DEFAULT"`
	Header    unit.Bytes `toml:"header" doc:"per-packet header bytes on the wire" src:"DEFAULT"`
}

// SwitchSpec describes every switch.
type SwitchSpec struct {
	Latency sim.Time `toml:"latency" doc:"last bit in to first bit out, before output-port contention" src:"DOC"`
}

// TopologySpec selects how nodes are joined.
type TopologySpec struct {
	Kind     string `toml:"kind" doc:"star (one switch), fattree (two-level: leaf and spine switches), railfattree (a fat tree whose leaves each serve one rail: NIC g of every node) or dragonfly (groups of fully connected switches, global links between groups)" src:"DOC"`
	LeafSize int    `toml:"leaf_size" doc:"fattree, railfattree: nodes per leaf switch (also the number of spine switches)" src:"DEFAULT"`
	InOrder  bool   `toml:"in_order" doc:"deliver packets of one (src,dst) pair in order; false spreads them over spines" src:"DEFAULT"`
	// Rails is the number of network endpoints (NICs) per node on a rail-
	// optimised fat tree: endpoint e is NIC e mod Rails of node e / Rails.
	Rails int `toml:"rails" doc:"railfattree: NICs per node, one rail each (endpoint e is NIC e mod rails of node e / rails)" src:"DEFAULT"`
	// Dragonfly shape (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-
	// Scalable Dragonfly Topology", ISCA 2008): p endpoints, a-1 local and h
	// global ports per switch.
	NodesPerRouter  int    `toml:"nodes_per_router" doc:"dragonfly: endpoints per switch (p)" src:"DEFAULT"`
	RoutersPerGroup int    `toml:"routers_per_group" doc:"dragonfly: switches per group, all-to-all by local links (a)" src:"DEFAULT"`
	GlobalPerRouter int    `toml:"global_per_router" doc:"dragonfly: global links per switch (h); every pair of groups is joined by at least one" src:"DEFAULT"`
	Radix           int    `toml:"radix" doc:"dragonfly: ports per switch; p + (a-1) + h must fit (Slingshot Rosetta: 64)" src:"DEFAULT"`
	Routing         string `toml:"routing" doc:"dragonfly: minimal (local-global-local at most), valiant (through a random intermediate group) or ugal (minimal unless its first global port's queue, times its hops, exceeds the valiant path's)" src:"DEFAULT"`
}

// Validate reports every invalid field.
func (s LinkSpec) Validate() error {
	var errs []error
	if s.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("link.bandwidth = %v: must be > 0", s.Bandwidth))
	}
	if s.Latency < 0 {
		errs = append(errs, fmt.Errorf("link.latency = %v: must be ≥ 0", s.Latency))
	}
	if s.Payload < 8 || s.Payload > unit.MiB { // a NIC needs room for one 64-bit word (atomics, flags)
		errs = append(errs, fmt.Errorf("link.payload = %v: must be in [8B, 1MiB]", s.Payload))
	}
	if s.Header < 0 || s.Header > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("link.header = %v: must be in [0B, 4KiB]", s.Header))
	}
	return errors.Join(errs...)
}

// Validate reports every invalid field.
func (s SwitchSpec) Validate() error {
	if s.Latency < 0 {
		return fmt.Errorf("switch.latency = %v: must be ≥ 0", s.Latency)
	}
	return nil
}

// Validate reports every invalid field.
func (s TopologySpec) Validate() error {
	var errs []error
	switch s.Kind {
	case "star", "fattree", "railfattree", "dragonfly":
	default:
		errs = append(errs, fmt.Errorf("topology.kind = %q: must be star, fattree, railfattree or dragonfly", s.Kind))
	}
	if s.LeafSize < 1 || s.LeafSize > 4096 {
		errs = append(errs, fmt.Errorf("topology.leaf_size = %d: must be in [1, 4096]", s.LeafSize))
	}
	if s.Kind == "railfattree" && (s.Rails < 1 || s.Rails > 64) {
		errs = append(errs, fmt.Errorf("topology.rails = %d: must be in [1, 64] on a railfattree", s.Rails))
	}
	if s.Kind == "dragonfly" {
		errs = append(errs, s.validateDragonfly())
	}
	return errors.Join(errs...)
}

func (s TopologySpec) validateDragonfly() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"nodes_per_router", s.NodesPerRouter}, {"routers_per_group", s.RoutersPerGroup}, {"global_per_router", s.GlobalPerRouter}, {"radix", s.Radix}} {
		if f.v < 1 || f.v > 1024 {
			errs = append(errs, fmt.Errorf("topology.%s = %d: must be in [1, 1024] on a dragonfly", f.name, f.v))
		}
	}
	if ports := s.NodesPerRouter + s.RoutersPerGroup - 1 + s.GlobalPerRouter; len(errs) == 0 && ports > s.Radix {
		errs = append(errs, fmt.Errorf("topology: a dragonfly switch needs nodes_per_router + routers_per_group - 1 + global_per_router = %d ports, more than topology.radix = %d", ports, s.Radix))
	}
	switch s.Routing {
	case "minimal", "valiant", "ugal":
	default:
		errs = append(errs, fmt.Errorf("topology.routing = %q: must be minimal, valiant or ugal", s.Routing))
	}
	return errors.Join(errs...)
}

// Ordered reports whether the topology delivers the packets of one
// (source, destination) pair in the order they were sent: every pair has
// one path (in_order on a fat tree, minimal routing on a dragonfly).
func (s TopologySpec) Ordered() bool {
	switch s.Kind {
	case "star":
		return true
	case "dragonfly":
		return s.Routing == "minimal"
	}
	return s.InOrder
}

// ValidateFor reports whether the topology can join n endpoints: a
// railfattree needs whole nodes (n a multiple of rails), a dragonfly
// enough global ports for a link between every pair of its groups.
func (s TopologySpec) ValidateFor(n int) error {
	switch s.Kind {
	case "railfattree":
		if s.Rails > 0 && n%s.Rails != 0 {
			return fmt.Errorf("topology.rails = %d: %d network endpoints are not whole nodes of %d NICs", s.Rails, n, s.Rails)
		}
	case "dragonfly":
		groups := s.DragonflyGroups(n)
		if need, have := groups-1, s.RoutersPerGroup*s.GlobalPerRouter; need > have {
			return fmt.Errorf("topology: %d endpoints need %d dragonfly groups, each joined to the %d others, but a group has routers_per_group × global_per_router = %d global ports; raise topology.global_per_router or topology.routers_per_group (within topology.radix = %d)", n, groups, need, have, s.Radix)
		}
	}
	return nil
}

// DragonflyGroups returns the groups a dragonfly of n endpoints has.
func (s TopologySpec) DragonflyGroups(n int) int {
	per := s.NodesPerRouter * s.RoutersPerGroup
	if per < 1 {
		return 0
	}
	return (n + per - 1) / per
}
