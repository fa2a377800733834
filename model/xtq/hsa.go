package xtq

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// serveHSA is the HSA target's progress thread: it polls the task event
// queue and turns every arrived task into an AQL dispatch.
func (s *state) serveHSA(t *cpu.Thread) {
	lat := t.CPU().Spec().MissLatency()
	for {
		ev, ok := s.taskEQ.Get()
		for !ok {
			t.Wait(s.taskEQ.Signal(), "HSA task events")
			t.Sleep(lat) // the poll that sees the new event misses
			ev, ok = s.taskEQ.Get()
		}
		t.Instr(s.sw.EventDispatch)
		if ev.Type != nic.EventPut {
			continue // AUTO_UNLINK of a full receive buffer
		}
		s.stats.LastLanded = ev.Time
		start := t.Now()
		if s.layer == LayerMPI {
			t.Instr(s.sw.MPIMatch) // the two-sided receive's matching path
		}
		s.hsaTask(t, ev)
		t.Span("HSA enqueue", start)
	}
}

// hsaTask reads the task description at ev.Start, looks the kernel and
// queue up, writes arguments 0 and 1 and enqueues the packet.
func (s *state) hsaTask(t *cpu.Thread, ev nic.Event) {
	cmdLen := ev.HdrData
	if ev.MLength < ev.RLength {
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskTooLarge, 0, ev.RLength, ev.MLength))
		return
	}
	if ev.HdrData&hsaTaskFlag != 0 {
		s.hsaMessage(t, ev)
		return
	}
	t.Load(ev.Start) // the description's line: one miss
	var raw [gpu.AQLPacketSize]byte
	s.mem.Read(ev.Start, raw[:])
	t.Instr(s.sw.AQLBuild)
	if uint16(raw[gpu.AQLHeaderOff]) == cpu.PacketTypeAgentDispatch {
		s.hsaCPUTask(t, ev, raw[:])
		return
	}
	pk := gpu.DecodeAQL(raw[:])
	k, okK := s.kernels[pk.KernelObject]
	q, okQ := s.queues[pk.QueueIndex]
	switch {
	case !okK:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoKernel, pk.KernelObject, 0, 0))
		return
	case !okQ:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoQueue, uint64(pk.QueueIndex), 0, 0))
		return
	case q.agent != nic.AgentGPU:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskWrongAgent, uint64(pk.QueueIndex), 0, 0))
		return
	}
	args := ev.Start + gpu.AQLPacketSize
	pk.KernelObject, pk.Kernarg, pk.QueueIndex = k.Object, args, 0
	if k.Signal != 0 {
		pk.Signal = k.Signal
	}
	if cmdLen >= gpu.AQLPacketSize+16 {
		t.Store(args, uint64(k.Buffer))
		t.Store(args+8, uint64(ev.Start+mem.Addr(cmdLen)))
	}
	s.stats.LastBell = HostEnqueue(t, q.q, pk, s.gpu.HostDoorbell())
	s.stats.Enqueued++
}

// hsaMessage turns an HSA active message (the task in the header, the
// arguments and payload in the buffer) into a kernel dispatch: look the
// kernel and queue up in the host tables, build the AQL packet, write
// arguments 0 and 1 in place and enqueue.
func (s *state) hsaMessage(t *cpu.Thread, ev nic.Event) {
	h := ev.HdrData
	kidx, qidx := h&0xffff, uint16(h>>16)
	argsLen, wg := (h>>32)&0xffff, uint16((h>>48)&0x7fff)
	k, okK := s.kernels[kidx]
	q, okQ := s.queues[qidx]
	switch {
	case !okK:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoKernel, kidx, 0, 0))
		return
	case !okQ:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskNoQueue, uint64(qidx), 0, 0))
		return
	case q.agent != nic.AgentGPU:
		s.failures = append(s.failures, s.taskError(ev.Initiator, nic.FailTaskWrongAgent, uint64(qidx), 0, 0))
		return
	}
	t.Instr(s.sw.AQLBuild)
	pk := gpu.AQLPacket{Header: gpu.DispatchHeader, WGSize: wg, Grid: uint32(ev.MatchBits), KernelObject: k.Object,
		Kernarg: ev.Start, Signal: k.Signal}
	if argsLen >= 16 {
		t.Store(ev.Start, uint64(k.Buffer))
		t.Store(ev.Start+8, uint64(ev.Start+mem.Addr(argsLen)))
	}
	s.stats.LastBell = HostEnqueue(t, q.q, pk, s.gpu.HostDoorbell())
	s.stats.Enqueued++
}

// HostEnqueue runs the AQL producer protocol on host thread t (the HSA
// runtime's enqueue idiom) for a GPU queue whose doorbell a host store
// reaches bell after it leaves the core (gpu.GPU.HostDoorbell): a locked
// add on the write index (a line the NIC and the CP also write: a miss; as
// every x86 locked instruction it first waits for the thread's earlier
// stores, such as the kernel arguments written into the packet's buffer,
// to become visible), a load of the read index to check for room (another
// miss), a wait for the slot if the queue is full, then the packet body
// and header as stores visible one memory latency later, and the doorbell
// as an uncached store that leaves only once they are. It returns when the
// doorbell reaches the GPU; the thread itself does not wait for it.
func HostEnqueue(t *cpu.Thread, q Queue, pk gpu.AQLPacket, bell sim.Duration) sim.Time {
	return hostEnqueueBytes(t, q, pk.Encode(), bell)
}

// hostEnqueueBytes is HostEnqueue of an encoded packet (either kind).
func hostEnqueueBytes(t *cpu.Thread, q Queue, b [gpu.AQLPacketSize]byte, bell sim.Duration) sim.Time {
	m := t.CPU().Mem()
	lat := t.CPU().Spec().MissLatency()
	w := t.RMW(q.WriteIndex(), 1)
	// The room check loads the read index the CP advances (a miss: the
	// CP's write took the line), after the locked add, which no later load
	// passes.
	t.Sleep(lat)
	if w-m.Load64(q.ReadIndex()) >= q.Size() {
		t.WaitWord(q.ReadIndex(), "room in the GPU queue", func(r uint64) bool { return w-r < q.Size() })
	}
	slot := q.Slot(w)
	t.StoreMiss(func() {
		m.Write(slot+2, b[2:])
		m.Write(slot, b[:2])
	})
	return t.StoreUncached(bell, func() { gpu.RingDoorbell(m, q.Doorbell(), w+1) })
}
