package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/net"
)

func TestPartitionOfKeepsLeavesWholeAndBalanced(t *testing.T) {
	tree := GPUTN()
	tree.Topology.Kind, tree.Topology.LeafSize = "fattree", 4
	for _, c := range []struct {
		spec  Spec
		n, k  int
		want  []int
		limit int
	}{
		{GPUTN(), 5, 2, []int{0, 0, 0, 1, 1}, 5},
		{tree, 10, 2, []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, 3},
		{tree, 16, 2, []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, 4},
	} {
		if got := PartitionOf(c.spec, c.n, c.k); !slices.Equal(got, c.want) {
			t.Errorf("%s n=%d k=%d: %v, want %v", c.spec.Topology.Kind, c.n, c.k, got, c.want)
		}
		if got := MaxPartitions(c.spec, c.n); got != c.limit {
			t.Errorf("%s n=%d: at most %d partitions, want %d", c.spec.Topology.Kind, c.n, got, c.limit)
		}
	}
}

func TestNewPartitionedRefuses(t *testing.T) {
	flow := GPUTN()
	flow.Network.Model = net.ModelFlow
	noLook := GPUTN()
	noLook.Switch.Latency = 0
	for _, c := range []struct {
		name string
		spec Spec
		n, k int
		want string
	}{
		{"too many", GPUTN(), 4, 5, "run.partitions = 5: must be in [1, 4]"},
		{"flow", flow, 4, 2, "network.model = flow"},
		{"no lookahead", noLook, 4, 2, "no lookahead"},
	} {
		if _, err := NewPartitioned(1, c.spec, c.n, c.k, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}
