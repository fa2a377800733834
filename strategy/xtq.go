package strategy

import (
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/model/xtq"
)

// setupXTQ gives the node the XTQ remote-task runtime (the dissertation's XTQ chapter):
// registrations fill the NIC's lookup tables and arriving tasks are
// enqueued by the NIC. Workloads fetch it with Get[*xtq.Runtime].
func setupXTQ(n *Node, w *World) error {
	hw := w.hw(n)
	rt, err := xtq.New(n.Host, hw.NIC, hw.GPU, n.Rank, n.Size, xtq.XTQ, w.Config.SW)
	if err != nil {
		return err
	}
	n.Provide(rt)
	return nil
}

// setupHSA is XTQ's baseline (the dissertation): MPI and a GPU stream for
// the kernel-boundary workloads, and the remote-task runtime in HSA mode,
// where a host progress thread receives each task and enqueues it. Its
// MPI is GPU-aware MPI as HDN's, with the same paths between GPUs of one
// node (mpi.shm, mpi.ipc); its remote tasks stay on the NIC (docs/today.md
// says why).
func setupHSA(n *Node, w *World) (err error) {
	hw := w.hw(n)
	if n.MPI, err = mpi.Init(n.Host, hw.NIC, n.Rank, n.Size, w.Config.MPI, w.Config.SW); err != nil {
		return err
	}
	useGPUAwareMPI(n, w)
	n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
	rt, err := xtq.New(n.Host, hw.NIC, hw.GPU, n.Rank, n.Size, xtq.HSA, w.Config.SW)
	if err != nil {
		return err
	}
	n.Provide(rt)
	return nil
}
