package exp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// maxPartitions bounds run.partitions: the engines run on at most as many
// threads as cores (sim.Group.Run); beyond a few dozen engines per thread
// their per-window overhead outweighs what smaller engines gain in cache.
const maxPartitions = 1024

// CheckRun refuses, before any work, a configuration the experiment
// cannot run as asked: a NIC without a strategy it always runs
// (Experiment.Hardware), GPU counts that are not whole nodes of node.gpus
// (Experiment.Ranks), run.partitions > 1 where the experiment runs on one
// engine, or where its own checks (Experiment.Check, Experiment.Partitions)
// fail.
func (e Experiment) CheckRun(cfg Config) error {
	if err := e.Hardware(cfg.Spec, cfg.Run.Preset); err != nil {
		return err
	}
	if err := e.wholeNodes(cfg); err != nil {
		return err
	}
	if err := e.topologyFits(cfg); err != nil {
		return err
	}
	if e.Check != nil {
		if err := e.Check(cfg); err != nil {
			return err
		}
	}
	k := cfg.Run.Partitions
	if k <= 1 {
		return nil
	}
	if e.Partitions == nil {
		return fmt.Errorf("run.partitions = %d: experiment %s runs on one engine (only allreduce runs partitioned); use run.partitions=1", k, e.Name)
	}
	return e.Partitions(cfg)
}

// allreducePartitions checks run.partitions against the allreduce sweep:
// every strategy must have a partitionable implementation, the network
// must be the packet model with a positive link + switch latency (the
// lookahead), and every node count must have at least as many leaves.
func allreducePartitions(cfg Config) error {
	k := cfg.Run.Partitions
	if k <= 1 {
		return nil
	}
	var errs []error
	for _, name := range cfg.Allreduce.Strategies {
		s, err := strategy.Parse(name)
		if err == nil && !workload.AllreduceAlgPartitionable(s, cfg.Allreduce.Algorithm) {
			errs = append(errs, fmt.Errorf("run.partitions = %d: the %s allreduce shares run-wide state across nodes and runs on one engine; drop %s from allreduce.strategies or use run.partitions=1", k, s, s))
		}
	}
	if cfg.Network.Model != net.ModelPacket {
		errs = append(errs, fmt.Errorf("run.partitions = %d: network.model = %s shares links max-min fairly across the whole fabric; partitions need network.model=packet", k, cfg.Network.Model))
	}
	if la := cluster.Lookahead(cfg.Spec); la <= 0 {
		errs = append(errs, fmt.Errorf("run.partitions = %d: link.latency + switch.latency = %v gives partitions no lookahead; must be > 0", k, la))
	}
	for _, n := range cfg.Allreduce.Nodes {
		if most := cluster.MaxPartitions(cfg.Spec, n); k > most {
			errs = append(errs, fmt.Errorf("run.partitions = %d: must be in [1, %d] for allreduce.nodes = %d on a %s (a partition holds %s)", k, most, n, cfg.Topology.Kind, cluster.PartitionUnitName(cfg.Spec)))
			break
		}
	}
	return errors.Join(errs...)
}

// newPartitionedRun is newRun on cfg.Run.Partitions engines run in
// parallel (cluster.NewPartitioned); one partition is newRun itself.
// With run.partitions = 0 the engines are workload.AutoPartitions' choice
// for the cores env leaves the point (one when tracing); either way they
// run on at most env.Cores threads (sim.Group.SetThreads).
func newPartitionedRun(cfg Config, env Env, label string, n int, s strategy.Strategy) (*cluster.Cluster, error) {
	spec := cfg.Spec
	if d, err := strategy.Lookup(string(s)); err == nil {
		spec = d.Adjust(spec)
	}
	k := cfg.Run.Partitions
	if k == 0 && env.Tracer == nil {
		k = workload.AutoPartitions(spec, n, cfg.Run.Functional, s, env.Cores)
		if !workload.AllreduceAlgPartitionable(s, cfg.Allreduce.Algorithm) {
			k = 1 // the one-sided rhd runs on one engine
		}
	}
	if k <= 1 || n%max(1, spec.Node.GPUs) != 0 {
		// Fewer GPUs than whole nodes run placed on one engine
		// (node.placement); CheckRun refused run.partitions > 1 for them.
		return newRun(cfg, env, label, n, s)
	}
	if env.Tracer != nil {
		return nil, fmt.Errorf("run.partitions = %d: a trace is written by one engine; drop --trace or use run.partitions=1", k)
	}
	if err := wholeNodesOf(spec, label, n); err != nil {
		return nil, err
	}
	c, err := cluster.NewPartitioned(cfg.Run.Seed, spec, n, k, cfg.Run.Functional)
	if err == nil {
		c.SetCheckInvariants(cfg.Run.CheckInvariants)
		// The engines run on no more threads than the cores the sweep
		// gives the point (0: unknown, GOMAXPROCS).
		c.Group.SetThreads(env.Cores)
	}
	return c, err
}

// wholeNodes refuses, with run.partitions > 1, GPU counts of the
// experiment (Experiment.Ranks) that are not whole nodes of node.gpus: a
// partition holds whole nodes. On one engine such counts are placed on
// whole nodes by node.placement (PlacementNote).
func (e Experiment) wholeNodes(cfg Config) error {
	g := max(1, cfg.Node.GPUs)
	if e.Ranks == nil || g == 1 || cfg.Run.Partitions <= 1 {
		return nil
	}
	field, counts := e.Ranks(cfg)
	for _, n := range counts {
		if n%g != 0 {
			return fmt.Errorf("%s: %d GPUs are not whole nodes of node.gpus = %d (preset %s); run.partitions = %d needs whole nodes: use multiples of %d or run.partitions=1", field, n, g, cfg.Run.Preset, cfg.Run.Partitions, g)
		}
	}
	return nil
}

// placed reports whether the experiment runs a cluster of fewer GPUs
// than whole nodes of node.gpus (Experiment.Ranks), which node.placement
// places.
func (e Experiment) placed(cfg Config) bool {
	g := max(1, cfg.Node.GPUs)
	if e.Ranks == nil || g == 1 {
		return false
	}
	_, counts := e.Ranks(cfg)
	for _, n := range counts {
		if n%g != 0 {
			return true
		}
	}
	return false
}

// PlacementNote is the report's line saying where node.placement put the
// ranks of a run on fewer GPUs than whole nodes; empty when the
// experiment runs whole nodes.
func (e Experiment) PlacementNote(cfg Config) string {
	if !e.placed(cfg) {
		return ""
	}
	return placementText(cfg)
}

// placementText says where node.placement puts the ranks of a run on
// fewer GPUs than whole nodes of cfg's node.gpus.
func placementText(cfg Config) string {
	g := cfg.Node.GPUs
	if cfg.Node.Placement == "fabric" {
		return fmt.Sprintf("node.placement = fabric: the run's GPUs are fewer than whole nodes of node.gpus = %d, so rank r sits on GPU r mod %d of node r / %d: ranks of one node communicate over the intra-node GPU fabric, the nodes' other GPUs are idle (node.placement = rails puts each rank on its own node)", g, g, g)
	}
	return fmt.Sprintf("node.placement = rails: the run's GPUs are fewer than whole nodes of node.gpus = %d, so rank r sits on GPU 0 of node r: every pair communicates inter-node, NIC to NIC over the network, the nodes' other GPUs are idle (node.placement = fabric packs ranks onto one node's GPU fabric)", g)
}

// topologyFits refuses GPU counts of the experiment (Experiment.Ranks)
// the topology cannot join: a dragonfly with too few global ports for a
// link between every pair of its groups (net.TopologySpec.ValidateFor).
func (e Experiment) topologyFits(cfg Config) error {
	if e.Ranks == nil {
		return nil
	}
	field, counts := e.Ranks(cfg)
	for _, n := range counts {
		_, total := cfg.Node.Slots(n)
		if err := cfg.Topology.ValidateFor(total); err != nil {
			return fmt.Errorf("%s: %d GPUs: %w", field, total, err)
		}
	}
	return nil
}

// machineNodes is Experiment.Ranks for an experiment whose list counts
// machine nodes of node.gpus GPUs each.
func machineNodes(field string, nodes func(Config) []int) func(Config) (string, []int) {
	return func(cfg Config) (string, []int) {
		var out []int
		for _, n := range nodes(cfg) {
			out = append(out, n*max(1, cfg.Node.GPUs))
		}
		return field, out
	}
}

// fixedRanks is Experiment.Ranks for an experiment that runs on n GPUs.
func fixedRanks(name string, n int) func(Config) (string, []int) {
	return func(Config) (string, []int) { return name + " (on " + fmt.Sprint(n) + " GPUs)", []int{n} }
}
