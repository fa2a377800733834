package xtq

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Mode selects who turns an arriving task into a GPU dispatch.
type Mode uint8

// Modes.
const (
	XTQ Mode = iota // the target NIC (the dissertation's XTQ chapter)
	HSA             // a host progress thread on the target (the dissertation)
)

// String returns the printed name of a Mode.
func (m Mode) String() string {
	if m == HSA {
		return "HSA"
	}
	return "XTQ"
}

// Layer is the messaging layer under HSA's two-sided sends.
type Layer uint8

// Layers.
const (
	// LayerMPI: Open MPI's two-sided path, its matching cost on both sides
	// (the collectives and Accumulate of the XTQ chapter).
	LayerMPI Layer = iota
	// LayerRDMA: the thin RDMA layer of the XTQ chapter's remote-task-spawn
	// microbenchmark (RdmaInit, RdmaPostBuffer): a Portals put matched
	// against a posted buffer and a PUT event the target polls, no MPI
	// matching path.
	LayerRDMA
)

// Notification channels for Notify and WaitNotify. Channels below
// chanBarrier are the workloads'.
const (
	ChanAck     = 0 // acks of completed tasks (MPI Accumulate)
	ChanSync    = 1 // resource-ready syncs (Reduce, Allreduce)
	ChanData    = 2 // arrivals of plain puts into an exposed region (PutData)
	chanBarrier = 3
	channels    = 4
)

// Tags. A notification or data put may carry a tag (a collective's step)
// in the match bits above the channel's: the entries of the notification
// portal ignore those bits, so a tagged message lands where an untagged one
// would, and WaitNotifyTag counts it per (channel, tag). A schedule whose
// partner changes from step to step (recursive halving-doubling) needs
// that: counted per node, an arrival of a later step's partner, landing
// first, would be taken for the awaited one.
const (
	tagShift = 8
	chanMask = 1<<tagShift - 1
	tagBits  = ^uint64(chanMask)
	// MaxTag is the largest tag a message may carry.
	MaxTag = 1<<(64-tagShift) - 1
)

// Task is one remote task: a kernel dispatch on the target's GPU with its
// arguments and a payload.
type Task struct {
	Target int
	Kernel uint64 // kernel lookup index
	Queue  uint16 // queue lookup index
	Grid   int    // work-items (a multiple of WGSize)
	WGSize int
	// Args are the kernel arguments; 0 and 1 are overwritten at the target
	// with the kernel's registered buffer and the payload address.
	Args       []uint64
	Payload    mem.Addr
	PayloadLen uint64
}

// CmdLen returns the bytes of command packet and arguments t sends.
func (t Task) CmdLen() uint64 { return gpu.AQLPacketSize + 8*uint64(len(t.Args)) }

// Stats are a node's remote-task counters and last timestamps.
type Stats struct {
	Tasks      uint64   // tasks sent
	Enqueued   uint64   // HSA: tasks the progress thread enqueued
	Notifies   uint64   // zero-length notifications sent
	LastLanded sim.Time // HSA: when the last task's receive event became visible
	LastBell   sim.Time // HSA: when the last doorbell store became visible
}

type state struct {
	mode    Mode
	nic     *nic.NIC
	gpu     *gpu.GPU
	mem     *mem.Memory
	sw      cost.Spec
	rank    int
	size    int
	taskEQ  *nic.EQ
	taskPT  int
	noteEQ  *nic.EQ
	notePT  int
	noteBuf mem.Addr
	notes   [channels]uint64
	// tagged counts tagged notifications per (tag, channel), index
	// tag·channels + channel, grown to the largest tag seen.
	tagged   []uint64
	barriers uint64
	posted   map[mem.Addr]*nic.MEntry
	kernels  map[uint64]nic.XtqKernel // HSA's host tables
	queues   map[uint16]hostQueue
	funcs    map[uint64]nic.XtqFunction
	failures []error
	stats    Stats
	layer    Layer
	// noteReady reports whether a notification event is waiting (the
	// condition WaitNotify's wait re-checks), made once.
	noteReady func() bool
	// cmdNext and cmdLeft are the next free byte of the command-buffer
	// block being carved and the bytes left in it (cmdBuffer).
	cmdNext mem.Addr
	cmdLeft uint64
}

// Runtime is one node's remote-task API bound to the host thread that
// calls it (Thread binds another thread of the same node).
type Runtime struct {
	*state
	t    *cpu.Thread
	call call // the step-form call in progress (steps.go)
}

// New sets up the remote-task runtime of node rank on host thread t: the
// task portal and its event queue, the notification portal with one entry
// per channel, and under HSA the progress thread. Every node must create
// its runtimes (and other portals) in the same order so portal indices
// agree.
func New(t *cpu.Thread, n *nic.NIC, g *gpu.GPU, rank, size int, mode Mode, sw cost.Spec) (*Runtime, error) {
	if rank < 0 || rank >= size {
		return nil, fmt.Errorf("xtq: rank %d of %d: out of range", rank, size)
	}
	m := n.Memory()
	s := &state{mode: mode, nic: n, gpu: g, mem: m, sw: sw, rank: rank, size: size,
		posted: map[mem.Addr]*nic.MEntry{}, kernels: map[uint64]nic.XtqKernel{}, queues: map[uint16]hostQueue{},
		funcs: map[uint64]nic.XtqFunction{}}
	ring := func(entries int, name string) mem.Addr {
		return m.AllocData(mem.Host, uint64(entries)*uint64(n.Spec().EventSize), name)
	}
	s.taskEQ = n.NewEQ(0, ring(n.Spec().EQSize, "xtq.task.eq"))
	s.taskPT = n.PTAlloc(s.taskEQ, false)
	// Node 0 gathers the execution barrier: its notification queue holds
	// one notification from every other node at once (at least
	// nic.eq_size entries), as a runtime sizes a queue for its fan-in; a
	// smaller one loses the arrivals that find it full, and the barrier
	// never completes (4,096 nodes on 1,024 entries).
	notes := n.Spec().EQSize
	if rank == 0 {
		notes = max(notes, size-1)
	}
	s.noteEQ = n.NewEQ(notes, ring(notes, "xtq.notify.eq"))
	s.notePT = n.PTAlloc(s.noteEQ, false)
	s.noteBuf = m.AllocData(mem.Host, 8, "xtq.notify")
	s.noteReady = func() bool { return s.noteEQ.Len() > 0 }
	for ch := range channels {
		if ch == ChanData {
			continue // arrivals land in exposed regions (Expose)
		}
		n.MEAppend(s.notePT, nic.ME{Start: s.noteBuf, MatchID: nic.AnyID, MatchBits: uint64(ch), IgnoreBits: tagBits, Options: nic.MEOpPut}, nic.Priority)
	}
	r := &Runtime{state: s, t: t}
	if mode == HSA {
		th := t.CPU().Spawn("hsa.progress", s.serveHSA)
		th.SetDaemon()
	}
	return r, nil
}

// UseLayer sets the messaging layer of HSA's sends and receives on this
// node (LayerMPI unless set); call it on every node before any task.
func (r *Runtime) UseLayer(l Layer) { r.layer = l }

// Thread returns the runtime bound to host thread t (of the same node).
func (r *Runtime) Thread(t *cpu.Thread) *Runtime { return &Runtime{state: r.state, t: t} }

// Host returns the thread the runtime is bound to.
func (r *Runtime) Host() *cpu.Thread { return r.t }

// Mode returns who enqueues arriving tasks.
func (r *Runtime) Mode() Mode { return r.mode }

// Rank returns the node's rank.
func (r *Runtime) Rank() int { return r.rank }

// Size returns the number of nodes.
func (r *Runtime) Size() int { return r.size }

// Stats returns the node's counters.
func (r *Runtime) Stats() Stats { return r.stats }

// TaskingInit creates a user-mode GPU queue of slots entries and registers
// it at queue index idx.
func (r *Runtime) TaskingInit(idx uint16, slots int) (*gpu.AQLQueue, error) {
	q, err := r.gpu.NewAQLQueue(fmt.Sprintf("xtq.q%d", idx), slots)
	if err != nil {
		return nil, err
	}
	return q, r.RegisterQueue(idx, q)
}

// RegisterQueue puts q at queue index idx (XtqRegisterQueue): an entry of
// the NIC's table under XTQ, of the host runtime's under HSA.
func (r *Runtime) RegisterQueue(idx uint16, q *gpu.AQLQueue) error {
	return r.registerQueue(idx, q, nic.AgentGPU)
}

// registerQueue puts q, a queue of agent a, at queue index idx.
func (r *Runtime) registerQueue(idx uint16, q Queue, a nic.XtqAgent) error {
	if int(idx) >= r.nic.Spec().XtqTableSize {
		return tableTooSmall("queue", uint64(idx), r.nic.Spec().XtqTableSize)
	}
	r.queues[idx] = hostQueue{q, a}
	if r.mode == HSA {
		return nil
	}
	r.t.Instr(r.sw.PortalsPost) // a table write through the NIC's command interface
	return r.nic.XtqRegisterQueue(idx, nic.XtqQueue{Base: q.Base(), Size: q.Size(), WriteIndex: q.WriteIndex(),
		ReadIndex: q.ReadIndex(), Doorbell: q.Doorbell(), Agent: a})
}

// RegisterKernel loads code on the GPU and puts it at kernel index idx with
// its target buffer (written into argument 0 of every task) and completion
// signal (0: keep the initiator's). It returns the kernel object.
func (r *Runtime) RegisterKernel(idx uint64, code gpu.KernelCode, buffer, signal mem.Addr) (uint64, error) {
	if idx >= uint64(r.nic.Spec().XtqTableSize) {
		return 0, tableTooSmall("kernel", idx, r.nic.Spec().XtqTableSize)
	}
	obj := r.gpu.LoadKernel(code)
	k := nic.XtqKernel{Object: obj, Buffer: buffer, Signal: signal}
	r.kernels[idx] = k
	if r.mode == HSA {
		return obj, nil
	}
	r.t.Instr(r.sw.PortalsPost)
	return obj, r.nic.XtqRegisterKernel(idx, k)
}

// NewSignal returns a completion signal with initial value v.
func (r *Runtime) NewSignal(name string, v uint64) mem.Addr { return r.gpu.NewSignal(name, v) }

// SignalWait polls the signal until cond holds and returns its value.
func (r *Runtime) SignalWait(sig mem.Addr, what string, cond func(uint64) bool) uint64 {
	defer r.t.Span("SignalWait", r.t.Now())
	return r.t.WaitWord(sig, what, cond)
}

// PostBuffer posts [buf, buf+size) as the receive buffer of arriving tasks
// (RdmaPostBuffer): MANAGE_LOCAL, so tasks land back to back, unlinked once
// full. Posting the same buf again replaces its earlier entry.
func (r *Runtime) PostBuffer(buf mem.Addr, size uint64) {
	r.t.Instr(r.sw.PortalsPost)
	r.postBuffer(buf, size)
}

// Put sends task t (XtqPut): the host builds the command packet (indices in
// the kernel-object and queue fields) and arguments in a command buffer and
// posts one gather put of it and the payload. Under HSA it also pays the
// MPI send path. The thread returns once the NIC doorbell is written.
func (r *Runtime) Put(t Task) error {
	if err := r.checkTask(t); err != nil {
		return err
	}
	defer r.t.Span("XtqPut", r.t.Now())
	r.t.Instr(r.sw.TaskBuild)
	if r.mode == HSA {
		r.putHSA(t)
		return nil
	}
	cmd := r.xtqCommand(t)
	r.t.Instr(r.sw.PortalsPost)
	r.stats.Tasks++
	r.nic.XtqPut(r.t.Proc, r.xtqGather(t, cmd))
	return nil
}

// hsaTaskFlag marks the header data of an HSA active message: the kernel
// and queue indices, the argument bytes and the work-group size travel in
// the header (the grid in the match bits), and the message carries only
// the kernel arguments and the payload — no 64 B packet, which the target
// CPU builds from its own tables (the dissertation's Ch.4: XTQ "adds a
// 64 B HSA-like packet to the message").
const hsaTaskFlag = 1 << 63

// hsaHeader packs an HSA active message's header data.
func hsaHeader(t Task) uint64 {
	return hsaTaskFlag | t.Kernel&0xffff | uint64(t.Queue)<<16 | (8*uint64(len(t.Args)))<<32 | uint64(t.WGSize&0x7fff)<<48
}

// putHSA sends t as a two-sided active message: the arguments and the
// payload gathered into one put, the task named in its header. Over MPI
// the send pays the matching path.
func (r *Runtime) putHSA(t Task) {
	if r.layer == LayerMPI {
		r.t.Instr(r.sw.MPIMatch)
	}
	args := r.hsaArgs(t)
	r.t.Instr(r.sw.PortalsPost)
	r.stats.Tasks++
	r.nic.XtqPut(r.t.Proc, r.hsaGather(t, args))
}

// WireLen returns the bytes task t puts into the target's posted buffer
// under mode m: the command packet, the arguments and the payload (XTQ),
// or the arguments and the payload (HSA's active message).
func (t Task) WireLen(m Mode) uint64 {
	if m == HSA {
		return 8*uint64(len(t.Args)) + t.PayloadLen
	}
	return t.CmdLen() + t.PayloadLen
}

// Expose makes [base, base+length) the target of PutData: puts land at
// their remote offset and each arrival counts on channel ChanData.
func (r *Runtime) Expose(base mem.Addr, length uint64) {
	r.t.Instr(r.sw.PortalsPost)
	r.nic.MEAppend(r.notePT, nic.ME{Start: base, Length: length, MatchID: nic.AnyID, MatchBits: ChanData,
		IgnoreBits: tagBits, Options: nic.MEOpPut}, nic.Priority)
}

// PutData puts length bytes at src into the peer's exposed region at
// remoteOffset (a plain one-sided put; the peer counts it on ChanData).
func (r *Runtime) PutData(peer int, src mem.Addr, length, remoteOffset uint64) {
	r.PutDataTag(peer, src, length, remoteOffset, 0)
}

// PutDataTag is PutData with a tag (0: none), which the peer counts per
// tag as well (WaitNotifyTag).
func (r *Runtime) PutDataTag(peer int, src mem.Addr, length, remoteOffset, tag uint64) {
	defer r.t.Span("put", r.t.Now())
	r.t.Instr(r.sw.PortalsPost)
	r.nic.Doorbell(r.t.Proc, r.putDataCommand(peer, src, length, remoteOffset, tag))
}

// Notify sends a zero-length message on channel ch to peer.
func (r *Runtime) Notify(peer, ch int) { r.NotifyTag(peer, ch, 0) }

// NotifyTag is Notify with a tag (0: none), which the peer counts per tag
// as well (WaitNotifyTag).
func (r *Runtime) NotifyTag(peer, ch int, tag uint64) {
	r.t.Instr(r.sw.PortalsPost)
	r.stats.Notifies++
	r.nic.Doorbell(r.t.Proc, r.notifyCommand(peer, ch, tag))
}

// WaitNotify polls the notification events until total notifications
// have arrived on channel ch since the start (counts are cumulative). One
// thread per node should wait for notifications at a time.
func (r *Runtime) WaitNotify(ch int, total uint64, what string) { r.WaitNotifyTag(ch, 0, total, what) }

// WaitNotifyTag is WaitNotify counting only the notifications of channel
// ch that carry tag (tag 0: all of the channel's, tagged or not).
func (r *Runtime) WaitNotifyTag(ch int, tag, total uint64, what string) {
	defer r.t.Span("wait "+what, r.t.Now())
	for {
		for ev, ok := r.noteEQ.Get(); ok; ev, ok = r.noteEQ.Get() {
			r.t.Instr(r.sw.EventDispatch)
			r.count(ev)
		}
		if r.NotifiedTag(ch, tag) >= total {
			return
		}
		r.t.WaitUntil(r.noteEQ.Signal(), what, func() bool { return r.noteEQ.Len() > 0 })
		r.t.Sleep(r.t.CPU().Spec().MissLatency()) // the poll that sees the new event misses
	}
}

// count counts notification event ev on its channel and, when tagged,
// on its (tag, channel).
func (s *state) count(ev nic.Event) {
	ch, tag := ev.MatchBits&chanMask, ev.MatchBits>>tagShift
	if ev.Type != nic.EventPut || ch >= channels {
		return
	}
	s.notes[ch]++
	if tag == 0 {
		return
	}
	i := int(tag)*channels + int(ch)
	if i >= len(s.tagged) {
		s.tagged = append(s.tagged, make([]uint64, i+1-len(s.tagged))...)
	}
	s.tagged[i]++
}

// Notified returns the notifications counted so far on channel ch.
func (r *Runtime) Notified(ch int) uint64 { return r.notes[ch] }

// NotifiedTag returns the notifications counted so far on channel ch with
// tag (tag 0: Notified).
func (r *Runtime) NotifiedTag(ch int, tag uint64) uint64 {
	if tag == 0 {
		return r.notes[ch]
	}
	if i := int(tag)*channels + ch; i < len(r.tagged) {
		return r.tagged[i]
	}
	return 0
}

// Barrier is the execution barrier of the dissertation's XTQ chapter over notifications:
// every node notifies node 0, which answers all once everyone arrived.
func (r *Runtime) Barrier() {
	r.barriers++
	if r.rank == 0 {
		r.WaitNotify(chanBarrier, r.barriers*uint64(r.size-1), "barrier arrivals")
		for p := 1; p < r.size; p++ {
			r.Notify(p, chanBarrier)
		}
		return
	}
	r.Notify(0, chanBarrier)
	r.WaitNotify(chanBarrier, r.barriers, "barrier release")
}

// IssueTime returns when the node's NIC last started a task put (the end
// of the initiator's post: doorbell, command fetch, command processing).
func (r *Runtime) IssueTime() sim.Time { return r.nic.XtqStats().LastIssue }

// TargetTimes returns, for the last task that reached the node, when its
// bytes were all in the posted buffer (HSA: when its receive event became
// visible) and when the GPU queue's doorbell was written.
func (r *Runtime) TargetTimes() (landed, bell sim.Time) {
	if r.mode == HSA {
		// Landed as for XTQ: every byte of the message visible in the
		// posted buffer (the NIC's record), before its PUT event.
		return r.nic.XtqStats().LastLanded, r.stats.LastBell
	}
	st := r.nic.XtqStats()
	return st.LastLanded, st.LastBell
}

// TableCache returns the node's NIC table-cache counters under XTQ with
// nic.xtq_tables = host: lookups that hit, and entry reads from host
// memory (misses; lookups that waited for a read already in flight count
// as hits here, since they issued no read). Zero otherwise.
func (r *Runtime) TableCache() (hits, misses uint64) {
	if r.mode != XTQ {
		return 0, 0
	}
	st := r.nic.XtqStats()
	return st.CacheHits + st.CacheMerged, st.CacheMisses
}

// Failures returns every failed task the node has seen (the TASK events of
// the NIC under XTQ, the progress thread's records under HSA), each naming
// the cause. It consumes the task event queue under XTQ.
func (r *Runtime) Failures() []error {
	if r.mode == XTQ {
		for ev, ok := r.taskEQ.Get(); ok; ev, ok = r.taskEQ.Get() {
			if ev.Type == nic.EventTask {
				r.failures = append(r.failures, r.taskError(ev.Initiator, ev.NIFail, ev.HdrData, ev.RLength, ev.MLength))
			}
		}
	}
	return r.failures
}

// Dropped returns the events the node's task and notification queues
// lost because they were full (each a task or notification nobody will
// count: a wait for it never ends).
func (r *Runtime) Dropped() uint64 { return r.taskEQ.Dropped() + r.noteEQ.Dropped() }

// DropReport names the events the node's queues lost (Dropped) and the
// parameter that sizes them, "" when none were lost: what a run that
// stopped waiting may have waited for.
func (r *Runtime) DropReport() string {
	if d := r.Dropped(); d > 0 {
		return fmt.Sprintf("node %d's remote-task event queues were full and lost %d events (nic.eq_size = %d)", r.rank, d, r.nic.Spec().EQSize)
	}
	return ""
}

// ErrTaskFailed is wrapped by every task failure.
var ErrTaskFailed = errors.New("remote task failed")

func (s *state) taskError(src int, fail nic.FailType, idx, rlen, free uint64) error {
	what := ""
	switch fail {
	case nic.FailTaskNoKernel:
		what = fmt.Sprintf("kernel index %d is not registered", idx)
	case nic.FailTaskNoQueue:
		what = fmt.Sprintf("queue index %d is not registered", idx)
	case nic.FailTaskTooLarge:
		what = fmt.Sprintf("the %d-byte task is larger than the %d bytes left in the posted buffer", rlen, free)
	case nic.FailTaskNoBuffer:
		what = "no receive buffer is posted"
	case nic.FailTaskQueueFull:
		what = "the GPU queue was full (nic.xtq_full_policy = drop)"
	case nic.FailTaskNoFunction:
		what = fmt.Sprintf("function index %d is not registered", idx)
	case nic.FailTaskWrongAgent:
		what = fmt.Sprintf("queue index %d is a queue of the other agent (a CPU task needs a CPU agent queue, a kernel a GPU queue)", idx)
	}
	return fmt.Errorf("%w: %s task from node %d at node %d: %v: %s", ErrTaskFailed, s.mode, src, s.rank, fail, what)
}

// TableFits returns the error a registration of what at index idx would
// return on NIC lookup tables of size entries (nil when it fits), so that
// an experiment can refuse such a configuration before any work.
func TableFits(size int, what string, idx uint64) error {
	if idx < uint64(max(size, 0)) {
		return nil
	}
	return tableTooSmall(what, idx, size)
}

// tableTooSmall is the error of a registration at an index beyond the
// NIC's lookup tables: the configuration (nic.xtq_table_size) cannot run
// the workload, found at setup, so it wraps sim.ErrConfig (bad input).
func tableTooSmall(what string, idx uint64, size int) error {
	return fmt.Errorf("%w: nic.xtq_table_size = %d: the workload registers %s index %d; must be in [%d, 65536]", sim.ErrConfig, size, what, idx, idx+1)
}
