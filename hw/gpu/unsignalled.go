package gpu

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

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

// DispatchOpSignal is DispatchOp with a completion signal word the caller
// provides (a runtime's pool of signals): the CP sets it to 1 after the
// teardown, as with DispatchOp's own word, which the caller must have
// reset to 0. A stream launching a kernel per step then needs a few words,
// not one allocation per launch.
func (g *GPU) DispatchOpSignal(k Kernel, signal mem.Addr) (Op, *Run) {
	if err := g.Validate(k); err != nil {
		panic(err) // callers validate first; reaching here is a simulator bug
	}
	r := &Run{Kernel: k, Signal: signal, Queued: g.e.Now()}
	return func(cp *sim.Proc) { g.runKernel(cp, r) }, r
}
