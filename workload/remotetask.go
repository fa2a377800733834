package workload

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/nbc"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Kernel and queue lookup indices every node registers the same way
// (the dissertation's XTQ chapter: globally coordinated indices).
const (
	taskQueue    = 42 // the user-mode queue remote tasks enter
	kernelCopy   = 42 // task spawn: copy the payload into the target buffer
	kernelReduce = 1  // Allreduce/Reduce: add the payload (float32 or float64) into the target buffer
	kernelAcc    = 2  // Accumulate: add float64 payload into the window
	queueSlots   = 64 // slots of the task queue
)

// CheckXtqTable returns the error the remote-task workloads (task spawn,
// Accumulate, Reduce, Allreduce over tasks) would meet registering their
// queue and kernels on NIC lookup tables of size entries under XTQ or HSA,
// nil when every index fits: experiments check it for every point before
// any point runs (bad input is refused before any work).
func CheckXtqTable(size int) error {
	if err := xtq.TableFits(size, "queue", taskQueue); err != nil {
		return err
	}
	return xtq.TableFits(size, "kernel", max(kernelCopy, kernelReduce, kernelAcc))
}

// xtqNotApplicable adds XTQ's reason to a workload's not-applicable map.
func xtqNotApplicable(m map[strategy.Strategy]string, why string) map[strategy.Strategy]string {
	m[strategy.XTQ] = why
	return m
}

// remoteTasks returns the node's remote-task runtime (strategies with
// RemoteTasks provide one).
func remoteTasks(nd *strategy.Node) (*xtq.Runtime, error) {
	rt, ok := strategy.Get[*xtq.Runtime](nd)
	if !ok {
		return nil, fmt.Errorf("%s provides no remote-task runtime", nd.Strategy)
	}
	return rt, nil
}

// copyCode copies args[3] bytes from the payload (args[1]) to the target
// buffer (args[0]) at offset args[2]; each work-group copies its share,
// charged as streamed bytes (read + write) and a few vector instructions.
func copyCode() gpu.KernelCode {
	return gpu.KernelCode{Name: "copy", Body: func(wg *gpu.WG, kernarg mem.Addr) {
		a := wg.LoadArgs(kernarg, 4)
		n := a[3]
		lo, hi := uint64(wg.ID)*n/uint64(wg.Groups()), uint64(wg.ID+1)*n/uint64(wg.Groups())
		if hi <= lo {
			return
		}
		dst, src := mem.Addr(a[0]+a[2]+lo), mem.Addr(a[1]+lo)
		m := wg.Mem()
		if d, s := m.Bytes(dst, int(hi-lo)), m.Bytes(src, int(hi-lo)); d != nil && s != nil {
			copy(d, s)
		}
		wg.VALU(2 * int((hi-lo+uint64(4*wg.Size)-1)/uint64(4*wg.Size)))
		wg.StreamOut(2*(hi-lo), hi-lo) // half of it the copy's writes
	}}
}

// reduceCode adds args[3] bytes of float32 at the payload (args[1]) into
// the target buffer (args[0]) at offset args[2]; each work-group takes a
// contiguous part (reduceRange's costs). The work-groups run as steps
// (reduceTaskWG): a task's kernel has up to two work-groups per CU and a
// ring allreduce runs n-1 tasks per node, so their bodies are kept for
// reuse (free: the code is loaded once per node, and a body is free again
// once it reported done, which its work-group never looks at again).
func reduceCode() gpu.KernelCode {
	var free []*reduceTaskWG
	return gpu.KernelCode{Name: "reduce", Steps: func(wg *gpu.WG, kernarg mem.Addr) gpu.StepBody {
		var r *reduceTaskWG
		if n := len(free); n > 0 {
			r, free = free[n-1], free[:n-1]
		} else {
			r = &reduceTaskWG{free: &free}
		}
		r.kernarg, r.loaded = kernarg, false
		return r
	}}
}

// reduceTaskWG is one work-group of reduceCode's kernel as steps: load the
// arguments, then reduceRange (reduceSteps).
type reduceTaskWG struct {
	kernarg mem.Addr
	args    [4]uint64
	loaded  bool
	red     reduceSteps
	free    *[]*reduceTaskWG // where it goes once done
}

// Step implements gpu.StepBody.
func (r *reduceTaskWG) Step(wg *gpu.WG) bool {
	if !r.loaded {
		if !wg.TryLoadArgs(r.kernarg, r.args[:]) {
			return false
		}
		r.loaded = true
		a := r.args
		elems := int(a[3] / 4)
		g := wg.Groups()
		r.red.set(mem.Addr(a[0]+a[2]), mem.Addr(a[1]), wg.ID*elems/g, (wg.ID+1)*elems/g, wg.Size)
	}
	if !r.red.step(wg) {
		return false
	}
	*r.free = append(*r.free, r)
	return true
}

// taskGrid returns the grid of a task over nb bytes: enough work-groups of
// wgSize items for one 4-byte element each, at most two per CU.
func taskGrid(nd *strategy.Node, nb uint64, wgSize int) int {
	items := (int(nb/4) + wgSize - 1) / wgSize
	return max(1, min(items, 2*nd.GPU.CUs)) * wgSize
}

// initTaskQueue creates and registers the node's task queue for
// workloads that launch a kernel per incoming task and never read their
// timelines, so the queue keeps none (gpu.AQLQueue.SetKeepRuns).
func initTaskQueue(rt *xtq.Runtime) error {
	q, err := rt.TaskingInit(taskQueue, queueSlots)
	if err != nil {
		return err
	}
	q.SetKeepRuns(false)
	return nil
}

// taskFailures joins the failure events of every node's runtime: what a
// run that stopped waiting reports as its cause.
func taskFailures(g *strategy.Group) error {
	var errs []error
	for _, nd := range g.Nodes {
		if nd == nil {
			continue
		}
		if rt, ok := strategy.Get[*xtq.Runtime](nd); ok {
			errs = append(errs, rt.Failures()...)
		}
	}
	return errors.Join(errs...)
}

// runGroup drives c's engine to the end; a stop (deadlock, invariant
// violation) is the error, else the first node's own error.
func runGroup(c *cluster.Cluster, g *strategy.Group) error {
	if err := c.Run(); err != nil {
		return err
	}
	return g.Err()
}

// firstErr returns the first non-nil error of errs (one per work-group),
// or nil.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runTasks drives c's engine; when it stops early, a failed task a node
// saw, else a node's own error, is the error.
func runTasks(c *cluster.Cluster, g *strategy.Group) error {
	err := c.Run()
	if f := taskFailures(g); f != nil {
		return f
	}
	if gerr := g.Err(); gerr != nil {
		return gerr // a node's own error explains why the others waited
	}
	if err != nil {
		if d := eqDrops(g); d != "" {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return err
}

// eqDrops names the first node whose remote-task event queues lost
// events to a full queue (what a run that stopped waiting may have waited
// for), "" when none did.
func eqDrops(g *strategy.Group) string {
	for _, nd := range g.Nodes {
		if nd == nil {
			continue
		}
		if rt, ok := strategy.Get[*xtq.Runtime](nd); ok && rt.Dropped() > 0 {
			return rt.DropReport()
		}
	}
	return ""
}

// remoteAllreduce is the XTQ Allreduce of the dissertation's XTQ chapter: the ring as
// a libNBC schedule (taskRingSchedule) run over the remote-task transport
// (nbc.OverTasks). The node's reduction kernel is registered with its
// vector as the target buffer and a signal counting the n-1 incoming
// reduce-scatter tasks.
func (a Allreduce) remoteAllreduce(nd *strategy.Node, l *ringLayout, base mem.Addr) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	n := l.n
	if err := initTaskQueue(rt); err != nil {
		return err
	}
	sig := rt.NewSignal("allreduce.signal", uint64(n-1))
	if _, err := rt.RegisterKernel(kernelReduce, reduceCode(), base, sig); err != nil {
		return err
	}
	maxChunk := uint64(0)
	for k := range n {
		_, nb := l.sub(k, 0)
		maxChunk = max(maxChunk, nb)
	}
	recvLen := xtq.Task{Args: make([]uint64, 4)}.CmdLen() + maxChunk
	if !a.SyncPerRound {
		// Every round's receive resources at once: one MANAGE_LOCAL
		// buffer the n-1 tasks land in back to back.
		recvLen *= uint64(n - 1)
	}
	recv := nd.Mem.Alloc(mem.Host, recvLen, "allreduce.recv")
	if !a.SyncPerRound {
		rt.PostBuffer(recv, recvLen)
	}
	rt.Expose(base, l.totalSize)
	rt.Barrier()
	tr := nbc.OverTasks(rt, nbc.TaskSetup{Kernel: kernelReduce, Queue: taskQueue, Recv: recv, RecvLen: recvLen,
		Signal: sig, Tasks: uint64(n - 1), StepInstr: nd.SW.NBCStep,
		Grid: func(nb uint64) (int, int) { return taskGrid(nd, nb, a.WGSize), a.WGSize }})
	rounds, round := taskRingRounds(l, base, nd.Rank, a.SyncPerRound)
	return nbc.StartRounds(tr, nil, rounds, round).Wait()
}

// taskRingRounds is taskRingSchedule made one round at a time, in the
// storage of the previous round (nbc.StartRounds): a node's whole
// schedule is 2(n-1) or more rounds, 0.4 MB per node at a thousand nodes.
func taskRingRounds(l *ringLayout, base mem.Addr, i int, perRound bool) (int, func(int) nbc.Round) {
	n := l.n
	right, left := mod(i+1, n), mod(i-1, n)
	// The reduce-scatter: a sync round (every step when perRound, else
	// the first) before each step's task round; the allgather follows.
	rsRounds := n - 1
	if perRound {
		rsRounds += n - 1
	} else {
		rsRounds++
	}
	buf := make(nbc.Round, 0, 3)
	return rsRounds + n - 1, func(r int) nbc.Round {
		buf = buf[:0]
		if r >= rsRounds {
			s := r - rsRounds
			k, rk := mod(i+1-s, n), mod(i-s, n)
			off, nb := l.sub(k, 0)
			roff, rnb := l.sub(rk, 0)
			return append(buf,
				nbc.Op{Kind: nbc.Send, Peer: right, Chunk: k, Step: n - 1 + s, Addr: base + mem.Addr(off), Len: nb, Offset: off},
				nbc.Op{Kind: nbc.Recv, Peer: left, Chunk: rk, Step: n - 1 + s, Addr: base + mem.Addr(roff), Len: rnb})
		}
		// Round r of the reduce-scatter: step st's sync or task.
		st, task := r, true
		if perRound {
			st, task = r/2, r%2 == 1
		} else if r > 0 {
			st = r - 1
		} else {
			task = false
		}
		if !task {
			if perRound {
				buf = append(buf, nbc.Op{Kind: nbc.TaskPost, Peer: left, Step: st})
			}
			return append(buf, nbc.Op{Kind: nbc.Send, Peer: left, Step: st}, nbc.Op{Kind: nbc.Recv, Peer: right, Step: st})
		}
		k := mod(i-st, n)
		off, nb := l.sub(k, 0)
		return append(buf,
			nbc.Op{Kind: nbc.XtqPut, Peer: right, Chunk: k, Step: st, Addr: base + mem.Addr(off), Len: nb, Offset: off},
			nbc.Op{Kind: nbc.TaskWait, Peer: left, Chunk: l.stepChunk(i, st), Step: st})
	}
}

// taskRingSchedule is node i's remote-task ring (the dissertation's XTQ chapter).
// (The whole schedule at once: the reference taskRingRounds, which the
// allreduce runs, is tested against.)
// The resource-ready sync (the dissertation's §4.3.3.2: zero-length
// send/receive pairs "before any XtqPuts are issued") tells the left
// neighbour the node's receive resources are posted and hears the same
// from the right one: once before the first XtqPut (perRound false, the
// resources of every round posted up front), or before every XtqPut round
// with the receive buffer re-posted (perRound true). Reduce-scatter step
// st then puts chunk i−st to the right neighbour — its kernel adds the
// chunk into the neighbour's copy — and waits for the node's own incoming
// task (the chunk it forwards next). Allgather step s is a plain put of
// chunk i+1−s into the right neighbour's vector and the wait for chunk
// i−s from the left.
func taskRingSchedule(l *ringLayout, base mem.Addr, i int, perRound bool) nbc.Schedule {
	n := l.n
	right, left := mod(i+1, n), mod(i-1, n)
	var sched nbc.Schedule
	for st := range n - 1 {
		k := mod(i-st, n)
		off, nb := l.sub(k, 0)
		switch {
		case perRound:
			sched = append(sched, nbc.Round{
				{Kind: nbc.TaskPost, Peer: left, Step: st},
				{Kind: nbc.Send, Peer: left, Step: st},
				{Kind: nbc.Recv, Peer: right, Step: st},
			})
		case st == 0:
			sched = append(sched, nbc.Round{
				{Kind: nbc.Send, Peer: left, Step: st},
				{Kind: nbc.Recv, Peer: right, Step: st},
			})
		}
		sched = append(sched,
			nbc.Round{
				{Kind: nbc.XtqPut, Peer: right, Chunk: k, Step: st, Addr: base + mem.Addr(off), Len: nb, Offset: off},
				{Kind: nbc.TaskWait, Peer: left, Chunk: l.stepChunk(i, st), Step: st},
			})
	}
	for s := range n - 1 {
		k, rk := mod(i+1-s, n), mod(i-s, n)
		off, nb := l.sub(k, 0)
		roff, rnb := l.sub(rk, 0)
		sched = append(sched, nbc.Round{
			{Kind: nbc.Send, Peer: right, Chunk: k, Step: n - 1 + s, Addr: base + mem.Addr(off), Len: nb, Offset: off},
			{Kind: nbc.Recv, Peer: left, Chunk: rk, Step: n - 1 + s, Addr: base + mem.Addr(roff), Len: rnb},
		})
	}
	return sched
}
