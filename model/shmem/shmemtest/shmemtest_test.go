package shmemtest

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/shmem"
)

func compnetHW(mode string) cluster.Spec {
	s := cluster.CompNet()
	s.GPU.Mode = mode
	return s
}

// The suite itself is tested with the ideal backend.
func TestIdeal(t *testing.T) {
	Run(t, Backend{Kind: shmem.Ideal, HW: compnetHW("dgpu"), Spec: shmem.DefaultSpec()})
}

func TestGHNDGPU(t *testing.T) {
	Run(t, Backend{Kind: shmem.GHNDGPU, HW: compnetHW("dgpu"), Spec: shmem.DefaultSpec()})
}

// GHN_DGPU with ROC_SHMEM's placement (entries in host memory, status
// flags in GPU memory) and its progress thread conforms.
func TestGHNDGPUHostQueueGPUStatus(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.QueueInGPU, sp.Threads, sp.ProgressThread = false, 1, true
	Run(t, Backend{Kind: shmem.GHNDGPU, HW: compnetHW("dgpu"), Spec: sp})
}

func TestGHNHostQ(t *testing.T) {
	Run(t, Backend{Kind: shmem.GHNHostQ, HW: compnetHW("dgpu"), Spec: shmem.DefaultSpec()})
}

func TestGHNAPU(t *testing.T) {
	Run(t, Backend{Kind: shmem.GHNAPU, HW: compnetHW("apu"), Spec: shmem.DefaultSpec()})
}

func TestCompNet(t *testing.T) {
	Run(t, Backend{Kind: shmem.CompNetCP, HW: compnetHW("dgpu"), Spec: shmem.DefaultSpec()})
}

// ComP-Net with LLC locking and more service threads than CP cores
// (time-sliced) still conforms.
func TestCompNetLockedTimeSliced(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.LLCLocking, sp.Threads = true, 3
	Run(t, Backend{Kind: shmem.CompNetCP, HW: compnetHW("dgpu"), Spec: sp})
}

// twoGPUNodes is hw with two GPUs per node: of four PEs, 0–1 and 2–3 are
// peers on one node's GPU fabric, every other pair is on the network.
func twoGPUNodes(hw cluster.Spec) cluster.Spec {
	hw.Node.GPUs = 2
	return hw
}

// With peer access (the default), the operations between GPUs of one
// node go by the GPU's own stores, loads and atomics, the others through
// the backend: the whole suite still conforms, for a host-proxied backend
// and for the GPU-native one.
func TestPeerAccessConforms(t *testing.T) {
	t.Run("GHNDGPU", func(t *testing.T) {
		Run(t, Backend{Kind: shmem.GHNDGPU, HW: twoGPUNodes(compnetHW("dgpu")), Spec: shmem.DefaultSpec(), Nodes: 4})
	})
	t.Run("GIO", func(t *testing.T) {
		Run(t, Backend{Kind: shmem.GIO, HW: twoGPUNodes(cluster.GIO()), Spec: shmem.DefaultSpec(), Nodes: 4})
	})
	t.Run("CompNetWithoutPeerAccess", func(t *testing.T) {
		sp := shmem.DefaultSpec()
		sp.PeerAccess = false
		Run(t, Backend{Kind: shmem.CompNetCP, HW: twoGPUNodes(compnetHW("dgpu")), Spec: sp, Nodes: 4})
	})
}
