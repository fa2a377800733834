package strategy

import (
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
)

// The intra-kernel strategies of the device-side OpenSHMEM family
// (the dissertation; the dissertation's ComP-Net chapter).
const (
	GHNDGPU      Strategy = "GHN_DGPU"
	GHNDGPUHostQ Strategy = "GHN_DGPU_HOSTQ"
	GHNAPU       Strategy = "GHN_APU"
	COMPNET      Strategy = "COMPNET"
)

// shmemDefs are the registry rows of the device-shmem strategies: a GPU
// stream to launch kernels, and the device runtime of their backend.
func shmemDefs() []Def {
	ghn := func(s Strategy, kind shmem.Kind, mode, summary string) Def {
		return Def{Info: Info{s, "GHN", "No", "No", "CPU/GPU queue management", "Service threads, network stack", summary},
			Caps: Stream | DeviceShmem, Preset: "compnet", GPUMode: mode, Setup: setupShmem(kind)}
	}
	return []Def{
		ghn(GHNDGPU, shmem.GHNDGPU, "dgpu", "work-groups post to queues in GPU memory; host helper threads poll them over PCIe and drive OpenSHMEM (IKN on preset gio: shmem.queue_in_gpu=false, ROC_SHMEM's placement: queues in host memory, completion flags in GPU memory)"),
		ghn(GHNDGPUHostQ, shmem.GHNHostQ, "dgpu", "work-groups write queues in host memory with PCIe stores; host helper threads poll them locally"),
		ghn(GHNAPU, shmem.GHNAPU, "apu", "work-groups post to queues in coherent shared memory; host helper threads poll their caches"),
		{Info: Info{COMPNET, "ComP-Net", "No", "No", "CPU/GPU queue management", "Service threads + network stack, on the CP",
			"service threads on the GPU's command-processor cores poll the queues through the GPU L2 and drive OpenSHMEM"},
			Caps: Stream | DeviceShmem, Preset: "compnet", GPUMode: "dgpu", Setup: setupShmem(shmem.CompNetCP)},
	}
}

// setupShmem provides a GPU stream and the node's device runtime (its
// Init starts the service threads). A zero Config.Shmem means the
// defaults.
func setupShmem(kind shmem.Kind) func(n *Node, w *World) error {
	return func(n *Node, w *World) error {
		hw := w.hw(n)
		n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
		spec := w.Config.Shmem
		if spec.Threads == 0 {
			spec = shmem.DefaultSpec()
		}
		team := w.Shared("shmem.team", func() any { return shmem.NewTeam(n.Size) }).(*shmem.Team)
		n.Provide(shmem.NewRuntime(kind, shmem.Node{PE: n.Rank, NPEs: n.Size, Host: n.Host, CPU: hw.CPU, Mem: hw.Mem,
			GPU: hw.GPU, NIC: hw.NIC, GPULink: hw.GPULink, NICLink: hw.PCIe, CP: hw.CP, SW: w.Config.SW, Peer: hw.Peer}, spec, team))
		return nil
	}
}
