package mpi

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/unit"
)

// Protocols for messages above mpi.eager_max (Spec.LongProtocol).
const (
	// LongEager sends a long message as one full-length put with an ack
	// request and exposes the send buffer for a get: a receive already
	// posted takes the data directly; an unexpected one keeps the header
	// only and gets the data once posted (Open MPI's Portals 4 MTL,
	// long_protocol = eager, its default).
	LongEager = "eager"
	// LongRndv sends a zero-byte header and the receiver always gets the
	// data (a request-to-send rendezvous).
	LongRndv = "rndv"
)

// Spec holds the MPI protocol knobs. The defaults are those of Open MPI's
// Portals 4 transport (ompi/mca/mtl/portals4/mtl_portals4_component.c),
// the MPI the dissertation's XTQ chapter extended.
type Spec struct {
	EagerMax       unit.Bytes `toml:"eager_max" doc:"largest message sent as a short put (copied out of an overflow buffer when unexpected); larger ones use mpi.long_protocol; 2KiB = Open MPI's Portals 4 MTL eager_limit (mtl_portals4_component.c, the MPI the dissertation extended)" src:"DEFAULT"`
	LongProtocol   string     `toml:"long_protocol" doc:"messages above mpi.eager_max: eager (one full-length put with an ack request, the send buffer exposed for a get; a posted receive takes the data directly, an unexpected one keeps the header and gets the data when posted; the send completes on the ack, plus the get when unexpected) or rndv (a zero-byte header, then the receiver's get); eager = Open MPI's Portals 4 MTL default long_protocol (mtl_portals4_component.c, mtl_portals4_send.c)" src:"DEFAULT"`
	OverflowBufs   int        `toml:"overflow_buffers" doc:"overflow-list buffers (short receive blocks) for unexpected short messages; 32 = Open MPI's Portals 4 MTL recv_short_num" src:"DEFAULT"`
	OverflowBufLen unit.Bytes `toml:"overflow_buffer_size" doc:"size of each overflow buffer; 2MiB = Open MPI's Portals 4 MTL recv_short_size" src:"DEFAULT"`
	// IPC is GPU-aware MPI's intra-node path for GPU buffers (Open MPI's
	// smcuda BTL, UCX's cuda_ipc transport).
	// SHM is the intra-node shared-memory path of every message (Open
	// MPI's sm/vader BTL, UCX's shm transports).
	SHM bool `toml:"shm" doc:"messages between ranks of one node (node.gpus > 1) go through shared host memory, not the NIC: up to mpi.eager_max the sender's core copies into a shared cell and the receiver's copies out; above it a zero-byte header, then the receiver copies straight from the sender's buffer (its core for host buffers, as CMA/XPMEM; its GPU's copy engine for two GPU buffers with mpi.ipc); matching in software on the same lists (Open MPI's sm/vader BTL, UCX's shm transports); false sends them through the NIC; no effect with one GPU per node" src:"DEFAULT"`
	IPC bool `toml:"ipc" doc:"messages above mpi.eager_max between GPU buffers of two GPUs of one node are moved by the receiver GPU's copy engine over the node's GPU fabric after a zero-byte header (CUDA/HIP IPC, as Open MPI's smcuda and UCX's cuda_ipc do), not by the NIC; the header and eager messages still take the NIC; no effect with one GPU per node" src:"DEFAULT"`
}

// DefaultSpec returns Open MPI's Portals 4 MTL defaults: 2 KiB eager
// limit, the long-eager protocol, 32 short receive blocks of 2 MiB.
func DefaultSpec() Spec {
	return Spec{EagerMax: 2 * unit.KiB, LongProtocol: LongEager, OverflowBufs: 32, OverflowBufLen: 2 * unit.MiB, IPC: true, SHM: true}
}

// maxOverflowBufLen bounds mpi.overflow_buffer_size: 1 GiB is 512 times
// Open MPI's 2 MiB default, far beyond any short receive block a runtime
// posts, and keeps the overflow list's size sums far from int64's range.
const maxOverflowBufLen = unit.GiB

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	bufOK := s.OverflowBufLen >= 1 && s.OverflowBufLen <= maxOverflowBufLen
	if !bufOK {
		errs = append(errs, fmt.Errorf("mpi.overflow_buffer_size = %v: must be in [1B, %v]", s.OverflowBufLen, maxOverflowBufLen))
	}
	switch {
	case s.EagerMax < 0:
		errs = append(errs, fmt.Errorf("mpi.eager_max = %v: must be at least 0", s.EagerMax))
	case bufOK && s.EagerMax > s.OverflowBufLen:
		// Compared only with a valid buffer size, so that a bad size is
		// reported once, under its own name.
		errs = append(errs, fmt.Errorf("mpi.eager_max = %v: must be in [0, mpi.overflow_buffer_size = %v]", s.EagerMax, s.OverflowBufLen))
	case !bufOK && s.EagerMax > maxOverflowBufLen:
		// Beside a bad buffer size, its own range: a line naming the
		// size is dropped as following from the size's (cmd dropDerived).
		errs = append(errs, fmt.Errorf("mpi.eager_max = %v: must be in [0, %v]", s.EagerMax, maxOverflowBufLen))
	}
	if s.LongProtocol != LongEager && s.LongProtocol != LongRndv {
		errs = append(errs, fmt.Errorf("mpi.long_protocol = %q: must be %s or %s", s.LongProtocol, LongEager, LongRndv))
	}
	if s.OverflowBufs < 1 || s.OverflowBufs > 1<<16 {
		errs = append(errs, fmt.Errorf("mpi.overflow_buffers = %d: must be in [1, 65536]", s.OverflowBufs))
	}
	return errors.Join(errs...)
}
