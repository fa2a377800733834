package spin_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

func newNode(t testing.TB, hw cluster.Spec) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(sim.New(1), hw, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Engine.Close)
	return c
}

func gbps(bytes int, d sim.Duration) float64 { return float64(bytes) / float64(d) * 1e3 }

func vector(t testing.TB, size, bl int) *datatype.Committed {
	t.Helper()
	ty, err := datatype.Vector(size/bl, bl, 2*bl, datatype.Byte())
	if err != nil {
		t.Fatal(err)
	}
	return ty.Commit()
}

// The RW-CP microkernel places every byte where datatype.Unpack does, on
// both HPU models, and every handler's IPC is in (0, 1].
func TestKernelVerified(t *testing.T) {
	for _, hw := range []cluster.Spec{cluster.PULP(), cluster.Spin()} {
		for _, bl := range []int{4, 64, 2048, 3000} {
			r, err := spinmodel.Kernel(newNode(t, hw), vector(t, 64<<10, bl), 1, 4, spinmodel.DefaultCosts())
			if err != nil {
				t.Fatal(err)
			}
			if !r.Verified {
				t.Errorf("%s block %d: receive buffer differs from datatype.Unpack", hw.Spin.Model, bl)
			}
			if len(r.IPC) != (r.Bytes+2047)/2048 || r.Plan.Interval.Q != 4 {
				t.Errorf("%s block %d: %d handlers, Δr = %d packets; want %d and 4", hw.Spin.Model, bl, len(r.IPC), r.Plan.Interval.Q, (r.Bytes+2047)/2048)
			}
			for _, ipc := range r.IPC {
				if ipc <= 0 || ipc > 1 {
					t.Fatalf("%s block %d: IPC %v outside (0, 1]", hw.Spin.Model, bl, ipc)
				}
			}
		}
	}
}

// Small blocks: PULP's cores read each block's leaf dataloop from L2
// (one read per block through the bank queues), which the ARM HPUs' caches
// hold, so PULP at 1 GHz falls behind the 32 ARM HPUs at 800 MHz; large
// blocks are bound by data movement (PULP: the cluster DMAs and the 32
// B/cycle output port).
func TestKernelPULPvsARM(t *testing.T) {
	run := func(hw cluster.Spec, bl int) (float64, spinmodel.StaticResult) {
		r, err := spinmodel.Kernel(newNode(t, hw), vector(t, 256<<10, bl), 1, 4, spinmodel.DefaultCosts())
		if err != nil || !r.Verified {
			t.Fatalf("%s block %d: verified %v, %v", hw.Spin.Model, bl, r.Verified, err)
		}
		return gbps(r.Bytes, r.Slowest), r
	}
	p, pr := run(cluster.PULP(), 64)
	a, _ := run(cluster.Spin(), 64)
	if p >= a {
		t.Errorf("64 B blocks: pulp %.2f GB/s, arm %.2f GB/s: want pulp slower (an L2 read per block)", p, a)
	}
	if pr.Accel == nil || pr.Accel.L2Wait <= 0 {
		t.Errorf("64 B blocks on pulp: no time queued at the L2 banks (%+v)", pr.Accel)
	}
	// Without the per-block reads PULP's faster clock wins again.
	cs := spinmodel.DefaultCosts()
	cs.BlockLoopRead = 0
	r, err := spinmodel.Kernel(newNode(t, cluster.PULP()), vector(t, 256<<10, 64), 1, 4, cs)
	if err != nil || gbps(r.Bytes, r.Slowest) <= p {
		t.Errorf("64 B blocks without per-block L2 reads: %.2f GB/s, %v; want faster than %.2f", gbps(r.Bytes, r.Slowest), err, p)
	}
	big, _ := run(cluster.PULP(), 2048)
	if big > 32 || big < 20 {
		t.Errorf("2 KiB blocks on pulp: %.2f GB/s, want below the 32 GB/s output port and above 20", big)
	}
	// IPC from the stalls the handlers had: small blocks stall on their
	// per-block L2 reads and the full cluster DMA queue, large ones only on
	// a few L2 latencies, because a core's read does not wait for the
	// packet bursts on its bank (with 1 MiB, as in the figure, reads queued
	// behind whole bursts gave 0.65 at 2 KiB).
	_, sr := run(cluster.PULP(), 4)
	lr, err := spinmodel.Kernel(newNode(t, cluster.PULP()), vector(t, 1<<20, 2048), 1, 4, spinmodel.DefaultCosts())
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := sr.MedianIPC(), lr.MedianIPC(); !(lo < hi && hi > 0.75) {
		t.Errorf("pulp median handler IPC %.3f at 4 B, %.3f at 2 KiB (1 MiB): want lower at 4 B, and above 0.75 at 2 KiB", lo, hi)
	}
}

// The bandwidth test moves every byte; PULP's throughput into the PCIe
// FIFO stays under the output port's 32 GB/s and rises with the block size
// as the DMA setup cycles amortize.
func TestBandwidth(t *testing.T) {
	var prev float64
	for _, bl := range []int{256, 4096} {
		r, err := spinmodel.Bandwidth(newNode(t, cluster.PULP()), bl, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		tp := gbps(r.Bytes, r.Drained)
		if !r.Verified || tp > 32 || tp <= prev {
			t.Fatalf("block %d: verified %v, %.2f GB/s (previous block size %.2f): want verified, ≤ 32, rising", bl, r.Verified, tp, prev)
		}
		prev = tp
	}
	if _, err := spinmodel.Bandwidth(newNode(t, cluster.PULP()), 0, 1024); err == nil {
		t.Fatal("a zero block size must be refused")
	}
}
