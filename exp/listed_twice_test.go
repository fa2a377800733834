package exp

import (
	"strings"
	"testing"
)

// A list parameter that names a value twice is bad input: the sweep would
// run it twice and compare a strategy with itself (a ping-pong's
// runner-up its winner, margin 0) or give a preset's answer twice.
func TestListedTwiceRefused(t *testing.T) {
	for _, c := range []struct {
		field string
		set   func(*Config)
	}{
		{"allreduce.nodes", func(c *Config) { c.Allreduce.Nodes = []int{2, 4, 2} }},
		{"allreduce.strategies", func(c *Config) { c.Allreduce.Strategies = []string{"CPU", "CPU"} }},
		{"pingpong.strategies", func(c *Config) { c.PingPong.Strategies = []string{"CPU", "HDN", "CPU"} }},
		{"halo3d.nodes", func(c *Config) { c.Halo3D.Nodes = []int{1, 1} }},
		{"halo3d.neighbours", func(c *Config) { c.Halo3D.Neighbours = []int{6, 6} }},
		{"allreduce_hier.nodes", func(c *Config) { c.AllreduceHier.Nodes = []int{1, 2, 2} }},
		{"moe.ep", func(c *Config) { c.MoE.EP = []int{8, 8} }},
		{"moe.modes", func(c *Config) { c.MoE.Modes = []string{"throughput", "throughput"} }},
		{"today.presets", func(c *Config) { c.Today.Presets = []string{"h100-cx7", "gh200", "h100-cx7"} }},
		{"today.workloads", func(c *Config) { c.Today.Workloads = []string{"moe", "moe"} }},
	} {
		cfg, err := DefaultConfig("h100-cx7")
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("the defaults: %v", err)
		}
		c.set(&cfg)
		err = cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field+" lists ") || !strings.Contains(err.Error(), " twice") {
			t.Errorf("%s with a value twice: %v, want an error naming it", c.field, err)
		}
	}
}
