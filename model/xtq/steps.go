package xtq

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Runtime calls as steps. A remote-task collective's progress loop
// (model/nbc over the remote-task transport) makes a few short waits per
// round on the node's host thread: the round's dispatch, the task's build
// and post, the doorbell, the waits for notifications and signals. Run as
// coroutine code each is two coroutine switches; run as a state machine in
// the thread's process (sim.Proc.RunSteps) each is a call. The Begin*
// forms start a call and Try advances it (cpu.Thread's Begin/Try
// operations underneath): they do what Put, Notify, PutData, PostBuffer,
// WaitNotify and SignalWait do, in the same order, so they schedule the
// same events at the same times. The blocking forms stay as they are: the
// reference the step forms are tested against (TestStepCallsMatchBlocking)
// and the API of callers that are coroutine code.

// callKind is the runtime call Try advances.
type callKind uint8

const (
	callNone       callKind = iota
	callInstr               // instructions only (BeginInstr)
	callPut                 // Put
	callNotify              // Notify
	callPutData             // PutData
	callPostBuffer          // PostBuffer
	callWaitNotify          // WaitNotify
	callSignalWait          // SignalWait
)

// Stages of a call.
const (
	stBegin    uint8 = iota // nothing done yet
	stBuild                 // Put: the task build's instructions
	stMatch                 // Put (HSA over MPI): the matching instructions
	stPost                  // the Portals post's instructions
	stBell                  // the doorbell's posted write
	stDispatch              // WaitNotify: an event's dispatch instructions
	stWait                  // WaitNotify, SignalWait: the wait on the signal
	stMiss                  // the poll that sees the change misses
	stHit                   // SignalWait: the first poll (a cache hit)
	stEnd                   // the call's span, then done
)

// call is where the step-form call in progress stands.
type call struct {
	kind   callKind
	stage  uint8
	start  sim.Time
	task   Task
	cmd    mem.Addr
	peer   int
	ch     int
	src    mem.Addr
	length uint64
	off    uint64
	total  uint64
	tag    uint64
	what   string
	sig    mem.Addr
	cond   func(uint64) bool
	ev     nic.Event
}

// BeginInstr starts n instructions of runtime software on the thread (a
// schedule round's dispatch) as steps.
func (r *Runtime) BeginInstr(n int) {
	r.call = call{kind: callInstr}
	r.t.BeginInstr(n)
}

// BeginPut starts Put(t) as steps. Errors are Put's, before any time
// passes.
func (r *Runtime) BeginPut(t Task) error {
	if err := r.checkTask(t); err != nil {
		return err
	}
	r.call = call{kind: callPut, task: t}
	return nil
}

// BeginNotify starts Notify(peer, ch) as steps.
func (r *Runtime) BeginNotify(peer, ch int) { r.BeginNotifyTag(peer, ch, 0) }

// BeginNotifyTag starts NotifyTag(peer, ch, tag) as steps.
func (r *Runtime) BeginNotifyTag(peer, ch int, tag uint64) {
	r.call = call{kind: callNotify, peer: peer, ch: ch, tag: tag}
}

// BeginPutData starts PutData(peer, src, length, remoteOffset) as steps.
func (r *Runtime) BeginPutData(peer int, src mem.Addr, length, remoteOffset uint64) {
	r.BeginPutDataTag(peer, src, length, remoteOffset, 0)
}

// BeginPutDataTag starts PutDataTag(peer, src, length, remoteOffset, tag)
// as steps.
func (r *Runtime) BeginPutDataTag(peer int, src mem.Addr, length, remoteOffset, tag uint64) {
	r.call = call{kind: callPutData, peer: peer, src: src, length: length, off: remoteOffset, tag: tag}
}

// BeginPostBuffer starts PostBuffer(buf, size) as steps.
func (r *Runtime) BeginPostBuffer(buf mem.Addr, size uint64) {
	r.call = call{kind: callPostBuffer, src: buf, length: size}
}

// BeginWaitNotify starts WaitNotify(ch, total, what) as steps.
func (r *Runtime) BeginWaitNotify(ch int, total uint64, what string) {
	r.BeginWaitNotifyTag(ch, 0, total, what)
}

// BeginWaitNotifyTag starts WaitNotifyTag(ch, tag, total, what) as steps.
func (r *Runtime) BeginWaitNotifyTag(ch int, tag, total uint64, what string) {
	r.call = call{kind: callWaitNotify, ch: ch, tag: tag, total: total, what: what}
}

// BeginSignalWait starts SignalWait(sig, what, cond) as steps.
func (r *Runtime) BeginSignalWait(sig mem.Addr, what string, cond func(uint64) bool) {
	r.call = call{kind: callSignalWait, sig: sig, what: what, cond: cond}
}

// Try advances the call begun by a Begin* form and reports true once it is
// over, false when the thread waited (or Try must be called again at
// once), like a sim.Stepper's Step.
func (r *Runtime) Try() bool {
	var done bool
	switch r.call.kind {
	case callNone:
		return true
	case callInstr:
		done = r.t.Try()
	case callPut:
		done = r.tryPut()
	case callNotify, callPutData:
		done = r.tryDoorbell()
	case callPostBuffer:
		done = r.tryPostBuffer()
	case callWaitNotify:
		done = r.tryWaitNotify()
	case callSignalWait:
		done = r.trySignalWait()
	}
	if done {
		r.call = call{}
	}
	return done
}

// span records what from start to now on the thread's track, building
// the name only for a tracer.
func (r *Runtime) span(prefix, what string, start sim.Time) {
	if r.t.Engine().Tracer() != nil {
		r.t.Span(prefix+what, start)
	}
}

// tryPut is Put: the task's build, then under XTQ the command packet in
// a command buffer, the post and the NIC's gather put; under HSA the
// matching (over MPI), the arguments, the post and the put.
func (r *Runtime) tryPut() bool {
	k, t := &r.call, r.t
	for {
		switch k.stage {
		case stBegin:
			k.start = t.Now()
			t.BeginInstr(r.sw.TaskBuild)
			k.stage = stBuild
		case stBuild:
			if !t.Try() {
				return false
			}
			if r.mode == HSA && r.layer == LayerMPI {
				t.BeginInstr(r.sw.MPIMatch)
				k.stage = stMatch
				continue
			}
			r.beginPost()
		case stMatch:
			if !t.Try() {
				return false
			}
			r.beginPost()
		case stPost:
			if !t.Try() {
				return false
			}
			r.stats.Tasks++
			k.stage = stEnd
			if r.mode == HSA {
				r.nic.XtqPut(t.Proc, r.hsaGather(k.task, k.cmd))
			} else {
				r.nic.XtqPut(t.Proc, r.xtqGather(k.task, k.cmd))
			}
			if t.Waited() {
				return false
			}
		case stEnd:
			r.span("XtqPut", "", k.start)
			return true
		}
	}
}

// beginPost writes the task's command buffer (XTQ: packet and arguments;
// HSA: the arguments) and starts the post's instructions.
func (r *Runtime) beginPost() {
	k := &r.call
	if r.mode == HSA {
		k.cmd = r.hsaArgs(k.task)
	} else {
		k.cmd = r.xtqCommand(k.task)
	}
	r.t.BeginInstr(r.sw.PortalsPost)
	k.stage = stPost
}

// tryDoorbell is Notify or PutData: the post's instructions, then the
// doorbell of the put.
func (r *Runtime) tryDoorbell() bool {
	k, t := &r.call, r.t
	switch k.stage {
	case stBegin:
		k.start = t.Now()
		t.BeginInstr(r.sw.PortalsPost)
		k.stage = stPost
		fallthrough
	case stPost:
		if !t.Try() {
			return false
		}
		k.stage = stEnd
		if k.kind == callNotify {
			r.stats.Notifies++
			r.nic.Doorbell(t.Proc, r.notifyCommand(k.peer, k.ch, k.tag))
		} else {
			r.nic.Doorbell(t.Proc, r.putDataCommand(k.peer, k.src, k.length, k.off, k.tag))
		}
		if t.Waited() {
			return false
		}
		fallthrough
	default:
		if k.kind == callPutData {
			r.span("put", "", k.start)
		}
		return true
	}
}

// tryPostBuffer is PostBuffer: the post's instructions, then the entry.
func (r *Runtime) tryPostBuffer() bool {
	k, t := &r.call, r.t
	if k.stage == stBegin {
		t.BeginInstr(r.sw.PortalsPost)
		k.stage = stPost
	}
	if !t.Try() {
		return false
	}
	r.postBuffer(k.src, k.length)
	return true
}

// tryWaitNotify is WaitNotify: dispatch the notification events that
// arrived, and until enough did, wait for the next and miss on it.
func (r *Runtime) tryWaitNotify() bool {
	k, t := &r.call, r.t
	for {
		switch k.stage {
		case stBegin:
			k.start = t.Now()
			k.stage = stEnd
		case stDispatch:
			if !t.Try() {
				return false
			}
			r.count(k.ev)
			k.stage = stEnd
		case stWait:
			if !t.Try() {
				return false
			}
			t.BeginSleep(t.CPU().Spec().MissLatency()) // the poll that sees the new event misses
			k.stage = stMiss
		case stMiss:
			if !t.Try() {
				return false
			}
			k.stage = stEnd
		case stEnd: // the drain loop's head
			if ev, ok := r.noteEQ.Get(); ok {
				k.ev = ev
				t.BeginInstr(r.sw.EventDispatch)
				k.stage = stDispatch
				continue
			}
			if r.NotifiedTag(k.ch, k.tag) >= k.total {
				r.span("wait ", k.what, k.start)
				return true
			}
			t.BeginWaitUntil(r.noteEQ.Signal(), k.what, r.noteReady)
			k.stage = stWait
		}
	}
}

// trySignalWait is SignalWait (cpu.Thread.WaitWord): a first poll that
// hits the cache, then until cond holds a wait for the signal's line and
// the poll that misses on it.
func (r *Runtime) trySignalWait() bool {
	k, t := &r.call, r.t
	for {
		switch k.stage {
		case stBegin:
			k.start = t.Now()
			t.BeginSleep(t.CPU().Spec().CacheHit)
			k.stage = stHit
		case stHit, stMiss:
			if !t.Try() {
				return false
			}
			if k.cond(r.mem.Load64(k.sig)) {
				r.span("SignalWait", "", k.start)
				return true
			}
			t.BeginWait(r.mem.Watch(k.sig), k.what)
			k.stage = stWait
		case stWait:
			if !t.Try() {
				return false
			}
			t.BeginSleep(t.CPU().Spec().MissLatency())
			k.stage = stMiss
		}
	}
}

// checkTask returns Put's error for a malformed task, nil if it may go.
func (r *Runtime) checkTask(t Task) error {
	if t.Target < 0 || t.Target >= r.size {
		return fmt.Errorf("xtq: task target %d: must be in [0, %d)", t.Target, r.size)
	}
	if len(t.Args) < 2 {
		return fmt.Errorf("xtq: task has %d kernel arguments: needs at least 2 (target buffer, payload)", len(t.Args))
	}
	if t.WGSize < 1 || t.WGSize > 1<<15 || t.Grid < t.WGSize || t.Grid > 1<<31 {
		return fmt.Errorf("xtq: task grid %d, work-group size %d: need 1 ≤ wg ≤ 32768 and wg ≤ grid < 2^31", t.Grid, t.WGSize)
	}
	if r.mode == HSA && t.Kernel > 0xffff {
		return fmt.Errorf("xtq: HSA task kernel index %d: must fit the header's 16 bits", t.Kernel)
	}
	return nil
}

// xtqCommand writes t's command packet (indices in the kernel-object and
// queue fields) and arguments into a new command buffer.
func (r *Runtime) xtqCommand(t Task) mem.Addr {
	cmd := r.cmdBuffer(t.CmdLen())
	pkt := gpu.AQLPacket{Header: gpu.DispatchHeader, WGSize: uint16(t.WGSize), Grid: uint32(t.Grid),
		QueueIndex: t.Queue, KernelObject: t.Kernel}
	b := pkt.Encode()
	r.mem.Write(cmd, b[:])
	for i, a := range t.Args {
		r.mem.Store64(cmd+gpu.AQLPacketSize+mem.Addr(8*i), a)
	}
	return cmd
}

// xtqGather is the gather put of t's command buffer cmd and payload.
func (r *Runtime) xtqGather(t Task, cmd mem.Addr) nic.GatherPut {
	return nic.GatherPut{Xtq: true, Target: t.Target, PT: r.taskPT, Cmd: cmd,
		CmdLen: t.CmdLen(), Payload: t.Payload, PayloadLen: t.PayloadLen, Ack: nic.NoAckReq}
}

// hsaArgs writes t's arguments into a new buffer (HSA's active message
// carries no packet).
func (r *Runtime) hsaArgs(t Task) mem.Addr {
	args := r.cmdBuffer(8 * uint64(len(t.Args)))
	for i, a := range t.Args {
		r.mem.Store64(args+mem.Addr(8*i), a)
	}
	return args
}

// hsaGather is the gather put of HSA task t: its arguments at args and the
// payload, the task named in the header.
func (r *Runtime) hsaGather(t Task, args mem.Addr) nic.GatherPut {
	return nic.GatherPut{Target: t.Target, PT: r.taskPT, MatchBits: uint64(t.Grid), Cmd: args,
		CmdLen: 8 * uint64(len(t.Args)), Payload: t.Payload, PayloadLen: t.PayloadLen, HdrData: hsaHeader(t), Ack: nic.NoAckReq}
}

// notifyCommand is the zero-length put of a notification on channel ch
// with tag.
func (r *Runtime) notifyCommand(peer, ch int, tag uint64) nic.Command {
	return nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: r.noteBuf, Options: nic.MDEventSendDisable | nic.MDEventSuccessDisable},
		Target: peer, PT: r.notePT, MatchBits: uint64(ch) | tag<<tagShift, Ack: nic.NoAckReq}
}

// putDataCommand is PutDataTag's put.
func (r *Runtime) putDataCommand(peer int, src mem.Addr, length, remoteOffset, tag uint64) nic.Command {
	return nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: length, Options: nic.MDEventSendDisable | nic.MDEventSuccessDisable},
		Length: length, Target: peer, PT: r.notePT, MatchBits: ChanData | tag<<tagShift, RemoteOffset: remoteOffset, Ack: nic.NoAckReq}
}

// postBuffer replaces buf's receive entry (PostBuffer after its post).
func (r *Runtime) postBuffer(buf mem.Addr, size uint64) {
	if old := r.posted[buf]; old != nil {
		r.nic.MEUnlink(old)
	}
	r.posted[buf] = r.nic.MEAppend(r.taskPT, nic.ME{Start: buf, Length: size, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEManageLocal, MinFree: 1}, nic.Priority)
}

// Command buffers. Every task's command packet and arguments (HSA: its
// arguments) go into a buffer of their own that is never written again,
// as with an allocation per task; the buffers are carved out of blocks
// (cmdBlock bytes each) instead of one allocation per task, which at a
// thousand nodes made a million allocations, each a region of node memory
// (0.5 KiB apiece) that every lookup of the node's memory searched through.
// A buffer starts on a cache line, as an allocation does; nothing of the
// timing depends on where it lies.
const (
	cmdBlock = 64 << 10
	cmdAlign = mem.LineSize
)

// cmdBuffer returns a fresh command buffer of n bytes.
func (s *state) cmdBuffer(n uint64) mem.Addr {
	n = (max(n, 1) + cmdAlign - 1) &^ (cmdAlign - 1)
	if n > cmdBlock {
		return s.mem.AllocData(mem.Host, n, "xtq.cmd")
	}
	if n > s.cmdLeft {
		s.cmdNext, s.cmdLeft = s.mem.AllocData(mem.Host, cmdBlock, "xtq.cmd"), cmdBlock
	}
	a := s.cmdNext
	s.cmdNext += mem.Addr(n)
	s.cmdLeft -= n
	return a
}
