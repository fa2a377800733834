package nbc

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
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
	// StepSignals, when set, are for schedules whose partner changes from
	// step to step (recursive halving-doubling), where counting arrivals
	// per node would take a later step's partner, landing first, for the
	// awaited one. Syncs and data arrivals then carry their op's step
	// (tag Step+1) and are awaited per step; the task of step s names
	// kernel index Kernel+s, which every node registered with a completion
	// signal of its own, StepSignals[s] (1 until that step's incoming task
	// ran, then 0), the signal TaskWait of step s waits on.
	StepSignals []mem.Addr
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
// Syncs and arrivals are counted per node, not per peer, when each comes
// from one neighbour (the ring's schedules), else per step
// (TaskSetup.StepSignals). It is a StepTransport (and
// StepTaskTransport): Wait runs its progress loop as steps of the host
// thread (the runtime's Begin*/Try forms, model/xtq/steps.go).
type overTasks struct {
	rt       *xtq.Runtime
	ts       TaskSetup
	syncs    uint64 // notifications expected so far
	arrivals uint64
	tasks    uint64
	open     []*taskReq
	args     [4]uint64 // an XtqPut's arguments (the runtime copies them)
}

// OverTasks returns a TaskTransport over rt.
func OverTasks(rt *xtq.Runtime, ts TaskSetup) TaskTransport {
	return &overTasks{rt: rt, ts: ts}
}

// taskReq is an outstanding op: notifications on a channel (ch ≥ 0) until
// their count reaches n, or (ch < 0) the node's completion signal down to
// n. A nil what means it is complete at once.
type taskReq struct {
	o    *overTasks
	ch   int
	tag  uint64   // notifications: counted with this tag only (0: all)
	sig  mem.Addr // the signal (ch < 0)
	n    uint64
	what string
}

// Done reports completion from the node's state.
func (r *taskReq) Done() bool {
	switch {
	case r.o == nil:
		return true
	case r.ch >= 0:
		return r.o.rt.NotifiedTag(r.ch, r.tag) >= r.n
	default:
		return r.o.rt.Host().CPU().Mem().Load64(r.sig) <= r.n
	}
}

// below reports whether a signal value v is at most the request's count.
func (r *taskReq) below(v uint64) bool { return v <= r.n }

// wait blocks the host until the request holds.
func (r *taskReq) wait() {
	if r.ch >= 0 {
		r.o.rt.WaitNotifyTag(r.ch, r.tag, r.n, r.what)
	} else {
		r.o.rt.SignalWait(r.sig, r.what, r.below)
	}
}

// beginWait starts wait as steps.
func (r *taskReq) beginWait() {
	if r.ch >= 0 {
		r.o.rt.BeginWaitNotifyTag(r.ch, r.tag, r.n, r.what)
	} else {
		r.o.rt.BeginSignalWait(r.sig, r.what, r.below)
	}
}

var doneReq = &taskReq{}

func (o *overTasks) track(r *taskReq) Request {
	o.open = append(o.open, r)
	return r
}

// perStep reports whether arrivals are counted per step.
func (o *overTasks) perStep() bool { return o.ts.StepSignals != nil }

// tag is the tag op's messages carry (0: none).
func (o *overTasks) tag(op Op) uint64 {
	if !o.perStep() {
		return 0
	}
	return uint64(op.Step) + 1
}

func (o *overTasks) Isend(op Op) (Request, error) {
	if op.Len == 0 {
		o.rt.NotifyTag(op.Peer, xtq.ChanSync, o.tag(op))
	} else {
		o.rt.PutDataTag(op.Peer, op.Addr, op.Len, op.Offset, o.tag(op))
	}
	return doneReq, nil
}

// BeginIsend starts Isend as steps.
func (o *overTasks) BeginIsend(op Op) (Request, error) {
	if op.Len == 0 {
		o.rt.BeginNotifyTag(op.Peer, xtq.ChanSync, o.tag(op))
	} else {
		o.rt.BeginPutDataTag(op.Peer, op.Addr, op.Len, op.Offset, o.tag(op))
	}
	return doneReq, nil
}

func (o *overTasks) Irecv(op Op) (Request, error) {
	ch, want := xtq.ChanData, &o.arrivals
	what := fmt.Sprintf("data of step %d", op.Step)
	if op.Len == 0 {
		ch, want, what = xtq.ChanSync, &o.syncs, fmt.Sprintf("resource-ready sync of step %d", op.Step)
	}
	if o.perStep() { // one message per (channel, step)
		return o.track(&taskReq{o: o, ch: ch, tag: o.tag(op), n: 1, what: what}), nil
	}
	*want++
	return o.track(&taskReq{o: o, ch: ch, n: *want, what: what}), nil
}

// BeginIrecv is Irecv, which does not wait.
func (o *overTasks) BeginIrecv(op Op) (Request, error) { return o.Irecv(op) }

func (o *overTasks) Task(op Op) (Request, error) {
	switch op.Kind {
	case TaskPost:
		o.rt.PostBuffer(o.ts.Recv, o.ts.RecvLen)
		return doneReq, nil
	case XtqPut:
		return doneReq, o.rt.Put(o.xtqTask(op))
	}
	return o.taskWait(op)
}

// BeginTask starts Task as steps.
func (o *overTasks) BeginTask(op Op) (Request, error) {
	switch op.Kind {
	case TaskPost:
		o.rt.BeginPostBuffer(o.ts.Recv, o.ts.RecvLen)
		return doneReq, nil
	case XtqPut:
		return doneReq, o.rt.BeginPut(o.xtqTask(op))
	}
	return o.taskWait(op)
}

// xtqTask is the task of an XtqPut op.
func (o *overTasks) xtqTask(op Op) xtq.Task {
	grid, wg := o.ts.Grid(op.Len)
	o.args = [4]uint64{0, 0, op.Offset, op.Len}
	k := o.ts.Kernel
	if o.perStep() {
		k += uint64(op.Step)
	}
	return xtq.Task{Target: op.Peer, Kernel: k, Queue: o.ts.Queue, Grid: grid, WGSize: wg,
		Args: o.args[:], Payload: op.Addr, PayloadLen: op.Len}
}

// taskWait is a TaskWait op (no time passes); any other kind is an error.
func (o *overTasks) taskWait(op Op) (Request, error) {
	if op.Kind != TaskWait {
		return nil, fmt.Errorf("nbc: %s is not a remote-task op", op.Kind)
	}
	what := fmt.Sprintf("incoming task of step %d", op.Step)
	if o.perStep() {
		if op.Step < 0 || op.Step >= len(o.ts.StepSignals) {
			return nil, fmt.Errorf("nbc: task wait of step %d: the node has signals for steps 0..%d", op.Step, len(o.ts.StepSignals)-1)
		}
		return o.track(&taskReq{o: o, ch: -1, sig: o.ts.StepSignals[op.Step], what: what}), nil
	}
	o.tasks++
	if o.tasks > o.ts.Tasks {
		return nil, fmt.Errorf("nbc: task wait %d of a node that expects %d tasks", o.tasks, o.ts.Tasks)
	}
	return o.track(&taskReq{o: o, ch: -1, sig: o.ts.Signal, n: o.ts.Tasks - o.tasks, what: what}), nil
}

// Poll counts the notifications that arrived, without blocking.
func (o *overTasks) Poll() { o.rt.WaitNotify(xtq.ChanSync, 0, "poll") }

// Block waits for the oldest outstanding op that is not done.
func (o *overTasks) Block() {
	if r := o.nextOpen(); r != nil {
		r.wait()
	}
}

// BeginBlock starts Block as steps.
func (o *overTasks) BeginBlock() {
	if r := o.nextOpen(); r != nil {
		r.beginWait()
	}
}

// nextOpen drops the outstanding ops that are done, oldest first, and
// returns the first that is not (nil: none).
func (o *overTasks) nextOpen() *taskReq {
	for len(o.open) > 0 {
		r := o.open[0]
		o.open = o.open[1:]
		if !r.Done() {
			return r
		}
	}
	return nil
}

// Step charges the dispatch of a round (sw.nbc_step).
func (o *overTasks) Step() { o.rt.Host().Instr(o.ts.StepInstr) }

// BeginStep starts Step as steps.
func (o *overTasks) BeginStep() { o.rt.BeginInstr(o.ts.StepInstr) }

// Try advances the call begun last (StepTransport).
func (o *overTasks) Try() bool { return o.rt.Try() }

// Proc returns the host thread's process, which runs the steps.
func (o *overTasks) Proc() *sim.Proc { return o.rt.Host().Proc }
