package gpu

import "github.com/gpunetsim/gpunetsim/sim"

// RunUnsignalled runs kernel k on the command processor process cp as a
// dispatch whose packet carries a null completion signal (nothing waits
// for this kernel alone; a later marker orders the host after it): the
// same packet read, launch, work-groups and teardown as the operation
// DispatchOp returns, without a signal word to allocate or write. A stream
// that launches a kernel per step for thousands of steps keeps no Run and
// no signal word per launch. k must be valid (Validate); an invalid one is
// a simulator bug and panics.
func (g *GPU) RunUnsignalled(cp *sim.Proc, k Kernel) {
	if err := g.Validate(k); err != nil {
		panic(err)
	}
	g.runKernel(cp, &Run{Kernel: k, Queued: cp.Now()})
}
