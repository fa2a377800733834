package workload

import (
	"bytes"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// PingPong is the present-day ping-pong (present-day workloads): rank 0
// sends Size bytes to rank Peer, which detects them and sends them back;
// rank 0 detects the reply. Iters round trips run back to back and the
// result is half the mean round trip and the bandwidth Size / half round
// trip. With several GPUs per node, Peer = 1 pairs two GPUs of one node
// (the intra-node GPU fabric), Peer = node.gpus two GPUs of different
// nodes (the rails).
//
// Each hop of the GPU strategies has the GPU in the loop: a kernel (or, for
// GPU-TN, one persistent kernel per rank) copies the message it received
// into its send buffer before it goes back, so what rank 0 finally holds is
// the data it sent after 2·Iters hops through both GPUs' memories, and is
// compared with it. The host (CPU) implementation echoes the receive
// buffer with no copy, as a host MPI ping-pong does.
type PingPong struct {
	Size  unit.Bytes
	Iters int // round trips
	Peer  int // rank of rank 0's partner
}

// PingPongResult is one ping-pong run.
type PingPongResult struct {
	Impl     string
	Peer     int
	Total    sim.Time // rank 0's first send to its detection of the last reply
	Half     sim.Time // Total / (2·Iters): the one-way latency
	GBps     float64  // Size / Half, in GB/s (1e9 bytes per second)
	Verified bool
}

// PingPongDef is the ping-pong's registry entry.
func PingPongDef() Def {
	return Def{
		Name:     "pingpong",
		Summary:  "present-day ping-pong between two GPUs (same node over the GPU fabric or different nodes over the rails): half round trip and GB/s",
		Baseline: strategy.HDN,
		// The matrix needs one machine whose NIC runs every family the
		// ping-pong implements (GPU-TN's triggered operations and GIO's
		// GPU-initiated verbs; no present-day NIC has both): the seed
		// preset. The experiment runs on any preset (docs/today.md).
		Preset: "gputn",
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: pingPongNA(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			// Two GPUs of different nodes: the rails, on every preset.
			gpus := max(1, hw.Node.GPUs)
			nodes := 2 * gpus
			c, err := newCluster(hw, nodes, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := PingPong{Size: 256, Iters: 2, Peer: gpus}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: nodes, Time: r.Half, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// pingPongNA says why the ping-pong has no implementation on the other
// strategies.
func pingPongNA() map[strategy.Strategy]string {
	out := map[strategy.Strategy]string{}
	for _, d := range strategy.Registry() {
		switch {
		case d.Caps.Has(strategy.NICHandlers):
			out[d.Strategy] = "the sPIN strategies run datatype-unpack handlers on the NIC and have no GPU path to bounce a message back"
		case d.Caps.Has(strategy.NICTasks):
			out[d.Strategy] = "XTQ's primitive is a put that launches a kernel on the target (the taskspawn workload times it); a bounced reply would time that spawn, not the network"
		}
	}
	return out
}

// Run runs the ping-pong under s on c (rank 0 and rank Peer take part, the
// other ranks idle).
func (pp PingPong) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (PingPongResult, error) {
	if pp.Size < 8 || pp.Size%8 != 0 {
		return PingPongResult{}, fmt.Errorf("pingpong size %v: must be a positive multiple of 8 bytes", pp.Size)
	}
	if pp.Iters < 1 || pp.Iters > 64 {
		return PingPongResult{}, fmt.Errorf("pingpong iters = %d: must be in [1, 64]", pp.Iters)
	}
	if pp.Peer < 1 || pp.Peer >= len(c.Nodes) {
		return PingPongResult{}, fmt.Errorf("pingpong peer = %d: must be a rank in [1, %d]", pp.Peer, len(c.Nodes)-1)
	}
	im, _, err := PingPongDef().implFor(s)
	if err != nil {
		return PingPongResult{}, err
	}
	size := uint64(pp.Size)
	peerOf := func(r int) int {
		if r == 0 {
			return pp.Peer
		}
		return 0
	}
	var (
		start, end sim.Time
		src        mem.Addr // rank 0's original data
		rbuf0      mem.Addr // rank 0's receive buffer
		ready      int
		readySig   sim.Signal
	)
	// setupDone is a zero-cost barrier outside the measurement: neither
	// rank starts before both exposed their receive buffers and registered
	// their pre-posted or triggered commands.
	// The device-shmem runtimes connect every PE when a context opens
	// (GIO's QPs): every rank initializes its device then, the idle ones
	// too.
	parties := 2
	if im.Name == "device-shmem" {
		parties = len(c.Nodes)
	}
	setupDone := func(nd *strategy.Node) {
		ready++
		readySig.Notify()
		nd.Host.Proc.WaitUntil(&readySig, "pingpong setup", func() bool { return ready == parties })
	}
	var dvw dvWorld
	e := c.Engine
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		if nd.Rank != 0 && nd.Rank != pp.Peer {
			if im.Name != "device-shmem" {
				return nil
			}
			dev, err := shmemDevice(nd, 1)
			if err != nil {
				return err
			}
			defer dev.Finalize()
			for range 2 { // the symmetric send and receive buffers
				if _, err := dev.Malloc(size + 8); err != nil {
					return err
				}
			}
			setupDone(nd)
			return nil
		}
		me, peer := nd.Rank, peerOf(nd.Rank)
		// Data + an arrival flag word (the one-sided paths put both).
		var sbuf, rbuf mem.Addr
		var dv *dvRank
		if im.Name == "device-verbs" {
			// One GPI segment: the send buffer, then the receive buffer.
			w, err := dvw.get(nd, func(int) uint64 { return 2 * (size + 8) }, func(r int) []int {
				if r == 0 {
					return []int{pp.Peer}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if dv, err = newDVRank(nd, w, 1, []int{peer}); err != nil {
				return err
			}
			sbuf, rbuf = dv.seg, dv.seg+mem.Addr(size+8)
			nd.Mem.MarkControl(sbuf+mem.Addr(size), 8)
			nd.Mem.MarkControl(rbuf+mem.Addr(size), 8)
		} else {
			sbuf = nd.Mem.AllocData(nd.Pool, size+8, "pingpong.send")
			rbuf = nd.Mem.AllocData(nd.Pool, size+8, "pingpong.recv")
		}
		if me == 0 {
			src = nd.Mem.AllocData(nd.Pool, size, "pingpong.src")
			rbuf0 = rbuf
			if b := nd.Mem.Bytes(src, int(size)); b != nil {
				for i := range b {
					b[i] = byte(i*29 + 3)
				}
			}
		}
		if nd.RDMA != nil {
			nd.RDMA.Expose(rbuf, size+8)
		}
		// The first hop of rank 0 copies its original data; every later
		// hop copies what was just received.
		from := func(i int) mem.Addr {
			if me == 0 && i == 0 {
				return src
			}
			return rbuf
		}
		copyBody := func(wg *gpu.WG, i int) {
			if d, sb := wg.Mem().Bytes(sbuf, int(size)), wg.Mem().Bytes(from(i), int(size)); d != nil && sb != nil {
				copy(d, sb)
			}
			wg.VALU(2)
			wg.StreamOut(2*size, size) // the copy's writes
			wg.Store64(sbuf+mem.Addr(size), uint64(i+1))
		}
		wgSize := max(1, min(int(size/4), nd.GPU.MaxWGSize))
		copyKernel := func(i int) gpu.Kernel {
			return gpu.Kernel{Name: "pingpong.copy", WGs: 1, WGSize: wgSize, Body: func(wg *gpu.WG) { copyBody(wg, i) }}
		}
		arrived := func(i int) func(uint64) bool { return func(v uint64) bool { return v >= uint64(i+1) } }
		switch im.Name {
		case "host":
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			for i := range pp.Iters {
				if me == 0 {
					rr, err := nd.MPI.Irecv(rbuf, size, peer, i)
					if err != nil {
						return err
					}
					sr, err := nd.MPI.Isend(src, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(sr)
					nd.MPI.Wait(rr)
				} else {
					rr, err := nd.MPI.Irecv(rbuf, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(rr)
					sr, err := nd.MPI.Isend(rbuf, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(sr)
				}
			}
			if me == 0 {
				end = nd.Host.Now()
			}
		case "kernel-boundary":
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			for i := range pp.Iters {
				if me == 0 {
					nd.Stream.Wait(nd.Stream.Launch(copyKernel(i)))
					rr, err := nd.MPI.Irecv(rbuf, size, peer, i)
					if err != nil {
						return err
					}
					sr, err := nd.MPI.Isend(sbuf, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(sr)
					nd.MPI.Wait(rr)
				} else {
					rr, err := nd.MPI.Irecv(rbuf, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(rr)
					nd.Stream.Wait(nd.Stream.Launch(copyKernel(i)))
					sr, err := nd.MPI.Isend(sbuf, size, peer, i)
					if err != nil {
						return err
					}
					nd.MPI.Wait(sr)
				}
			}
			if me == 0 {
				end = nd.Host.Now()
			}
		case "stream-triggered":
			// The host enqueues the whole exchange; the CP waits on the
			// arrival flag, launches the copy kernel and rings the
			// pre-posted put, hop after hop, with no host on the path.
			// A partner on this node's GPU fabric is reached by a copy
			// engine (cudaMemcpyPeerAsync on the stream) instead: the
			// message and its flag word land in the partner's receive
			// buffer (the same address there: every rank allocates its
			// buffers in the same order).
			viaPeer := nd.Stream.ReachesPeer(peer)
			var first rdma.Deferred
			if !viaPeer {
				first = nd.RDMA.PrepostBlock(pp.Iters, func(int) rdma.Put { return rdma.Put{Src: sbuf, Length: size + 8, Target: peer} })
			}
			done := nd.Mem.AllocData(mem.Host, 8, "pingpong.done")
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			for i := range pp.Iters {
				if me != 0 {
					nd.Stream.WaitValue(rbuf+mem.Addr(size), "pingpong arrival", arrived(i))
				}
				nd.Stream.Launch(copyKernel(i))
				if viaPeer {
					nd.Stream.CopyPeer(peer, rbuf, sbuf, size+8)
				} else {
					nd.Stream.NicTrigger(first + rdma.Deferred(i))
				}
				if me == 0 {
					nd.Stream.WaitValue(rbuf+mem.Addr(size), "pingpong reply", arrived(i))
				}
			}
			if me == 0 {
				nd.Stream.Marker(done, 1)
				m := nd.Mem
				probe := e.Spawn("pingpong.probe", func(p *sim.Proc) {
					p.WaitUntil(m.Watch(done), "pingpong done", func() bool { return m.Load64(done) != 0 })
					end = p.Now()
				})
				probe.SetDaemon()
			}
			nd.Stream.Synchronize()
		case "device-shmem":
			// One persistent kernel per rank: wait_until on the arrival
			// flag, copy, put the message and its flag to the peer's
			// symmetric receive buffer through the device runtime (a GHN
			// proxy, the ComP-Net CP or GIO), quiet.
			dev, err := shmemDevice(nd, 1)
			if err != nil {
				return err
			}
			defer dev.Finalize()
			if sbuf, err = dev.Malloc(size + 8); err != nil {
				return err
			}
			if rbuf, err = dev.Malloc(size + 8); err != nil {
				return err
			}
			if me == 0 {
				rbuf0 = rbuf
			}
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			var kerr error
			k := gpu.Kernel{Name: "pingpong.shmem", WGs: 1, WGSize: wgSize, Body: func(wg *gpu.WG) {
				ctx, err := dev.CtxCreate(wg)
				if err != nil {
					kerr = err
					return
				}
				for i := range pp.Iters {
					if me != 0 {
						if _, kerr = ctx.WaitUntil(rbuf+mem.Addr(size), 8, shmem.CmpGE, uint64(i+1)); kerr != nil {
							return
						}
					}
					copyBody(wg, i)
					if kerr = ctx.PutmemNBI(rbuf, sbuf, size+8, peer); kerr != nil {
						return
					}
					if kerr = ctx.Quiet(); kerr != nil {
						return
					}
					if me == 0 {
						if _, kerr = ctx.WaitUntil(rbuf+mem.Addr(size), 8, shmem.CmpGE, uint64(i+1)); kerr != nil {
							return
						}
					}
				}
				if me == 0 {
					end = wg.Now()
				}
				kerr = ctx.Destroy()
			}}
			if err := dev.Cooperative(k); err != nil {
				return err
			}
			nd.Stream.Wait(nd.Stream.Launch(k))
			return kerr
		case "device-verbs":
			// One persistent kernel per rank (GPUrdma's GPU-side verbs):
			// poll the arrival flag with system-scope acquires, copy,
			// post the RDMA write of message and flag into the peer's
			// receive buffer and ring the doorbell; drain the QP at the
			// end (gaspi_wait).
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			var kerr error
			k := gpu.Kernel{Name: "pingpong.verbs", WGs: 1, WGSize: wgSize, Body: func(wg *gpu.WG) {
				for i := range pp.Iters {
					if me != 0 {
						wg.PollUntil(rbuf+mem.Addr(size), true, "pingpong arrival", arrived(i))
					}
					copyBody(wg, i)
					if kerr = dv.write(wg, sbuf, peer, size+8, size+8); kerr != nil {
						return
					}
					if me == 0 {
						wg.PollUntil(rbuf+mem.Addr(size), true, "pingpong reply", arrived(i))
					}
				}
				if me == 0 {
					end = wg.Now()
				}
				kerr = dv.drain(wg)
			}}
			nd.Stream.Wait(nd.Stream.Launch(k))
			return kerr
		case "triggered":
			// One persistent kernel per rank: it polls its arrival flag,
			// copies, and fires the triggered put registered for that hop
			// with a store to the NIC's trigger address.
			const tagBase = 100
			for i := range pp.Iters {
				nd.TN.TrigPut(uint64(tagBase+i), gputn.Put{Src: sbuf, Length: size + 8, Target: peer, PT: nd.RDMA.PT()}, 1)
			}
			trig := nd.TN.TriggerAddr()
			setupDone(nd)
			if me == 0 {
				start = nd.Host.Now()
			}
			k := gpu.Kernel{Name: "pingpong.persistent", WGs: 1, WGSize: wgSize, Body: func(wg *gpu.WG) {
				for i := range pp.Iters {
					if me != 0 {
						wg.PollUntil(rbuf+mem.Addr(size), true, "pingpong arrival", arrived(i))
					}
					copyBody(wg, i)
					wg.Release(gpu.System)
					gputn.Trigger(wg, trig, uint64(tagBase+i))
					if me == 0 {
						wg.PollUntil(rbuf+mem.Addr(size), true, "pingpong reply", arrived(i))
					}
				}
				if me == 0 {
					end = wg.Now()
				}
			}}
			nd.Stream.Wait(nd.Stream.Launch(k))
		}
		return nil
	})
	if err := e.Run(); err != nil {
		return PingPongResult{}, err
	}
	if err := g.Err(); err != nil {
		return PingPongResult{}, err
	}
	if end <= start {
		return PingPongResult{}, fmt.Errorf("%s pingpong: rank 0 never detected the last reply", s)
	}
	total := end - start
	half := total / sim.Time(2*pp.Iters)
	res := PingPongResult{Impl: im.Name, Peer: pp.Peer, Total: total, Half: half,
		GBps: float64(size) / half.Seconds() / 1e9}
	if m := c.Nodes[0].Mem; m.Functional() {
		if !bytes.Equal(m.Bytes(src, int(size)), m.Bytes(rbuf0, int(size))) {
			return res, fmt.Errorf("%s pingpong: rank 0's reply differs from the data it sent", s)
		}
		res.Verified = true
	}
	return res, nil
}
