package mpi

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec holds the MPI protocol knobs (the dissertation (Portals 4)).
type Spec struct {
	EagerMax       unit.Bytes `toml:"eager_max" doc:"largest message sent eagerly; larger ones use rendezvous" src:"DEFAULT"`
	OverflowBufs   int        `toml:"overflow_buffers" doc:"overflow-list buffers for unexpected eager messages" src:"DEFAULT"`
	OverflowBufLen unit.Bytes `toml:"overflow_buffer_size" doc:"size of each overflow buffer" src:"DEFAULT"`
	// IPC is GPU-aware MPI's intra-node path for GPU buffers (Open MPI's
	// smcuda BTL, UCX's cuda_ipc transport).
	IPC bool `toml:"ipc" doc:"rendezvous messages between GPU buffers of two GPUs of one node are moved by the receiver GPU's copy engine over the node's GPU fabric (CUDA/HIP IPC, as Open MPI's smcuda and UCX's cuda_ipc do), not by the NIC; the header and eager messages still take the NIC; no effect with one GPU per node" src:"DEFAULT"`
}

// DefaultSpec returns the defaults of the dissertation (Portals 4).
func DefaultSpec() Spec {
	return Spec{EagerMax: 32 * unit.KiB, OverflowBufs: 8, OverflowBufLen: unit.MiB, IPC: true}
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	if s.EagerMax < 0 || s.EagerMax > s.OverflowBufLen {
		return fmt.Errorf("mpi.eager_max = %v: must be in [0, mpi.overflow_buffer_size = %v]", s.EagerMax, s.OverflowBufLen)
	}
	if s.OverflowBufs < 1 || s.OverflowBufs > 1<<16 {
		return fmt.Errorf("mpi.overflow_buffers = %d: must be in [1, 65536]", s.OverflowBufs)
	}
	return nil
}
