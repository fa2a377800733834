package strategy

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// nicFeature is the NIC extension a strategy's mechanism needs, and why.
func (d Def) nicFeature(c cluster.NICCaps) (have bool, what string) {
	switch {
	case d.Caps.Has(Triggers):
		return c.Triggered, "NIC triggered operations (a counter that fires pre-registered puts)"
	case d.Caps.Has(DeviceVerbs), d.Strategy == GNNGIO:
		return c.GPUVerbs, "GPU-initiated verbs (GPU threads write work requests and ring the NIC's doorbell)"
	case d.Caps.Has(NICHandlers):
		return c.Handlers, "packet handlers on the NIC (sPIN)"
	case d.Strategy == XTQ:
		return c.RemoteTasks, "a NIC that enqueues kernels on the GPU (XTQ)"
	}
	return true, ""
}

// RunsOn reports why the strategy cannot run on hardware spec: its
// mechanism needs a NIC extension the spec's NIC does not have (no
// triggered operations on ConnectX-7, no GPU-initiated verbs on Cassini).
// nil when it can.
func (d Def) RunsOn(spec cluster.Spec) error {
	if have, what := d.nicFeature(spec.Caps); !have {
		return fmt.Errorf("%s needs %s, which nic_caps.model = %s does not have", d.Strategy, what, spec.Caps.Model)
	}
	return nil
}
