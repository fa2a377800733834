package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// TaskSpawn is the remote task spawn of the dissertation's XTQ chapter: on two nodes the
// initiator sends Size bytes and the target runs an active message that
// copies them into a target buffer — a GPU kernel started by the NIC
// (XTQ) or by the target CPU (HSA, HDN), or a handler on the target's
// application thread (CPU). The target CPU waits for completion.
type TaskSpawn struct {
	Size   unit.Bytes
	WGSize int // work-items per work-group of the copy kernel
	// Aim is what the initiator's task names and the target posts (HSA,
	// XTQ); nil: the registered indices and a buffer that fits exactly.
	Aim *TaskAim
	// CPUTask makes the active message a host function on the target's
	// CPU agent (the dissertation's XTQ chapter CPU command packet): an agent-dispatch packet
	// enqueued by the NIC (XTQ) or the progress thread (HSA) into a CPU
	// agent queue whose host thread runs the copy. Remote-task strategies
	// only.
	CPUTask bool
	// WarmTarget has the target's application thread write the target
	// buffer before the barrier (outside the timed window), so the buffer
	// is in that core's cache when the task runs, as a benchmark loop
	// leaves it after its first iteration; false: one cold spawn (the
	// buffer untouched since allocation).
	WarmTarget bool
}

// TaskAim sets the lookup indices a task spawn's initiator sends (the
// target registers kernelCopy and taskQueue) and the bytes of the receive
// buffer the target posts (0: exactly the task). A mismatch is bad input
// the target refuses with a failure naming it.
type TaskAim struct {
	Kernel uint64
	Queue  uint16
	Recv   unit.Bytes
}

// aim returns ts.Aim or the matching default.
func (ts TaskSpawn) aim() TaskAim {
	if ts.Aim != nil {
		return *ts.Aim
	}
	return TaskAim{Kernel: kernelCopy, Queue: taskQueue}
}

// TaskSpawnResult is one strategy's breakdown on one time axis (zero =
// the initiator starts posting).
type TaskSpawnResult struct {
	Impl string
	// Agent is what runs the active message: "GPU kernel", "CPU handler"
	// (the target's application thread, CPU strategy) or "CPU agent" (a
	// remote CPU task).
	Agent    string
	Phases   []Segment
	EndToEnd sim.Time // initiator post to completion observed at the target
	Verified bool
	// TableHits and TableMisses are the target NIC's lookup-table cache
	// counts (XTQ with nic.xtq_tables = host; else 0).
	TableHits, TableMisses uint64
}

// Phase names of the breakdown (the dissertation's XTQ chapter).
const (
	PhasePost       = "initiator post"
	PhaseTransfer   = "data transfer"
	PhaseEnqueue    = "target enqueue"
	PhaseLaunch     = "kernel launch"
	PhaseDispatch   = "function dispatch" // CPU task: the agent thread sees the doorbell and reads the packet
	PhaseExecute    = "execution"
	PhaseCompletion = "completion signal"
)

// TaskSpawnDef is the task spawn's registry entry.
func TaskSpawnDef() Def {
	return Def{
		Name:    "taskspawn",
		Summary: "2-node remote task spawn (active-message memcpy) latency breakdown (the dissertation's XTQ chapter)",
		Impls: []Impl{
			{Name: "remote-tasks", Needs: strategy.RemoteTasks},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		Baseline:      strategy.CPU,
		Preset:        "xtq", // the XTQ chapter's remote task spawn (Table 4.1)
		NotApplicable: taskSpawnNotApplicable(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			c, err := newCluster(hw, 2, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := TaskSpawn{Size: 4 * unit.KiB, WGSize: 256}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: 2, Time: r.EndToEnd, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// taskSpawnNotApplicable gives the reasons the task spawn does not run on
// the strategies without a receive-side launch path.
func taskSpawnNotApplicable() map[strategy.Strategy]string {
	m := gnnNotApplicable(spinNotApplicable("the active message is a memcpy kernel or host handler; the sPIN strategies run datatype handlers on the NIC only"),
		"starting a kernel when a message arrives needs the target CPU (HDN, HSA) or NIC (XTQ); GPUrdma's GPU threads poll their own CQs and the documents run no remote task spawn with it")
	m[strategy.GDS] = "starting work when a message arrives needs the target CPU (HDN, HSA) or NIC (XTQ); GDS only pre-posts the sender's puts"
	m[strategy.GPUTN] = "starting work when a message arrives needs the target CPU (HDN, HSA) or NIC (XTQ); GPU-TN only triggers the sender's puts"
	for _, d := range strategy.Registry() {
		if d.Caps.Has(strategy.DeviceShmem) && !d.Caps.Has(strategy.TwoSided) {
			m[d.Strategy] = "the device-shmem backends serve requests of kernels already running; starting a kernel when a message arrives needs the target CPU (HDN, HSA) or NIC (XTQ)"
		}
	}
	return m
}

// spawnTimes are the instants the breakdown is cut at.
type spawnTimes struct {
	start, posted, landed, bell, handler, detected sim.Time
	hits, misses                                   uint64
	run                                            *gpu.Run
	funcStart, funcEnd                             sim.Time     // CPU task: the function's run on the agent thread
	initiator                                      *xtq.Runtime // reads the NIC's issue time after the run
	hostIssue                                      bool         // a host path: the post ends at node 0's NIC issue (read after the run)
	nicLanded                                      bool         // the transfer ends at node 1's NIC landing (read after the run)
}

// Run runs the task spawn under s on a two-node cluster.
func (ts TaskSpawn) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (TaskSpawnResult, error) {
	if len(c.Nodes) != 2 {
		return TaskSpawnResult{}, fmt.Errorf("task spawn needs 2 nodes, got %d", len(c.Nodes))
	}
	if ts.Size < 1 || ts.Size > 64*unit.MiB {
		return TaskSpawnResult{}, fmt.Errorf("task spawn size %v: must be in [1B, 64MiB]", ts.Size)
	}
	if ts.WGSize < 1 || ts.WGSize > 1024 {
		return TaskSpawnResult{}, fmt.Errorf("task spawn work-group size %d: must be in [1, 1024]", ts.WGSize)
	}
	im, _, err := TaskSpawnDef().implFor(s)
	if err != nil {
		return TaskSpawnResult{}, err
	}
	if ts.CPUTask && im.Name != "remote-tasks" {
		return TaskSpawnResult{}, fmt.Errorf("task spawn: CPU tasks need a remote-task strategy (XTQ, HSA), not %s", s)
	}
	size := uint64(ts.Size)
	var tm spawnTimes
	var src, dst mem.Addr
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		buf := nd.Mem.Alloc(nd.Pool, size, "taskspawn")
		if nd.Rank == 0 {
			src = buf
			if b := nd.Mem.Bytes(buf, int(size)); b != nil {
				for i := range b {
					b[i] = byte(i*31 + 7)
				}
			}
		} else {
			dst = buf
			if ts.WarmTarget {
				nd.Host.ComputeOn(1, mem.Access{Addr: buf, Len: size, Write: true})
			}
		}
		switch {
		case ts.CPUTask:
			return ts.remoteCPU(nd, buf, &tm)
		case im.Name == "remote-tasks":
			return ts.remote(nd, buf, &tm)
		case im.Name == "host" && nd.RDMA != nil:
			return ts.hostRDMA(nd, buf, &tm)
		default:
			return ts.twoSided(nd, buf, &tm)
		}
	})
	if err := runTasks(c, g); err != nil {
		return TaskSpawnResult{}, err
	}
	// The post ends when the initiator's NIC begins the put (the phase
	// covers the command's build, its doorbell and the NIC's fetch of it),
	// for every strategy alike.
	if tm.initiator != nil {
		tm.posted = tm.initiator.IssueTime()
	}
	if tm.hostIssue {
		tm.posted = c.Nodes[0].NIC.LastIssue()
	}
	if tm.nicLanded {
		tm.landed = c.Nodes[1].NIC.LastLanded()
	}
	res := TaskSpawnResult{Impl: im.Name, Agent: ts.agent(im.Name), EndToEnd: tm.detected - tm.start, TableHits: tm.hits, TableMisses: tm.misses}
	add := func(phase string, a, b sim.Time) {
		node := "target"
		switch phase {
		case PhasePost:
			node = "initiator"
		case PhaseTransfer:
			node = "network"
		}
		res.Phases = append(res.Phases, Segment{Node: node, Phase: phase, Start: a - tm.start, End: b - tm.start})
	}
	add(PhasePost, tm.start, tm.posted)
	switch {
	case ts.CPUTask:
		add(PhaseTransfer, tm.posted, tm.landed)
		add(PhaseEnqueue, tm.landed, tm.bell)
		add(PhaseDispatch, tm.bell, tm.funcStart)
		add(PhaseExecute, tm.funcStart, tm.funcEnd)
		add(PhaseCompletion, tm.funcEnd, tm.detected)
	case im.Name == "remote-tasks":
		add(PhaseTransfer, tm.posted, tm.landed)
		add(PhaseEnqueue, tm.landed, tm.bell)
		add(PhaseLaunch, tm.bell, tm.run.BodyStart)
		add(PhaseExecute, tm.run.BodyStart, tm.run.BodyEnd)
		add(PhaseCompletion, tm.run.BodyEnd, tm.detected)
	case im.Name == "kernel-boundary":
		add(PhaseTransfer, tm.posted, tm.landed)
		add(PhaseLaunch, tm.landed, tm.run.BodyStart)
		add(PhaseExecute, tm.run.BodyStart, tm.run.BodyEnd)
		add(PhaseCompletion, tm.run.BodyEnd, tm.detected)
	case im.Name == "host":
		add(PhaseTransfer, tm.posted, tm.landed)
		add(PhaseEnqueue, tm.landed, tm.handler)
		add(PhaseExecute, tm.handler, tm.detected)
	}
	if m0, m1 := c.Nodes[0].Mem, c.Nodes[1].Mem; m0.Functional() {
		if string(m0.Bytes(src, int(size))) != string(m1.Bytes(dst, int(size))) {
			return res, fmt.Errorf("%s task spawn: the target buffer differs from the payload", s)
		}
		res.Verified = true
	}
	return res, nil
}

// remote is the XTQ example program (the dissertation's XTQ chapter): the target posts its
// receive buffer, creates the queue, registers the copy kernel and its
// signal at index 42, and enters the barrier, then waits on the signal;
// the initiator leaves the barrier and puts the task.
func (ts TaskSpawn) remote(nd *strategy.Node, buf mem.Addr, tm *spawnTimes) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	rt.UseLayer(xtq.LayerRDMA) // the microbenchmark's RDMA layer, not MPI
	size := uint64(ts.Size)
	aim := ts.aim()
	task := xtq.Task{Target: 1, Kernel: aim.Kernel, Queue: aim.Queue, Grid: copyGrid(nd, size, ts.WGSize), WGSize: ts.WGSize,
		Args: []uint64{0, 0, 0, size}, Payload: buf, PayloadLen: size}
	if nd.Rank == 0 {
		rt.Barrier()
		tm.start = nd.Host.Now()
		tm.initiator = rt
		return rt.Put(task)
	}
	recvLen := task.WireLen(rt.Mode())
	if aim.Recv > 0 {
		recvLen = uint64(aim.Recv)
	}
	recv := nd.Mem.Alloc(mem.Host, recvLen, "taskspawn.recv")
	rt.PostBuffer(recv, recvLen)
	q, err := rt.TaskingInit(taskQueue, queueSlots)
	if err != nil {
		return err
	}
	sig := rt.NewSignal("taskspawn.signal", 1)
	if _, err := rt.RegisterKernel(kernelCopy, copyCode(), buf, sig); err != nil {
		return err
	}
	rt.Barrier()
	rt.SignalWait(sig, "the copy task's completion signal", func(v uint64) bool { return v == 0 })
	tm.detected = nd.Host.Now()
	tm.landed, tm.bell = rt.TargetTimes()
	tm.hits, tm.misses = rt.TableCache()
	tm.run = q.Runs()[0]
	return nil
}

// agent names what runs the active message under implementation impl.
func (ts TaskSpawn) agent(impl string) string {
	switch {
	case ts.CPUTask:
		return "CPU agent"
	case impl == "host":
		return "CPU handler"
	}
	return "GPU kernel"
}

// remoteCPU is remote with a CPU task: the target creates a CPU agent
// queue (its own host thread) and registers the copy function and its
// signal at index 42; the initiator sends an agent-dispatch task.
func (ts TaskSpawn) remoteCPU(nd *strategy.Node, buf mem.Addr, tm *spawnTimes) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	rt.UseLayer(xtq.LayerRDMA)
	size := uint64(ts.Size)
	aim := ts.aim()
	if nd.Rank == 0 {
		rt.Barrier()
		tm.start = nd.Host.Now()
		tm.initiator = rt
		return rt.PutCPU(xtq.CPUTask{Target: 1, Function: aim.Kernel, Queue: uint32(aim.Queue), Args: [4]uint64{0, 0, 0, size},
			Payload: buf, PayloadLen: size})
	}
	recvLen := cpuTaskCmd + size
	if aim.Recv > 0 {
		recvLen = uint64(aim.Recv)
	}
	rt.PostBuffer(nd.Mem.Alloc(mem.Host, recvLen, "taskspawn.recv"), recvLen)
	q, err := rt.TaskingInitCPU(taskQueue, queueSlots)
	if err != nil {
		return err
	}
	sig := rt.NewSignal("taskspawn.signal", 1)
	if _, err := rt.RegisterFunction(kernelCopy, "copy", hostCopy, buf, sig); err != nil {
		return err
	}
	rt.Barrier()
	rt.SignalWait(sig, "the copy task's completion signal", func(v uint64) bool { return v == 0 })
	tm.detected = nd.Host.Now()
	tm.landed, tm.bell = rt.TargetTimes()
	tm.hits, tm.misses = rt.TableCache()
	r := q.Runs()[0]
	tm.funcStart, tm.funcEnd = r.Start, r.End
	return nil
}

// cpuTaskCmd is the bytes of a CPU task's command: the 64-byte
// agent-dispatch packet, its arguments embedded.
const cpuTaskCmd = 64

// hostCopy is the copy as a host function: args[3] bytes from the payload
// (args[1]) to the target buffer (args[0]) at offset args[2], streamed by
// the agent thread.
func hostCopy(c xtq.Call) {
	a := c.Args
	m := c.T.CPU().Mem()
	if d, s := m.Bytes(mem.Addr(a[0]+a[2]), int(a[3])), m.Bytes(mem.Addr(a[1]), int(a[3])); d != nil && s != nil {
		copy(d, s)
	}
	c.T.ComputeOn(1, mem.Access{Addr: mem.Addr(a[1]), Len: a[3]}, mem.Access{Addr: mem.Addr(a[0] + a[2]), Len: a[3], Write: true})
}

// copyGrid sizes the copy kernel: one work-item per 16 B, at most two
// work-groups per CU.
func copyGrid(nd *strategy.Node, size uint64, wgSize int) int {
	items := (int(size/16) + wgSize - 1) / wgSize
	return max(1, min(items, 2*nd.GPU.CUs)) * wgSize
}

// hostRDMA is the CPU active message on the thin RDMA layer of the XTQ
// chapter's microbenchmark (RdmaPostBuffer, puts, an event loop; no MPI):
// the target posts its receive buffer and sends a zero-length ready
// message; the initiator puts the payload; the target's application
// thread sees the PUT event and runs the handler, a host memcpy.
func (ts TaskSpawn) hostRDMA(nd *strategy.Node, buf mem.Addr, tm *spawnTimes) error {
	size := uint64(ts.Size)
	ready, inbox := nd.RDMA.NewMailbox(), nd.RDMA.NewMailbox()
	if nd.Rank == 0 {
		ready.Post(nd.Mem.Alloc(mem.Host, 8, "taskspawn.ready"), 8)
		ready.Wait("the target's ready message")
		tm.start = nd.Host.Now()
		nd.RDMA.Send(1, inbox.PT(), buf, size)
		tm.hostIssue, tm.nicLanded = true, true
		return nil
	}
	recv := nd.Mem.Alloc(nd.Pool, size, "taskspawn.recv")
	inbox.Post(recv, size)
	nd.RDMA.Send(0, ready.PT(), buf, 0)
	// The target's enqueue phase runs from the payload's landing (as
	// HSA's task: the NIC's event write, the thread's poll that sees it,
	// and the event's dequeue and dispatch to the handler,
	// sw.event_dispatch, charged once, by Wait).
	inbox.Wait("the active message")
	tm.handler = nd.Host.Now()
	if d, s := nd.Mem.Bytes(buf, int(size)), nd.Mem.Bytes(recv, int(size)); d != nil && s != nil {
		copy(d, s)
	}
	nd.Host.ComputeOn(1, mem.Access{Addr: recv, Len: size}, mem.Access{Addr: buf, Len: size, Write: true})
	tm.detected = nd.Host.Now()
	return nil
}

// twoSided is the CPU and HDN active message over MPI: the target posts
// its receive and sends a zero-length ready message (the barrier); the
// initiator sends the payload; the target's application thread completes
// the receive and runs the handler — a host memcpy (CPU) or a kernel it
// launches and waits for (HDN).
func (ts TaskSpawn) twoSided(nd *strategy.Node, buf mem.Addr, tm *spawnTimes) error {
	size := uint64(ts.Size)
	if nd.Rank == 0 {
		ready, err := nd.MPI.Irecv(buf, 0, 1, 1)
		if err != nil {
			return err
		}
		nd.MPI.Wait(ready)
		tm.start = nd.Host.Now()
		r, err := nd.MPI.Isend(buf, size, 1, 0)
		if err != nil {
			return err
		}
		tm.hostIssue = true
		nd.MPI.Wait(r)
		return nil
	}
	recv := nd.Mem.Alloc(nd.Pool, size, "taskspawn.recv")
	r, err := nd.MPI.Irecv(recv, size, 0, 0)
	if err != nil {
		return err
	}
	ready, err := nd.MPI.Isend(buf, 0, 0, 1)
	if err != nil {
		return err
	}
	nd.MPI.Wait(ready)
	nd.MPI.Wait(r)
	tm.landed = nd.Host.Now()
	if nd.Stream == nil { // host handler: MPI's Wait dispatched the receive's event
		tm.handler = nd.Host.Now()
		if d, s := nd.Mem.Bytes(buf, int(size)), nd.Mem.Bytes(recv, int(size)); d != nil && s != nil {
			copy(d, s)
		}
		nd.Host.ComputeOn(1, mem.Access{Addr: recv, Len: size}, mem.Access{Addr: buf, Len: size, Write: true})
		tm.detected = nd.Host.Now()
		return nil
	}
	k := gpu.Kernel{Name: "copy", WGs: copyGrid(nd, size, ts.WGSize) / ts.WGSize, WGSize: ts.WGSize, Body: func(wg *gpu.WG) {
		n := size
		lo, hi := uint64(wg.ID)*n/uint64(wg.Groups()), uint64(wg.ID+1)*n/uint64(wg.Groups())
		if d, s := wg.Mem().Bytes(buf+mem.Addr(lo), int(hi-lo)), wg.Mem().Bytes(recv+mem.Addr(lo), int(hi-lo)); d != nil && s != nil {
			copy(d, s)
		}
		wg.VALU(2 * int((hi-lo+uint64(4*wg.Size)-1)/uint64(4*wg.Size)))
		wg.StreamOut(2*(hi-lo), hi-lo) // half of it the copy's writes
	}}
	tm.run = nd.Stream.Launch(k)
	nd.Stream.Wait(tm.run)
	tm.detected = nd.Host.Now()
	return nil
}
