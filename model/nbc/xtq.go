package nbc

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/xtq"
)

// TaskSetup is what the remote-task transport needs to turn schedule ops
// into tasks: the kernel and queue indices every XtqPut names, the grid of
// a task over n bytes, the receive buffer a TaskPost re-posts, and the
// node's completion signal (Tasks incoming tasks in all, decremented once
// per task).
type TaskSetup struct {
	Kernel  uint64
	Queue   uint16
	Grid    func(n uint64) (grid, wgSize int)
	Recv    mem.Addr
	RecvLen uint64
	Signal  mem.Addr
	Tasks   uint64
	// StepInstr is the host's dispatch cost of a round (sw.nbc_step).
	StepInstr int
}

// overTasks runs schedules over a remote-task runtime (XTQ or HSA):
//
//   - Send/Recv of zero bytes are the resource-ready sync: a zero-length
//     notification, and waiting for the next one;
//   - Send/Recv of data are plain one-sided puts into the peer's exposed
//     buffer at op.Offset, and waiting for the next arrival;
//   - XtqPut is a task whose kernel combines the data at the peer;
//     TaskPost re-posts the receive buffer; TaskWait waits on the signal.
//
// Syncs and arrivals are counted per node, not per peer: the ring's
// schedules receive each from one neighbour.
type overTasks struct {
	rt       *xtq.Runtime
	ts       TaskSetup
	syncs    uint64 // notifications expected so far
	arrivals uint64
	tasks    uint64
	open     []*taskReq
}

// OverTasks returns a TaskTransport over rt.
func OverTasks(rt *xtq.Runtime, ts TaskSetup) TaskTransport {
	return &overTasks{rt: rt, ts: ts}
}

// taskReq is an outstanding op: done reports completion from the node's
// state; wait blocks the host until it holds.
type taskReq struct {
	done func() bool
	wait func()
}

func (r *taskReq) Done() bool { return r.done() }

var doneReq = &taskReq{done: func() bool { return true }, wait: func() {}}

func (o *overTasks) track(r *taskReq) Request {
	o.open = append(o.open, r)
	return r
}

func (o *overTasks) Isend(op Op) (Request, error) {
	if op.Len == 0 {
		o.rt.Notify(op.Peer, xtq.ChanSync)
	} else {
		o.rt.PutData(op.Peer, op.Addr, op.Len, op.Offset)
	}
	return doneReq, nil
}

func (o *overTasks) Irecv(op Op) (Request, error) {
	ch, want := xtq.ChanData, &o.arrivals
	what := fmt.Sprintf("data of step %d", op.Step)
	if op.Len == 0 {
		ch, want, what = xtq.ChanSync, &o.syncs, fmt.Sprintf("resource-ready sync of step %d", op.Step)
	}
	*want++
	n := *want
	return o.track(&taskReq{
		done: func() bool { return o.rt.Notified(ch) >= n },
		wait: func() { o.rt.WaitNotify(ch, n, what) },
	}), nil
}

func (o *overTasks) Task(op Op) (Request, error) {
	switch op.Kind {
	case TaskPost:
		o.rt.PostBuffer(o.ts.Recv, o.ts.RecvLen)
		return doneReq, nil
	case XtqPut:
		grid, wg := o.ts.Grid(op.Len)
		err := o.rt.Put(xtq.Task{Target: op.Peer, Kernel: o.ts.Kernel, Queue: o.ts.Queue, Grid: grid, WGSize: wg,
			Args: []uint64{0, 0, op.Offset, op.Len}, Payload: op.Addr, PayloadLen: op.Len})
		return doneReq, err
	case TaskWait:
		o.tasks++
		if o.tasks > o.ts.Tasks {
			return nil, fmt.Errorf("nbc: task wait %d of a node that expects %d tasks", o.tasks, o.ts.Tasks)
		}
		left := o.ts.Tasks - o.tasks
		m := o.rt.Host().CPU().Mem()
		what := fmt.Sprintf("incoming task of step %d", op.Step)
		return o.track(&taskReq{
			done: func() bool { return m.Load64(o.ts.Signal) <= left },
			wait: func() { o.rt.SignalWait(o.ts.Signal, what, func(v uint64) bool { return v <= left }) },
		}), nil
	}
	return nil, fmt.Errorf("nbc: %s is not a remote-task op", op.Kind)
}

// Poll counts the notifications that arrived, without blocking.
func (o *overTasks) Poll() { o.rt.WaitNotify(xtq.ChanSync, 0, "poll") }

// Block waits for the oldest outstanding op that is not done.
func (o *overTasks) Block() {
	for len(o.open) > 0 {
		r := o.open[0]
		o.open = o.open[1:]
		if !r.done() {
			r.wait()
			return
		}
	}
}

// Step charges the dispatch of a round (sw.nbc_step).
func (o *overTasks) Step() { o.rt.Host().Instr(o.ts.StepInstr) }
