package xtq

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
)

// Queue is a user-mode queue a task can enter: a GPU AQL queue
// (*gpu.AQLQueue) or a CPU agent queue (*cpu.AgentQueue). Both take the
// same producer protocol.
type Queue interface {
	Base() mem.Addr
	Size() uint64
	WriteIndex() mem.Addr
	ReadIndex() mem.Addr
	Doorbell() mem.Addr
	Slot(i uint64) mem.Addr
}

// hostQueue is an entry of HSA's host queue table.
type hostQueue struct {
	q     Queue
	agent nic.XtqAgent
}

// CPUTask is one remote task for the target's CPU agent (the dissertation's XTQ chapter): a
// host function with four arguments embedded in the packet.
type CPUTask struct {
	Target   int
	Function uint64 // function lookup index
	Queue    uint32 // queue lookup index (the packet's 32-bit field)
	// Args are the function's arguments; 0 and 1 are overwritten at the
	// target with the function's registered buffer and the payload address.
	Args       [cpu.AgentArgs]uint64
	Payload    mem.Addr
	PayloadLen uint64
}

// Call is what a host function gets: the agent thread running it (which
// charges the function's work) and the packet's four arguments.
type Call struct {
	T    *cpu.Thread
	Args [cpu.AgentArgs]uint64
}

// TaskingInitCPU creates a CPU agent queue of slots entries, served by a
// host thread of its own, and registers it at queue index idx.
func (r *Runtime) TaskingInitCPU(idx uint16, slots int) (*cpu.AgentQueue, error) {
	q, err := r.t.CPU().NewAgentQueue(fmt.Sprintf("xtq.cq%d", idx), slots)
	if err != nil {
		return nil, err
	}
	return q, r.registerQueue(idx, q, nic.AgentCPU)
}

// RegisterFunction loads body as a host function and puts it at function
// index idx (XtqRegisterFunction) with its target buffer (argument 0 of
// every task) and completion signal (0: keep the initiator's). It returns
// the function pointer.
func (r *Runtime) RegisterFunction(idx uint64, name string, body func(c Call), buffer, signal mem.Addr) (uint64, error) {
	if idx >= uint64(r.nic.Spec().XtqTableSize) {
		return 0, tableTooSmall("function", idx, r.nic.Spec().XtqTableSize)
	}
	ptr := r.t.CPU().LoadFunction(cpu.Function{Name: name, Body: func(t *cpu.Thread, args [cpu.AgentArgs]uint64) {
		body(Call{T: t, Args: args})
	}})
	f := nic.XtqFunction{Pointer: ptr, Buffer: buffer, Signal: signal}
	r.funcs[idx] = f
	if r.mode == HSA {
		return ptr, nil
	}
	r.t.Instr(r.sw.PortalsPost)
	return ptr, r.nic.XtqRegisterFunction(idx, f)
}

// PutCPU sends CPU task t: the host builds the agent-dispatch packet
// (function and queue indices in its pointer and reserved fields, the
// arguments embedded) and posts one gather put of it and the payload.
// Under HSA it also pays the MPI send path.
func (r *Runtime) PutCPU(t CPUTask) error {
	if t.Target < 0 || t.Target >= r.size {
		return fmt.Errorf("xtq: task target %d: must be in [0, %d)", t.Target, r.size)
	}
	defer r.t.Span("XtqPut", r.t.Now())
	r.t.Instr(r.sw.TaskBuild)
	if r.mode == HSA {
		r.t.Instr(r.sw.MPIMatch)
	}
	cmd := r.cmdBuffer(cpu.AgentPacketSize)
	b := cpu.AgentPacket{Header: cpu.AgentDispatchHeader, QueueIndex: t.Queue, Function: t.Function, Args: t.Args}.Encode()
	r.mem.Write(cmd, b[:])
	r.t.Instr(r.sw.PortalsPost)
	r.stats.Tasks++
	r.nic.XtqPut(r.t.Proc, nic.GatherPut{Xtq: r.mode == XTQ, Target: t.Target, PT: r.taskPT, Cmd: cmd,
		CmdLen: cpu.AgentPacketSize, Payload: t.Payload, PayloadLen: t.PayloadLen, Ack: nic.NoAckReq})
	return nil
}

// hsaCPUTask is hsaTask for an agent-dispatch packet: the progress thread
// looks the function and the queue up in its host tables, rewrites the
// packet and enqueues it into the CPU agent queue.
func (s *state) hsaCPUTask(t *cpu.Thread, ev nic.Event, raw []byte) {
	pk := cpu.DecodeAgent(raw)
	f, okF := s.funcs[pk.Function]
	q, okQ := s.queues[uint16(pk.QueueIndex)]
	switch {
	case !okF:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoFunction, pk.Function, 0, 0))
		return
	case !okQ || pk.QueueIndex >= 1<<16:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoQueue, uint64(pk.QueueIndex), 0, 0))
		return
	case q.agent != nic.AgentCPU:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskWrongAgent, uint64(pk.QueueIndex), 0, 0))
		return
	}
	pk.Function, pk.QueueIndex = f.Pointer, 0
	pk.Args[0], pk.Args[1] = uint64(f.Buffer), uint64(ev.Start)+ev.HdrData
	if f.Signal != 0 {
		pk.Signal = f.Signal
	}
	// A CPU agent queue's doorbell is a signal in memory that the agent
	// thread polls: an ordinary store, visible with the packet.
	s.stats.LastBell = hostEnqueueBytes(t, q.q, pk.Encode(), 0)
	s.stats.Enqueued++
}
