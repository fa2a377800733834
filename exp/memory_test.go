package exp

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
)

// The estimate names the parameter that decides it, grows with it, and
// counts one simulation per worker.
func TestEstimateMemory(t *testing.T) {
	base, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	base.Run.Parallel = 1
	cases := []struct {
		name      string
		edit      func(c *Config)
		param     string
		atLeast   float64
		atMost    float64
		simsAtOne int
	}{
		{"16GiB CPU allreduce on 2 nodes", func(c *Config) {
			c.Allreduce.Size, c.Allreduce.Nodes, c.Allreduce.Strategies = 16*unit.GiB, []int{2}, []string{"CPU"}
		}, "allreduce.size", 2 * 16 * (1 << 30) * 2, 2 * 16 * (1 << 30) * 3, 1},
		{"65536 nodes payload-free", func(c *Config) {
			c.Allreduce.Nodes, c.Run.Functional, c.Allreduce.Strategies = []int{65536}, false, []string{"CPU"}
		}, "allreduce.nodes", 65536.0 * 65536 * 64, 65536.0 * 65536 * 512, 1},
		{"65536 nodes payload-free, GDS (a flag line per step and node)", func(c *Config) {
			c.Allreduce.Nodes, c.Run.Functional, c.Allreduce.Strategies = []int{65536}, false, []string{"GDS"}
		}, "allreduce.nodes", 65536.0 * 65536 * 512, 65536.0 * 65536 * 1536, 1},
		{"small allreduce", func(c *Config) {
			c.Allreduce.Size, c.Allreduce.Nodes, c.Allreduce.Strategies = 64*unit.KiB, []int{2}, []string{"CPU"}
		}, "allreduce.size", memBase, 64 << 20, 1},
	}
	for _, c := range cases {
		cfg := base
		c.edit(&cfg)
		need := EstimateMemory("allreduce", cfg)
		if need.Param != c.param || need.Bytes < c.atLeast || need.Bytes > c.atMost || need.Sims != c.simsAtOne {
			t.Errorf("%s: %+v, want %s in [%g, %g] with %d simulation", c.name, need, c.param, c.atLeast, c.atMost, c.simsAtOne)
		}
	}
	// Two workers count the two largest simulations, without a memory
	// budget.
	cfg := base
	cfg.Run.Parallel, cfg.Run.MemBudget = 2, 0
	unbudgeted := base
	unbudgeted.Run.MemBudget = 0
	one, two := EstimateMemory("allreduce", unbudgeted), EstimateMemory("allreduce", cfg)
	if two.Sims != 2 || two.Bytes <= one.Bytes {
		t.Errorf("parallel 2: %+v; parallel 1: %+v", two, one)
	}
	// With the default budget (1 GiB) the two 64-node functional points
	// (about 1.2 GB each) never run together: the estimate is one of them.
	cfg.Run.MemBudget = unit.GiB
	if b := EstimateMemory("allreduce", cfg); b.Sims != 1 || b.Bytes != one.Bytes {
		t.Errorf("parallel 2 within a 1 GiB budget: %+v, want one simulation as %+v", b, one)
	}
	// A budget that holds two of them counts two.
	cfg.Run.MemBudget = 4 * unit.GiB
	if b := EstimateMemory("allreduce", cfg); b.Sims != 2 || b.Bytes != two.Bytes {
		t.Errorf("parallel 2 within a 4 GiB budget: %+v, want two simulations as %+v", b, two)
	}
	// An experiment no parameter can grow needs only the process.
	if n := EstimateMemory("strategies", base); n.Bytes != memBase {
		t.Errorf("strategies: %+v, want %d bytes", n, memBase)
	}
	if err := (MemNeed{Param: "allreduce.size", Value: "16GiB", Bytes: 3 << 40, Sims: 2}).Refusal(8<<30, "run.mem_limit"); err == nil ||
		err.Error() != "allreduce.size = 16GiB: the run needs about 3.0TiB of memory (2 simulations at once; run.parallel=1 runs one), more than the 8.0GiB run.mem_limit" {
		t.Errorf("refusal: %v", err)
	}
}

// The hierarchical allreduce's estimate knows GNN_GIO's connections to
// every other PE (a templated count per context and PE, growing with the
// square of the GPUs: 8,192 GPUs died in set-up at 7.7 GB of heap before
// they were reserved as one block, then were refused at 73.5 GiB): at
// 2,048 GPUs at least the measured 762 MiB and at most three times it,
// and keeps the other strategies' 8,192-GPU flow runs (2.3 GB measured)
// in reach.
func TestEstimateMemoryAllreduceHier(t *testing.T) {
	cfg, err := DefaultConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.Functional = 1, false
	for _, c := range []struct {
		st             string
		nodes          int
		atLeast, below float64
	}{
		{"GNN_GIO", 1024, 3 << 30, 8 << 30},
		{"GNN_GIO", 256, 799e6, 3*799e6 + memBase},
		{"CPU", 1024, 1 << 30, 4 << 30},
		{"GDS", 1024, 1 << 30, 4 << 30},
	} {
		cfg.AllreduceHier.Nodes, cfg.AllreduceHier.Strategies = []int{c.nodes}, []string{c.st}
		m := EstimateMemory("allreduce_hier", cfg)
		if m.Bytes < c.atLeast || m.Bytes >= c.below || m.Param != "allreduce_hier.nodes" {
			t.Errorf("%s on %d nodes of %d GPUs: %s (%s), want in [%s, %s)", c.st, c.nodes, cfg.Node.GPUs,
				FormatBytes(m.Bytes), m.Param, FormatBytes(c.atLeast), FormatBytes(c.below))
		}
	}
}

// The datatype experiments' estimates cover their measured peaks (RSS at
// ddtbench.size 1 and 4 MiB for ddt_vector, 1 and 2 MiB for the others, on
// gputn, 2026-11-28): ddt_vector keeps about 255 bytes per byte of the
// size, the sPIN studies about 35; the estimate was a node payload's 4.6,
// so that 256 MiB died in the Go runtime ("fatal error: out of memory")
// under a ulimit the estimate said it fit.
func TestEstimateMemoryDDT(t *testing.T) {
	base, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		size     unit.Bytes
		measured float64 // peak RSS, bytes
	}{
		{"ddt_vector", unit.MiB, 285652 << 10},
		{"ddt_vector", 4 * unit.MiB, 1068936 << 10},
		{"ddt_breakdown", 2 * unit.MiB, 96140 << 10},
		{"ddt_hpus", 2 * unit.MiB, 91400 << 10},
		{"ddt_memory", 2 * unit.MiB, 84596 << 10},
		{"ddt_dmaqueue", 2 * unit.MiB, 92244 << 10},
		{"ddt_host", 2 * unit.MiB, 88136 << 10},
	} {
		cfg := base
		cfg.DDTBench.Size = c.size
		need := EstimateMemory(c.name, cfg)
		if need.Bytes < c.measured || need.Bytes > 3*c.measured || need.Param != "ddtbench.size" {
			t.Errorf("%s at %v: %+v; want ddtbench.size and at least the measured %.0f bytes, at most three times it", c.name, c.size, need, c.measured)
		}
	}
}
