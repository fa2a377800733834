package workload

import (
	"fmt"
	"math/bits"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/nbc"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// kernelRHD is the kernel lookup index of the remote-task rhd's step 0
// (the fold-in); halving step s's reduction is at kernelRHD+s. Each index
// is the same reduction kernel registered with a completion signal of its
// own, so that a node waits for the task of the step it is at, whichever
// partner's task lands first (nbc.TaskSetup.StepSignals). The indices
// stay below taskQueue (kernelRHD + log2 n < 42 for any node count), so
// CheckXtqTable's refusal covers them.
const kernelRHD = 3

// rhdSteps is m = log2 p, the halving (and doubling) steps on n nodes.
func rhdSteps(n int) int { return bits.Len(uint(n)) - 1 }

// rhdTaskSchedule is node i's rhd allreduce over remote tasks (XTQ): the
// steps of rhdSchedule (tag 0 the fold-in, 1..m halving, m+1..2m
// doubling, 2m+1 the hand-back), with every message that rhdSchedule
// receives and reduces sent as a task whose kernel adds it into the
// partner's vector at its offset (XtqPut, then TaskWait for the node's own
// incoming task of the step), and every message it receives in place sent
// as a plain put into the partner's exposed vector (Send, Recv of data).
// Resource-ready syncs (zero-length Send/Recv) tell a task's sender that
// the target's receive buffer is posted: with every step's resources
// posted up front (perRound false), one round of them with every partner
// before any XtqPut is issued, as the ring's first round; otherwise a
// TaskPost and the step partner's sync before each task step. Every
// arrival is counted per step (nbc.TaskSetup.StepSignals).
func rhdTaskSchedule(l *rhdLayout, base mem.Addr, i int, perRound bool) nbc.Schedule {
	m := rhdSteps(l.n)
	whole := uint64(l.elems) * 4
	r := l.rest()
	var sched nbc.Schedule
	// sync is the resource-ready exchange before task step st with peer:
	// send says the node's buffer is posted (it receives a task), recv
	// waits for the peer's (it sends one).
	var first nbc.Round // perRound false: every sync before any XtqPut
	sync := func(st, peer int, send, recv bool) {
		var rd nbc.Round
		if perRound && send {
			rd = append(rd, nbc.Op{Kind: nbc.TaskPost, Peer: peer, Step: st})
		}
		if send {
			rd = append(rd, nbc.Op{Kind: nbc.Send, Peer: peer, Step: st})
		}
		if recv {
			rd = append(rd, nbc.Op{Kind: nbc.Recv, Peer: peer, Step: st})
		}
		if perRound {
			sched = append(sched, rd)
		} else {
			first = append(first, rd...)
		}
	}
	if i < 2*r && i%2 == 0 { // extra rank: hand the vector over as a task, take the result back
		sync(0, i+1, false, true)
		return append(append(sched, first),
			nbc.Round{{Kind: nbc.XtqPut, Peer: i + 1, Step: 0, Addr: base, Len: whole}},
			nbc.Round{{Kind: nbc.Recv, Peer: i + 1, Step: 2*m + 1, Addr: base, Len: whole}})
	}
	v := i - r
	if i < 2*r {
		v = i / 2
	}
	// The task rounds, each after its syncs when per round.
	var tasks nbc.Schedule
	task := func(rd nbc.Round) {
		if perRound {
			sched = append(sched, rd)
		} else {
			tasks = append(tasks, rd)
		}
	}
	if i < 2*r {
		sync(0, i-1, true, false)
		task(nbc.Round{{Kind: nbc.TaskWait, Peer: i - 1, Step: 0}})
	}
	lo := 0
	for j := range m { // recursive halving: distance p/2, p/4, …, 1 blocks
		keep, give, d, peer := l.halvingStep(v, lo, j)
		sOff, sLen := l.blocks(give, d)
		sync(1+j, peer, true, true)
		task(nbc.Round{
			{Kind: nbc.XtqPut, Peer: peer, Chunk: give, Step: 1 + j, Addr: base + mem.Addr(sOff), Len: sLen, Offset: sOff},
			{Kind: nbc.TaskWait, Peer: peer, Chunk: keep, Step: 1 + j},
		})
		lo = keep
	}
	if !perRound {
		sched = append(append(sched, first), tasks...)
	}
	for j := range m { // recursive doubling: distance 1, 2, …, p/2 blocks
		other, d, peer := l.doublingStep(v, lo, j)
		oOff, oLen := l.blocks(lo, d)
		pOff, pLen := l.blocks(other, d)
		sched = append(sched, nbc.Round{
			{Kind: nbc.Send, Peer: peer, Chunk: lo, Step: 1 + m + j, Addr: base + mem.Addr(oOff), Len: oLen, Offset: oOff},
			{Kind: nbc.Recv, Peer: peer, Chunk: other, Step: 1 + m + j, Addr: base + mem.Addr(pOff), Len: pLen},
		})
		lo = min(lo, other)
	}
	if i < 2*r {
		sched = append(sched, nbc.Round{{Kind: nbc.Send, Peer: i - 1, Step: 2*m + 1, Addr: base, Len: whole}})
	}
	return sched
}

// rhdTaskRecv returns the receive buffer node i's tasks land in: with
// every step's resources posted at once, the sum of the tasks' command
// packets, arguments and payloads (they land back to back, in whatever
// order), else the largest one; and the steps it receives a task in.
func rhdTaskRecv(l *rhdLayout, i int, perRound bool) (size uint64, steps []int) {
	cmd := xtq.Task{Args: make([]uint64, 4)}.CmdLen()
	add := func(st int, nb uint64) {
		steps = append(steps, st)
		if perRound {
			size = max(size, cmd+nb)
		} else {
			size += cmd + nb
		}
	}
	r := l.rest()
	if i < 2*r && i%2 == 0 {
		return 0, nil
	}
	v := i - r
	if i < 2*r {
		v = i / 2
		add(0, uint64(l.elems)*4)
	}
	lo := 0
	for j := range rhdSteps(l.n) {
		keep, _, d, _ := l.halvingStep(v, lo, j)
		_, kLen := l.blocks(keep, d)
		add(1+j, kLen)
		lo = keep
	}
	return size, steps
}

// remoteAllreduceRHD is XTQ's allreduce with algorithm rhd: the schedule
// rhdTaskSchedule over the remote-task transport, arrivals counted per
// step. Each node registers the reduction kernel at kernelRHD+s for every
// step s it receives a task in, with the vector as the target buffer and
// a signal of the step's own.
func (a Allreduce) remoteAllreduceRHD(nd *strategy.Node, l *rhdLayout, base mem.Addr) error {
	rt, err := remoteTasks(nd)
	if err != nil {
		return err
	}
	if err := initTaskQueue(rt); err != nil {
		return err
	}
	recvLen, steps := rhdTaskRecv(l, nd.Rank, a.SyncPerRound)
	sigs := make([]mem.Addr, rhdSteps(l.n)+1)
	code := reduceCode() // one kernel's bodies, whichever index launches it
	for _, st := range steps {
		sigs[st] = rt.NewSignal(fmt.Sprintf("allreduce.signal.%d", st), 1)
		if _, err := rt.RegisterKernel(kernelRHD+uint64(st), code, base, sigs[st]); err != nil {
			return err
		}
	}
	var recv mem.Addr
	if recvLen > 0 {
		recv = nd.Mem.Alloc(mem.Host, recvLen, "allreduce.recv")
		if !a.SyncPerRound {
			rt.PostBuffer(recv, recvLen)
		}
	}
	rt.Expose(base, l.vecBytes)
	rt.Barrier()
	tr := nbc.OverTasks(rt, nbc.TaskSetup{Kernel: kernelRHD, Queue: taskQueue, Recv: recv, RecvLen: recvLen,
		StepSignals: sigs, StepInstr: nd.SW.NBCStep,
		Grid: func(nb uint64) (int, int) { return taskGrid(nd, nb, a.WGSize), a.WGSize }})
	return nbc.Start(tr, nil, rhdTaskSchedule(l, base, nd.Rank, a.SyncPerRound)).Wait()
}

// runRHDTasks is Run for algorithm rhd on XTQ (remoteAllreduceRHD): the
// rhd layout's vector per node, its inputs and exact check.
func (a Allreduce) runRHDTasks(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (AllreduceResult, error) {
	n := len(c.Nodes)
	lay := newRHDLayout(int(a.Size/4), n)
	return runRHDNodes(c, s, cfg, lay, lay.vecBytes, func(nd *strategy.Node, base mem.Addr) error {
		return a.remoteAllreduceRHD(nd, lay, base)
	})
}
