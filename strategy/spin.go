package strategy

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
)

// The sPIN datatype-offload strategies (the SC'19 paper): the NIC's
// handlers unpack a receive-side MPI datatype as the packets stream in.
const (
	SpinSpecialized Strategy = "SPIN_SPEC"
	SpinHPULocal    Strategy = "SPIN_HPULOCAL"
	SpinROCP        Strategy = "SPIN_ROCP"
	SpinRWCP        Strategy = "SPIN_RWCP"
)

// spinDefs are the registry entries of the sPIN strategies.
func spinDefs() []Def {
	def := func(s Strategy, aliases, summary string, m spinmodel.Method) Def {
		return Def{Info: Info{s, aliases, "n/a", "n/a", "n/a", "post the receive, copy the datatype structures to the NIC", summary},
			Caps: NICHandlers, Preset: "spin", Setup: setupSpin(m)}
	}
	return []Def{
		def(SpinSpecialized, "sPIN specialized", "NIC handlers specialized to vector / index shapes (the SC'19 paper)", spinmodel.Specialized),
		def(SpinHPULocal, "sPIN HPU-local", "NIC handlers, one datatype segment per HPU, catch-up (the SC'19 paper)", spinmodel.HPULocal),
		def(SpinROCP, "sPIN RO-CP", "NIC handlers from read-only host checkpoints (the SC'19 paper)", spinmodel.ROCP),
		def(SpinRWCP, "sPIN RW-CP", "NIC handlers progressing host checkpoints in place, blocked-RR (the SC'19 paper)", spinmodel.RWCP),
	}
}

// setupSpin gives the node a datatype endpoint whose receives run method m
// on the node's sPIN NIC (the NICHandlers capability: strategy.Get of a
// *spinmodel.Endpoint).
func setupSpin(m spinmodel.Method) func(n *Node, w *World) error {
	return func(n *Node, w *World) error {
		hw := w.hw(n)
		c := w.Cluster
		n.Pool = mem.Host
		ep := spinmodel.NewEndpoint(hw.NIC, m, c.Spec.Spin, w.Config.ddtCosts(),
			spinmodel.LinkView{PacketTime: c.Fabric.Serialization(c.Spec.Link.Payload)})
		ep.Host(c.Spec.CPU, hw.DRAM)
		n.Provide(ep)
		return nil
	}
}

// ddtCosts returns the datatype cost constants, the defaults when the
// configuration leaves them unset.
func (c Config) ddtCosts() spinmodel.Costs {
	if c.DDT == (spinmodel.Costs{}) {
		return spinmodel.DefaultCosts()
	}
	return c.DDT
}
