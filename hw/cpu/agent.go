package cpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CPU agent dispatch (the dissertation's XTQ chapter, "CPU command packet"): the HSA
// agent-dispatch packet, 64 bytes, little-endian, with the return-address
// slot reused as the function pointer ([DEFAULT]: the documents say only
// that the packet holds a function pointer and embedded scalar arguments).
const (
	AgentPacketSize    = 64
	AgentHeaderOff     = 0  // u16: packet type (bits 0–7), barrier, fence scopes (as in an AQL packet)
	AgentTypeOff       = 2  // u16: application-defined function type
	AgentQueueIndexOff = 4  // u32 reserved: the XTQ queue index on the wire
	AgentFunctionOff   = 8  // u64: function pointer; the XTQ function index on the wire
	AgentArgOff        = 16 // u64 × AgentArgs: the embedded arguments
	AgentArgs          = 4
	AgentSignalOff     = 56 // u64: completion signal (address of its 64-bit value; 0 = none)
)

// Packet types of the header's low byte (HSA), shared with AQL kernel
// dispatch packets (hw/gpu).
const (
	PacketTypeInvalid       uint16 = 1
	PacketTypeAgentDispatch uint16 = 4
	// AgentDispatchHeader is an agent-dispatch header with the barrier bit
	// and system-scope acquire and release fences.
	AgentDispatchHeader = PacketTypeAgentDispatch | 1<<8 | 2<<9 | 2<<11
)

// AgentPacket is a decoded agent-dispatch packet.
type AgentPacket struct {
	Header     uint16
	Type       uint16
	QueueIndex uint32
	Function   uint64
	Args       [AgentArgs]uint64
	Signal     mem.Addr
}

// Encode returns the 64 packet bytes.
func (p AgentPacket) Encode() [AgentPacketSize]byte {
	var b [AgentPacketSize]byte
	le := binary.LittleEndian
	le.PutUint16(b[AgentHeaderOff:], p.Header)
	le.PutUint16(b[AgentTypeOff:], p.Type)
	le.PutUint32(b[AgentQueueIndexOff:], p.QueueIndex)
	le.PutUint64(b[AgentFunctionOff:], p.Function)
	for i, a := range p.Args {
		le.PutUint64(b[AgentArgOff+8*i:], a)
	}
	le.PutUint64(b[AgentSignalOff:], uint64(p.Signal))
	return b
}

// DecodeAgent decodes a 64-byte agent-dispatch packet.
func DecodeAgent(b []byte) AgentPacket {
	le := binary.LittleEndian
	p := AgentPacket{Header: le.Uint16(b[AgentHeaderOff:]), Type: le.Uint16(b[AgentTypeOff:]),
		QueueIndex: le.Uint32(b[AgentQueueIndexOff:]), Function: le.Uint64(b[AgentFunctionOff:]),
		Signal: mem.Addr(le.Uint64(b[AgentSignalOff:]))}
	for i := range p.Args {
		p.Args[i] = le.Uint64(b[AgentArgOff+8*i:])
	}
	return p
}

// Function is host code a function pointer names: Body runs on the agent
// thread that dequeued the packet, with the packet's four arguments, and
// charges its own work through the thread (Compute, Load, Instr…).
type Function struct {
	Name string
	Body func(t *Thread, args [AgentArgs]uint64)
}

// functionBase keeps function pointers far from small table indices and
// from GPU kernel objects, so an un-rewritten index is never taken for one.
const functionBase = 1 << 41

// LoadFunction registers f and returns its function pointer.
func (c *CPU) LoadFunction(f Function) uint64 {
	c.functions = append(c.functions, f)
	return functionBase + uint64(len(c.functions)-1)
}

func (c *CPU) function(ptr uint64) (Function, bool) {
	i := ptr - functionBase
	if ptr < functionBase || i >= uint64(len(c.functions)) {
		return Function{}, false
	}
	return c.functions[i], true
}

// AgentQueue is a user-mode queue of the CPU agent: a ring of 64-byte
// packet slots in host memory with a write index, a read index and a
// doorbell signal, the same producer protocol as a GPU AQL queue (reserve
// by an atomic add on the write index, body, header last, then the new
// write index to the doorbell). A host thread of its own polls the
// doorbell (the dissertation's XTQ chapter step 6: for a CPU agent the doorbell is a signal
// in shared memory that a CPU thread polls), reads the packet at its read
// index (a miss: the producer wrote it), waits for a valid header, frees
// the slot, calls the function and decrements the completion signal by a
// locked read-modify-write. The call itself has no fixed overhead beyond
// those memory accesses; the function charges its own work.
type AgentQueue struct {
	c     *CPU
	name  string
	base  mem.Addr
	size  uint64
	ctl   mem.Addr // write index at ctl, read index at ctl+8
	bell  mem.Addr
	runs  []*AgentRun
	stats AgentStats
}

// AgentRun is one function call's timeline.
type AgentRun struct {
	Function string
	Seen     sim.Time // the agent thread saw the doorbell
	Start    sim.Time // the function started (packet read and decoded)
	End      sim.Time // the function returned
	Done     sim.Time // the completion signal was decremented
	Signal   mem.Addr
}

// AgentStats counts an agent queue's packet processing.
type AgentStats struct {
	Calls      uint64 // functions called
	HeaderWait uint64 // packets whose header was not yet valid when read
	BadPackets uint64 // packets skipped: not an agent dispatch, or an unknown function pointer
}

// NewAgentQueue creates a CPU agent queue of size slots (a power of two
// in [1, 65536]) and starts its agent thread.
func (c *CPU) NewAgentQueue(name string, size int) (*AgentQueue, error) {
	if size < 1 || size > 1<<16 || size&(size-1) != 0 {
		return nil, fmt.Errorf("agent queue %s: size %d: must be a power of two in [1, 65536]", name, size)
	}
	m := c.mem
	q := &AgentQueue{c: c, name: c.name + "." + name, size: uint64(size)}
	q.base = m.AllocData(mem.Host, uint64(size)*AgentPacketSize, name+".ring")
	for i := range uint64(size) {
		m.Write(q.Slot(i), []byte{byte(PacketTypeInvalid), 0})
	}
	q.ctl = m.AllocData(mem.Host, 16, name+".index")
	q.bell = m.AllocData(mem.Host, 8, name+".doorbell")
	t := c.Spawn(q.name+".agent", q.serve)
	t.SetDaemon()
	return q, nil
}

// Base returns the address of slot 0.
func (q *AgentQueue) Base() mem.Addr { return q.base }

// Size returns the number of slots.
func (q *AgentQueue) Size() uint64 { return q.size }

// WriteIndex returns the address of the write index word.
func (q *AgentQueue) WriteIndex() mem.Addr { return q.ctl }

// ReadIndex returns the address of the read index word.
func (q *AgentQueue) ReadIndex() mem.Addr { return q.ctl + 8 }

// Doorbell returns the address of the doorbell signal.
func (q *AgentQueue) Doorbell() mem.Addr { return q.bell }

// Slot returns the address of the slot packet index i occupies.
func (q *AgentQueue) Slot(i uint64) mem.Addr { return q.base + mem.Addr((i%q.size)*AgentPacketSize) }

// Runs returns the calls made from the queue, in order.
func (q *AgentQueue) Runs() []*AgentRun { return q.runs }

// Stats returns the queue's counters.
func (q *AgentQueue) Stats() AgentStats { return q.stats }

func (q *AgentQueue) serve(t *Thread) {
	m := q.c.mem
	for {
		rd := m.Load64(q.ReadIndex())
		t.WaitWord(q.bell, "doorbell of "+q.name, func(v uint64) bool { return v > rd })
		r := &AgentRun{Seen: t.Now()}
		slot := q.Slot(rd)
		if t.Load(slot)&0xff == uint64(PacketTypeInvalid) {
			q.stats.HeaderWait++
			t.WaitWord(slot, "packet header of "+q.name, func(v uint64) bool { return v&0xff != uint64(PacketTypeInvalid) })
		}
		var raw [AgentPacketSize]byte
		m.Read(slot, raw[:])
		pk := DecodeAgent(raw[:])
		m.Write(slot, []byte{byte(PacketTypeInvalid), 0}) // the slot is free again
		m.Store64(q.ReadIndex(), rd+1)
		q.call(t, pk, r)
	}
}

// call runs the packet's function and decrements its signal; a packet
// that cannot run is counted and skipped, its signal still decremented so
// waiters do not hang.
func (q *AgentQueue) call(t *Thread, pk AgentPacket, r *AgentRun) {
	f, ok := q.c.function(pk.Function)
	if !ok || pk.Header&0xff != PacketTypeAgentDispatch {
		q.stats.BadPackets++
	} else {
		q.stats.Calls++
		r.Function, r.Signal, r.Start = f.Name, pk.Signal, t.Now()
		f.Body(t, pk.Args)
		r.End = t.Now()
		q.runs = append(q.runs, r)
	}
	if pk.Signal != 0 {
		t.RMW(pk.Signal, ^uint64(0)) // add −1
		r.Done = t.Now()
	}
}
