package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func runPingPong(t *testing.T, preset string, s strategy.Strategy, pp PingPong) PingPongResult {
	t.Helper()
	hw, err := cluster.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(sim.New(1), hw, 2*hw.Node.GPUs, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := pp.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s %+v: %v", s, pp, err)
	}
	return r
}

// Every implementation carries the data there and back (verified), the
// GPU fabric beats the rails for a large message (the host's shared
// memory for a small one), the bandwidth rises with
// the size, and a round trip more costs about one round trip more.
func TestPingPong(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		small := runPingPong(t, "mi300a-ss11", s, PingPong{Size: 64, Iters: 1, Peer: 4})
		two := runPingPong(t, "mi300a-ss11", s, PingPong{Size: 64, Iters: 2, Peer: 4})
		rails := runPingPong(t, "mi300a-ss11", s, PingPong{Size: 256 * unit.KiB, Iters: 1, Peer: 4})
		fabric := runPingPong(t, "mi300a-ss11", s, PingPong{Size: 256 * unit.KiB, Iters: 1, Peer: 1})
		t.Logf("%-6s %-16s 64B half %v (2 iters %v); 256KiB rails %v %.1f GB/s, fabric %v %.1f GB/s",
			s, small.Impl, small.Half, two.Half, rails.Half, rails.GBps, fabric.Half, fabric.GBps)
		for _, r := range []PingPongResult{small, two, rails, fabric} {
			if !r.Verified {
				t.Errorf("%s: not verified: %+v", s, r)
			}
		}
		if s == strategy.CPU {
			// The host's messages to a rank of its node go through shared
			// memory (mpi.shm): a small one beats the rails; a large one
			// is as fast as the receiver's core copies it.
			near := runPingPong(t, "mi300a-ss11", s, PingPong{Size: 64, Iters: 1, Peer: 1})
			if near.Half >= small.Half || !near.Verified {
				t.Errorf("CPU: 64 B through shared memory %v, over the rails %v: want shared memory faster", near.Half, small.Half)
			}
		} else if fabric.Half >= rails.Half {
			t.Errorf("%s: 256 KiB over the GPU fabric %v, over the rails %v: want the fabric faster", s, fabric.Half, rails.Half)
		}
		if rails.GBps <= small.GBps {
			t.Errorf("%s: bandwidth %v at 256 KiB <= %v at 64 B", s, rails.GBps, small.GBps)
		}
		if d := float64(two.Total) / float64(small.Total); d < 1.5 || d > 2.5 {
			t.Errorf("%s: 2 round trips take %.2f× one", s, d)
		}
	}
}

func TestPingPongBadInput(t *testing.T) {
	hw, _ := cluster.Preset("mi300a-ss11")
	c, err := cluster.New(sim.New(1), hw, 8, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	for _, pp := range []PingPong{{Size: 7, Iters: 1, Peer: 1}, {Size: 8, Iters: 0, Peer: 1}, {Size: 8, Iters: 1, Peer: 8}} {
		if _, err := pp.Run(c, strategy.HDN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err == nil {
			t.Errorf("%+v: no error", pp)
		}
	}
}

// The device-shmem family (GHN proxy, ComP-Net, GIO) bounces the message
// through its device runtime, verified, over the rails and the fabric.
func TestPingPongDeviceShmem(t *testing.T) {
	for _, tc := range []struct {
		preset string
		s      strategy.Strategy
		peers  []int
	}{{"mi300a-ss11", strategy.GHNAPU, []int{1, 4}}, {"h100-cx7", strategy.GNNGIO, []int{1, 8}}} {
		s := tc.s
		for _, peer := range tc.peers {
			r := runPingPong(t, tc.preset, s, PingPong{Size: 4 * unit.KiB, Iters: 2, Peer: peer})
			t.Logf("%s peer %d: %s half %v", s, peer, r.Impl, r.Half)
			if !r.Verified || r.Impl != "device-shmem" {
				t.Errorf("%s peer %d: %+v", s, peer, r)
			}
		}
	}
}

// GNN_GPURDMA bounces the message with GPU-posted RDMA writes (device
// verbs), verified, over the rails and (through the NIC) the fabric; a
// larger message has the higher rate and a second round trip costs about
// one more.
func TestPingPongDeviceVerbs(t *testing.T) {
	for _, peer := range []int{1, 8} {
		small := runPingPong(t, "h100-cx7", strategy.GNNGPURDMA, PingPong{Size: 64, Iters: 1, Peer: peer})
		two := runPingPong(t, "h100-cx7", strategy.GNNGPURDMA, PingPong{Size: 64, Iters: 2, Peer: peer})
		big := runPingPong(t, "h100-cx7", strategy.GNNGPURDMA, PingPong{Size: 256 * unit.KiB, Iters: 1, Peer: peer})
		t.Logf("peer %d: %s 64B half %v (2 iters %v), 256KiB %v %.1f GB/s", peer, small.Impl, small.Half, two.Half, big.Half, big.GBps)
		for _, r := range []PingPongResult{small, two, big} {
			if !r.Verified || r.Impl != "device-verbs" {
				t.Errorf("peer %d: %+v", peer, r)
			}
		}
		if big.GBps <= small.GBps {
			t.Errorf("peer %d: %v GB/s at 256 KiB <= %v at 64 B", peer, big.GBps, small.GBps)
		}
		if d := float64(two.Total) / float64(small.Total); d < 1.5 || d > 2.5 {
			t.Errorf("peer %d: 2 round trips take %.2f× one", peer, d)
		}
	}
}
