package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Latency is the GPU-TN latency decomposition microbenchmark (the dissertation
// §8): on two nodes, an initiator kernel copies Size bytes and the data is
// sent to the target, whose CPU polls for it.
type Latency struct {
	Size unit.Bytes
}

// Segment is one phase of the timeline, on one absolute time axis.
type Segment struct {
	Node       string // "initiator" or "target"
	Phase      string
	Start, End sim.Time
}

// LatencyResult is the decomposition of one strategy.
type LatencyResult struct {
	Segments []Segment
	EndToEnd sim.Time // initiator kernel launch to target detect
	Verified bool
}

// Run runs the microbenchmark under s on a two-node cluster.
func (lt Latency) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (LatencyResult, error) {
	if len(c.Nodes) != 2 {
		return LatencyResult{}, fmt.Errorf("latency microbenchmark needs 2 nodes, got %d", len(c.Nodes))
	}
	if lt.Size < 1 || lt.Size%8 != 0 {
		return LatencyResult{}, fmt.Errorf("latency size %v: must be a positive multiple of 8 bytes", lt.Size)
	}
	im, _, err := LatencyDef().implFor(s)
	if err != nil {
		return LatencyResult{}, err
	}
	size := uint64(lt.Size)
	var (
		run                     *gpu.Run
		seen, posted            sim.Time
		arrived, detected       sim.Time
		srcs, bufs              [2]mem.Addr
		triggerStart, triggerAt sim.Time
		vl                      verbsLatency
	)
	vl.remoteBuffer = &bufs[1]
	bases := newPeerBases(2)
	viaPeer := false // GDS between two GPUs of one node: a peer copy
	e := c.Engine
	var putStart, putPosted sim.Time
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		var dev *shmem.Device
		var src, buf mem.Addr
		if im.Name == "device-shmem" { // both buffers in the symmetric heap
			var err error
			if dev, err = shmemDevice(nd, 1); err != nil {
				return err
			}
			defer dev.Finalize()
			src, err = dev.Malloc(size)
			if err != nil {
				return err
			}
			if buf, err = dev.Malloc(size + 8); err != nil {
				return err
			}
		} else {
			src = nd.Mem.Alloc(nd.Pool, size, "src")
			buf = nd.Mem.AllocData(nd.Pool, size+8, "buf") // data + arrival flag
		}
		srcs[nd.Rank], bufs[nd.Rank] = src, buf
		bases.put(nd.Rank, buf)
		if b := nd.Mem.Bytes(src, int(size)); b != nil {
			for i := range b {
				b[i] = byte(i*29 + 3)
			}
		}
		if nd.RDMA != nil {
			nd.RDMA.Expose(buf, size+8)
		}
		if im.Name == "device-verbs" {
			if err := vl.register(nd, buf, size+8); err != nil {
				return err
			}
		}
		if nd.Rank == 1 {
			return lt.target(nd, buf, size, &detected)
		}
		put := rdma.Put{Src: buf, Length: size + 8, Target: 1}
		copyKernel := func(onDone func(wg *gpu.WG)) gpu.Kernel {
			return gpu.Kernel{Name: "copy", WGs: 1, WGSize: max(1, min(int(size/4), nd.GPU.MaxWGSize)), Body: func(wg *gpu.WG) {
				if d, sb := wg.Mem().Bytes(buf, int(size)), wg.Mem().Bytes(src, int(size)); d != nil && sb != nil {
					copy(d, sb)
				}
				wg.VALU(2)
				wg.StreamOut(2*size, size) // the copy's writes
				wg.Store64(buf+mem.Addr(size), 1)
				if onDone != nil {
					onDone(wg)
				}
			}}
		}
		switch im.Name {
		case "kernel-boundary":
			run = nd.Stream.Launch(copyKernel(nil))
			nd.Stream.Wait(run)
			seen = nd.Host.Now()
			r, err := nd.MPI.Isend(buf, size+8, 1, 0)
			if err != nil {
				return err
			}
			posted = nd.Host.Now()
			nd.MPI.Wait(r)
		case "stream-triggered":
			if viaPeer = nd.Stream.ReachesPeer(1); viaPeer {
				// The target is a GPU of this node: the CP hands a copy
				// engine the peer copy over the node's GPU fabric.
				run = nd.Stream.Launch(copyKernel(nil))
				nd.Stream.CopyPeers([]stream.PeerCopy{bases.copyOf(nd, put)})
				nd.Stream.Synchronize()
				posted = nd.Stream.LastPeerCopy()
				return nil
			}
			id := nd.RDMA.Prepost(put)
			run = nd.Stream.Launch(copyKernel(nil))
			nd.Stream.NicTrigger(id)
			nd.Stream.Synchronize()
			posted = nd.Stream.LastNicTrigger()
		case "triggered":
			trig := nd.TN.TriggerAddr()
			run = nd.Stream.Launch(copyKernel(func(wg *gpu.WG) {
				wg.Release(gpu.System)
				triggerStart = wg.Now()
				gputn.Trigger(wg, trig, 7)
				triggerAt = wg.Now()
			}))
			nd.TN.TrigPut(7, gputn.Put{Src: put.Src, Length: put.Length, Target: 1, PT: nd.RDMA.PT()}, 1)
			nd.Stream.Wait(run)
			posted = triggerAt
		case "device-shmem":
			var putErr error
			k := copyKernel(func(wg *gpu.WG) {
				ctx, err := dev.CtxCreate(wg)
				if err != nil {
					putErr = err
					return
				}
				putStart = wg.Now()
				if putErr = ctx.PutmemNBI(buf, buf, size+8, 1); putErr != nil {
					return
				}
				putPosted = wg.Now()
				putErr = ctx.Destroy() // quiet: the put delivered
			})
			if err := dev.Cooperative(k); err != nil {
				return err
			}
			run = nd.Stream.Launch(k)
			nd.Stream.Wait(run)
			posted = putPosted
			return putErr
		case "device-verbs":
			tail, err := vl.post(nd, buf, size+8)
			if err != nil {
				return err
			}
			run = nd.Stream.Launch(copyKernel(tail))
			nd.Stream.Wait(run)
			posted = vl.rung
			return vl.postErr
		}
		return nil
	})
	// A zero-cost probe records when the data lands at the target.
	probe := e.Spawn("probe", func(p *sim.Proc) {
		// It polls until rank 1 allocated its buffer: a poller, so that a
		// rank stuck before that ends the run instead of the probe
		// polling forever (sim/poll.go).
		p.SetPoller("rank 1's receive buffer")
		for bufs[1] == 0 {
			p.PollStart()
			p.Sleep(sim.Nanosecond)
			if p.PollRound(bufs[1] != 0) {
				return
			}
		}
		p.StopPolling()
		m := c.Nodes[1].Mem
		p.Wait(m.Watch(bufs[1]+mem.Addr(size)), "arrival")
		arrived = p.Now()
	})
	probe.SetDaemon()
	if err := e.Run(); err != nil {
		return LatencyResult{}, err
	}
	if err := g.Err(); err != nil {
		return LatencyResult{}, err
	}
	res := LatencyResult{EndToEnd: detected - run.Queued}
	add := func(node, phase string, a, b sim.Time) {
		res.Segments = append(res.Segments, Segment{node, phase, a, b})
	}
	add("initiator", "kernel launch", run.Queued, run.BodyStart)
	add("initiator", "kernel body", run.BodyStart, run.BodyEnd)
	add("initiator", "kernel teardown", run.BodyEnd, run.Done)
	switch im.Name {
	case "kernel-boundary":
		add("initiator", "host observes completion", run.Done, seen)
		add("initiator", "CPU network post", seen, posted)
	case "stream-triggered":
		if viaPeer {
			add("initiator", "CP copy-engine post", run.Done, posted)
		} else {
			add("initiator", "CP network post", run.Done, posted)
		}
	case "triggered":
		add("initiator", "GPU trigger store", triggerStart, posted)
	case "device-verbs":
		add("initiator", "GPU WQE + doorbell", vl.start, posted)
	case "device-shmem":
		add("initiator", "GPU put request (device queue)", putStart, posted)
	}
	switch {
	case im.Name == "device-shmem":
		add("network", "service thread + NIC/wire", posted, arrived)
	case viaPeer:
		add("network", "copy engine + GPU fabric", posted, arrived)
	default:
		add("network", "NIC/wire", posted, arrived)
	}
	add("target", "target poll detect", arrived, detected)
	m0, m1 := c.Nodes[0].Mem, c.Nodes[1].Mem
	if m0.Functional() {
		want, got := m0.Bytes(srcs[0], int(size)), m1.Bytes(bufs[1], int(size))
		if string(want) != string(got) {
			return res, fmt.Errorf("%s latency: target buffer differs from the initiator's data", s)
		}
		res.Verified = true
	}
	return res, nil
}

// target waits for the data: MPI receive for HDN, polling the arrival flag
// otherwise.
func (lt Latency) target(nd *strategy.Node, buf mem.Addr, size uint64, detected *sim.Time) error {
	if nd.MPI != nil {
		r, err := nd.MPI.Irecv(buf, size+8, 0, 0)
		if err != nil {
			return err
		}
		nd.MPI.Wait(r)
	} else {
		nd.Host.WaitWord(buf+mem.Addr(size), "arrival flag", func(v uint64) bool { return v != 0 })
	}
	*detected = nd.Host.Now()
	return nil
}
