package shmemtest

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/shmem"
)

// GIO (the GIO slides) serves the same device API with GPU-built
// verbs work requests; it conforms on its own preset.
func TestGIO(t *testing.T) {
	Run(t, Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: shmem.DefaultSpec()})
}

// With shader L2 maintenance the NIC-visible pages stay cacheable and the
// API still conforms (the acquire in wait_until invalidates the L2).
func TestGIOShaderL2Maintenance(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.GIO.ShaderL2Maintenance = true
	Run(t, Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp})
}

// With the contexts sharing one QP per peer (shmem.gio.qps_per_peer = 1)
// the API still conforms: posts, polls and quiets of several contexts on
// one QP and CQ, each quiet waiting for its own posts only.
func TestGIOSharedQPs(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.GIO.QPsPerPeer = 1
	Run(t, Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp})
}
