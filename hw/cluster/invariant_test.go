package cluster_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// runInjected builds a 2-node cluster, lets inject break something at
// 1us, runs it and returns the run's error.
func runInjected(t *testing.T, check bool, inject func(c *cluster.Cluster)) error {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	c.SetCheckInvariants(check)
	e.At(sim.Microsecond, func() { inject(c) })
	return e.Run()
}

// violations returns the run error's violations as "agent: what" lines.
func violations(t *testing.T, err error) []sim.Violation {
	t.Helper()
	var ie *sim.InvariantError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want a *sim.InvariantError", err)
	}
	return ie.Violations
}

func TestInvariantsCatchInjectedViolations(t *testing.T) {
	cases := []struct {
		name   string
		inject func(c *cluster.Cluster)
		want   []string // "agent|part of what", one per expected violation
	}{
		{"packet bypassing the NIC", func(c *cluster.Cluster) {
			// A payload packet put on the wire behind node 0's NIC's back,
			// of a message whose header never comes.
			c.Fabric.Send(&nic.Packet{Src: 0, Dst: 1, Kind: nic.KindRequest, Msg: 77, Index: 1, Len: 100})
		}, []string{
			"node[0].nic|sent 0 packets (0 bytes) by its counters, the fabric took 1 (100 bytes)",
			"node[1].nic|payload packets of 1 message(s) held without their header",
		}},
		{"AQL ring overrun", func(c *cluster.Cluster) {
			q, err := c.Nodes[1].GPU.NewAQLQueue("q", 4)
			if err != nil {
				panic(err)
			}
			// A producer that reserved 9 slots of a 4-slot ring.
			c.Nodes[1].Mem.Store64(q.WriteIndex(), 9)
		}, []string{"node[1].gpu.cp.q[0]|read index 0, write index 9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := violations(t, runInjected(t, true, tc.inject))
			var lines []string
			for _, v := range got {
				if v.At < sim.Microsecond {
					t.Errorf("%v: time %v, want the end of the run (≥ 1us)", v, v.At)
				}
				lines = append(lines, v.Agent+"|"+v.What)
			}
			for _, w := range tc.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("no violation %q in %q", w, lines)
				}
			}
			if err := runInjected(t, false, tc.inject); err != nil {
				t.Errorf("with the check off: %v", err)
			}
		})
	}
}

// A clean run has no violation (the check is on by default).
func TestInvariantsHoldOnCleanRun(t *testing.T) {
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nodes[0].GPU.NewAQLQueue("q", 4); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}
