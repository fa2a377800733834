package shmem

import (
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// Backend is the seam between the device library (Ctx) and a transport:
// a host-forwarding queue served by service threads (GHN, ComP-Net), the
// ideal reference, or a GPU-native path that builds NIC work requests
// itself (GIO). A backend is created by Runtime.Init; it must be
// functional (real bytes move) and charge every cost to the agent that
// pays it.
type Backend interface {
	// Expose registers symmetric allocation idx, [base, base+size) of
	// this PE, so remote PEs can address it as (idx, offset).
	Expose(idx int, base mem.Addr, size uint64)
	// Open binds work-group wg to queue q (its OpenSHMEM context) and
	// returns the channel its calls go through.
	Open(wg *gpu.WG, q int) (Channel, error)
	// Stop ends the service agents after the kernels finished and
	// reports them.
	Stop() Report
}

// Channel carries one context's requests. Submit runs in the work-group's
// process (the leader work-item's serial part): it returns once r is
// accepted, and for a blocking r once it completed: put data delivered
// or source reusable as OpenSHMEM requires, get data and Result visible
// to the work-group, every earlier operation of the context complete for
// a quiet. A failed operation is reported as an error wrapping ErrFailed.
type Channel interface {
	Submit(r *Request) error
	Close()
}
