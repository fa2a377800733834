package exp

import (
	"strings"
	"testing"
)

// Strong scaling splits the cube over the GPU grid: a domain smaller than
// the grid's largest side is bad input (it ran a larger cube, rounded up
// to one cell per GPU), one that fills it is not.
func TestHalo3DDomainCoversGrid(t *testing.T) {
	for _, c := range []struct {
		preset string
		nodes  int
		domain int
		ok     bool
	}{
		{"h100-cx7", 4, 3, false}, // 32 GPUs: 4x4x2
		{"h100-cx7", 4, 4, true},
		{"h100-cx7", 1, 1, false}, // 8 GPUs: 2x2x2
		{"h100-cx7", 1, 2, true},
		{"gputn", 1, 1, true},         // one GPU
		{"mi300a-ss11", 16, 3, false}, // 64 GPUs: 4x4x4
	} {
		cfg, err := DefaultConfig(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Halo3D.Scaling, cfg.Halo3D.Nodes, cfg.Halo3D.Domain = "strong", []int{c.nodes}, c.domain
		err = cfg.Validate()
		if got := err == nil || !strings.Contains(err.Error(), "halo3d.domain"); got != c.ok {
			t.Errorf("%s, %d nodes, domain %d: %v, want ok = %v", c.preset, c.nodes, c.domain, err, c.ok)
		}
		// Weak scaling does not read the domain.
		cfg.Halo3D.Scaling = "weak"
		if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "halo3d.domain") {
			t.Errorf("weak scaling, domain %d: %v", c.domain, err)
		}
	}
}
