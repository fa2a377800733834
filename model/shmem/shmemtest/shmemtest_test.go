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
