package verbs

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A GPU's MMIO store to the NIC crosses its own link and, on a GH200
// (the GPU's link is NVLink-C2C to the Grace), the NIC's PCIe link from
// the Grace's root complex too; on a dGPU preset only the GPU's link.
func TestMMIOCrossesPCIeBehindC2C(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec cluster.Spec
		c2c  bool
	}{{"gh200-cx7", cluster.GH200CX7(), true}, {"h100-cx7", cluster.H100CX7(), false}} {
		c, err := cluster.New(sim.New(1), tc.spec, tc.spec.Node.GPUs, false)
		if err != nil {
			t.Fatal(err)
		}
		nd := c.Nodes[0]
		n := NewNode(c.Engine, 0, nd.NIC, nd.Mem, nd.GPULink, DefaultSpec())
		_, vis := n.mmio(0, 8)
		want := nd.GPULink.Spec().Latency
		if tc.c2c {
			want += nd.PCIe.Spec().Latency
		}
		if vis < want || vis > want+sim.Nanosecond*50 {
			t.Errorf("%s: doorbell visible at %v, want about %v (the GPU's link%s)", tc.name, vis, want, map[bool]string{true: " then the NIC's PCIe link", false: ""}[tc.c2c])
		}
		c.Engine.Close()
	}
}
