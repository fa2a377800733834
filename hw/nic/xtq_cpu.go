package nic

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CPU tasks (the dissertation's XTQ chapter): an XTQ message whose command packet is an
// agent dispatch (header type AGENT_DISPATCH) names a function index and
// the queue index of a CPU agent queue. The NIC rewrites it through the
// Function Lookup Table — function pointer ← FLUT.Pointer, arg[0] ←
// FLUT.Buffer, arg[1] ← the payload's address in the posted buffer,
// arg[2..3] unchanged, completion signal ← FLUT.Signal when set — and
// enqueues it with the same protocol and doorbell ordering as a GPU task;
// a host thread polling the queue's doorbell runs the function
// (hw/cpu agent.go).

// XtqFunction is a Function Lookup Table entry (the dissertation's XTQ chapter).
type XtqFunction struct {
	Pointer uint64   // function pointer written into the packet
	Buffer  mem.Addr // target-resident buffer, written into argument 0
	// Signal is written into the packet's completion signal when non-zero
	// ([DEFAULT]: the documents give the FLUT no signal, but an initiator
	// holds no target addresses, so the target names it as for kernels).
	Signal mem.Addr
}

// XtqRegisterFunction fills FLUT[idx] (XtqRegisterFunction of the dissertation (Portals 4)
// §4.4). The host's cost of the call is the caller's.
func (n *NIC) XtqRegisterFunction(idx uint64, f XtqFunction) error {
	if idx >= uint64(n.spec.XtqTableSize) {
		return fmt.Errorf("%s: XtqRegisterFunction: index %d: must be in [0, nic.xtq_table_size = %d)", n.name, idx, n.spec.XtqTableSize)
	}
	if n.xtq.functions == nil {
		n.xtq.functions = map[uint64]XtqFunction{}
	}
	n.xtq.functions[idx] = f
	n.writeEntry(tableFunction, idx, f.words()...)
	return nil
}

// xtqCPUTask looks up the function and queue of CPU task m, rewrites its
// packet and hands it to the queue's enqueue engine.
func (n *NIC) xtqCPUTask(m *inMsg, pkt [cpu.AgentPacketSize]byte) {
	le := binary.LittleEndian
	fidx := le.Uint64(pkt[cpu.AgentFunctionOff:])
	qidx := le.Uint32(pkt[cpu.AgentQueueIndexOff:])
	start := n.e.Now()
	n.xtqLookup([]tableLookup{{tableFunction, fidx}, {tableQueue, uint64(qidx)}}, func(entries [][]uint64) {
		n.xtq.stats.LookupTime += n.e.Now() - start
		switch {
		case entries[0] == nil:
			n.xtqFail(m, FailTaskNoFunction, fidx)
			return
		case entries[1] == nil:
			n.xtqFail(m, FailTaskNoQueue, uint64(qidx))
			return
		case queueFromWords(entries[1]).Agent != AgentCPU:
			n.xtqFail(m, FailTaskWrongAgent, uint64(qidx))
			return
		}
		n.e.After(n.spec.XtqRewrite, func() {
			f := functionFromWords(entries[0])
			q := n.xtqQueueState(uint16(qidx), queueFromWords(entries[1]))
			n.xtqRewriteCPU(m, pkt, f, q, start)
		})
	})
}

// xtqRewriteCPU rewrites the NIC's copy of an agent-dispatch packet; the
// arguments are embedded in the packet, so nothing is written to memory
// before the enqueue.
func (n *NIC) xtqRewriteCPU(m *inMsg, pkt [cpu.AgentPacketSize]byte, f XtqFunction, q *xtqQueue, start sim.Time) {
	le := binary.LittleEndian
	n.xtq.stats.Rewrites++
	le.PutUint64(pkt[cpu.AgentFunctionOff:], f.Pointer)
	le.PutUint64(pkt[cpu.AgentArgOff:], uint64(f.Buffer))
	le.PutUint64(pkt[cpu.AgentArgOff+8:], uint64(m.dest)+m.hdr.Task.CmdLen)
	if f.Signal != 0 {
		le.PutUint64(pkt[cpu.AgentSignalOff:], uint64(f.Signal))
	}
	le.PutUint32(pkt[cpu.AgentQueueIndexOff:], 0)
	n.span("xtq rewrite", start, n.e.Now())
	q.held = append(q.held, &xtqJob{m: m, packet: pkt, since: n.e.Now()})
	n.xtqNext(q)
}
