package cluster

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/sim"
)

// MaxPartitions returns the most partitions n endpoints of spec can be
// split into: one per partition unit (partitionUnit).
func MaxPartitions(spec Spec, n int) int {
	u := partitionUnit(spec)
	return (n + u - 1) / u
}

// partitionUnit is the endpoints a partition holds whole: a leaf switch
// on a fat tree (whose up-ports it serves), the leaves of every rail that
// serve the same leaf_size nodes on a rail-optimised fat tree, a group on
// a dragonfly (whose local and global ports it serves), a node (one
// endpoint per GPU, whose fabric, peer ports and memories its GPUs
// share), and the least run of endpoints that is both.
func partitionUnit(spec Spec) int {
	u, t := 1, spec.Topology
	switch t.Kind {
	case "fattree":
		u = max(1, t.LeafSize)
	case "railfattree":
		u = max(1, t.LeafSize*t.Rails)
	case "dragonfly":
		u = max(1, t.NodesPerRouter*t.RoutersPerGroup)
	}
	if g := spec.Node.GPUs; g > 1 {
		u = lcm(u, g)
	}
	return u
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// Lookahead returns the least simulated time anything one node does takes
// to reach another: a packet crosses at least one link and one switch
// before it reaches a port another partition serves.
func Lookahead(spec Spec) sim.Duration { return spec.Link.Latency + spec.Switch.Latency }

// PartitionOf returns the partition of each of n endpoints split into
// k: contiguous ranges of whole partition units (leaf switches, nodes of
// several GPUs; a star of one-GPU nodes counts each node as a unit),
// balanced to within one unit.
func PartitionOf(spec Spec, n, k int) []int {
	units, per := MaxPartitions(spec, n), partitionUnit(spec)
	of := make([]int, n)
	for i := range of {
		of[i] = (i / per) * k / units
	}
	return of
}

// PartitionUnitName says what a partition holds whole, for messages.
func PartitionUnitName(spec Spec) string {
	switch spec.Topology.Kind {
	case "fattree":
		if spec.Node.GPUs > 1 {
			return "whole leaf switches and whole nodes"
		}
		return "whole leaf switches"
	case "railfattree":
		return "whole leaf switches of every rail: topology.leaf_size nodes"
	case "dragonfly":
		return "whole dragonfly groups: topology.nodes_per_router × topology.routers_per_group GPUs"
	}
	return "whole nodes"
}

// CanPartition reports why a cluster of spec cannot be split into
// partitions (nil: it can): they need a positive lookahead and the packet
// network.
func CanPartition(spec Spec) error {
	if la := Lookahead(spec); la <= 0 {
		return fmt.Errorf("link.latency + switch.latency = %v leaves partitions no lookahead; must be > 0", la)
	}
	if spec.Network.Model != net.ModelPacket {
		return fmt.Errorf("network.model = %s shares links max-min fairly across the whole fabric; partitions need network.model = packet", spec.Network.Model)
	}
	return nil
}

// NewPartitioned builds n nodes from spec split into k partitions run in
// parallel (sim.Group, docs/parallel.md): node i's memory, CPU, GPU, CP and
// NIC live on its partition's engine, and the fabric is split so each port
// is served by one partition (net.Fabric.Partition). The lookahead is
// Lookahead(spec), which must be positive. The network must be the packet
// model. Run the cluster with Run; the end-of-run invariants are checked
// once every partition is idle.
func NewPartitioned(seed uint64, spec Spec, n, k int, functional bool) (*Cluster, error) {
	if most := MaxPartitions(spec, n); k < 1 || k > most {
		return nil, fmt.Errorf("run.partitions = %d: must be in [1, %d] for %d GPUs on a %s (a partition holds %s)", k, most, n, spec.Topology.Kind, PartitionUnitName(spec))
	}
	if err := CanPartition(spec); err != nil {
		return nil, fmt.Errorf("run.partitions = %d: %w", k, err)
	}
	if g := max(1, spec.Node.GPUs); n%g != 0 {
		return nil, fmt.Errorf("run.partitions = %d: %d GPUs are not whole nodes of node.gpus = %d: a partitioned run takes whole nodes; use run.partitions=1 (node.placement places fewer GPUs on one engine)", k, n, g)
	}
	g, err := sim.NewGroup(seed, k, Lookahead(spec))
	if err != nil {
		return nil, err
	}
	c, err := newFabric(g.Engine(0), spec, n)
	if err != nil {
		return nil, err
	}
	of := PartitionOf(spec, n, k)
	shards, err := c.Fabric.Partition(g, of)
	if err != nil {
		return nil, err
	}
	c.Group, c.Part = g, of
	c.buildNodes(functional, func(i int) *sim.Engine { return g.Engine(of[i]) }, func(i int) *net.Fabric { return shards[of[i]] })
	g.AddEndCheck(c.Invariants)
	return c, nil
}

// Run runs the simulation to its end: the engine's Run, or the Group's
// for a partitioned cluster.
func (c *Cluster) Run() error {
	if c.Group != nil {
		return c.Group.Run()
	}
	return c.Engine.Run()
}

// Now returns the latest time the run has reached, over every partition.
func (c *Cluster) Now() sim.Time {
	if c.Group != nil {
		return c.Group.Now()
	}
	return c.Engine.Now()
}

// Events returns the events run so far, over every partition.
func (c *Cluster) Events() uint64 {
	if c.Group != nil {
		return c.Group.Events()
	}
	return c.Engine.Events()
}

// Close releases the coroutines of processes that never finished (the
// GPUs' command processors, for example), on every partition, and the
// nodes' memories (their large buffers are mapped outside the Go heap and
// go back to the system at once): the cluster must not be used after.
func (c *Cluster) Close() {
	if c.Group != nil {
		c.Group.Close()
	} else {
		c.Engine.Close()
	}
	for _, nd := range c.Nodes {
		nd.Mem.Release()
	}
}
