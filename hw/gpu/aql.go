package gpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// AQL kernel-dispatch packet layout (HSA; the dissertation's XTQ chapter): 64 bytes,
// little-endian, at these byte offsets.
const (
	AQLPacketSize      = 64
	AQLHeaderOff       = 0  // u16: type (bits 0–7), barrier (8), acquire (9–10) and release (11–12) fence scopes
	AQLSetupOff        = 2  // u16: dimensions
	AQLWGSizeOff       = 4  // u16 × 3: work-group size x, y, z
	AQLQueueIndexOff   = 10 // u16 reserved0: the XTQ queue index on the wire
	AQLGridOff         = 12 // u32 × 3: grid size x, y, z in work-items
	AQLPrivateOff      = 24 // u32: private segment size
	AQLGroupOff        = 28 // u32: group segment (LDS) size
	AQLKernelObjectOff = 32 // u64: kernel object; the XTQ kernel index on the wire
	AQLKernargOff      = 40 // u64: kernel argument address
	AQLReservedOff     = 48 // u64
	AQLSignalOff       = 56 // u64: completion signal (address of its 64-bit value; 0 = none)
)

// AQL packet types (header bits 0–7) and header flags.
const (
	AQLTypeInvalid        uint16 = 1
	AQLTypeKernelDispatch uint16 = 2
	AQLBarrier            uint16 = 1 << 8
	aqlAcquireSystem      uint16 = 2 << 9
	aqlReleaseSystem      uint16 = 2 << 11
)

// DispatchHeader is the header of a kernel-dispatch packet with the barrier
// bit and system-scope acquire and release fences.
const DispatchHeader = AQLTypeKernelDispatch | AQLBarrier | aqlAcquireSystem | aqlReleaseSystem

// AQLPacket is a decoded kernel-dispatch packet (one dimension used).
type AQLPacket struct {
	Header       uint16
	Setup        uint16
	WGSize       uint16 // work-items per work-group (x)
	QueueIndex   uint16 // reserved0
	Grid         uint32 // work-items (x)
	GroupSize    uint32 // LDS bytes per work-group
	KernelObject uint64
	Kernarg      mem.Addr
	Signal       mem.Addr
}

// Encode returns the 64 packet bytes.
func (p AQLPacket) Encode() [AQLPacketSize]byte {
	var b [AQLPacketSize]byte
	le := binary.LittleEndian
	le.PutUint16(b[AQLHeaderOff:], p.Header)
	le.PutUint16(b[AQLSetupOff:], max(p.Setup, 1))
	le.PutUint16(b[AQLWGSizeOff:], p.WGSize)
	le.PutUint16(b[AQLWGSizeOff+2:], 1)
	le.PutUint16(b[AQLWGSizeOff+4:], 1)
	le.PutUint16(b[AQLQueueIndexOff:], p.QueueIndex)
	le.PutUint32(b[AQLGridOff:], p.Grid)
	le.PutUint32(b[AQLGridOff+4:], 1)
	le.PutUint32(b[AQLGridOff+8:], 1)
	le.PutUint32(b[AQLGroupOff:], p.GroupSize)
	le.PutUint64(b[AQLKernelObjectOff:], p.KernelObject)
	le.PutUint64(b[AQLKernargOff:], uint64(p.Kernarg))
	le.PutUint64(b[AQLSignalOff:], uint64(p.Signal))
	return b
}

// DecodeAQL decodes a 64-byte packet.
func DecodeAQL(b []byte) AQLPacket {
	le := binary.LittleEndian
	return AQLPacket{Header: le.Uint16(b[AQLHeaderOff:]), Setup: le.Uint16(b[AQLSetupOff:]),
		WGSize: le.Uint16(b[AQLWGSizeOff:]), QueueIndex: le.Uint16(b[AQLQueueIndexOff:]),
		Grid: le.Uint32(b[AQLGridOff:]), GroupSize: le.Uint32(b[AQLGroupOff:]),
		KernelObject: le.Uint64(b[AQLKernelObjectOff:]), Kernarg: mem.Addr(le.Uint64(b[AQLKernargOff:])),
		Signal: mem.Addr(le.Uint64(b[AQLSignalOff:]))}
}

// KernelCode is a loaded kernel: what a kernel object handle names. Body
// runs once per work-group with the packet's kernel-argument address.
type KernelCode struct {
	Name string
	LDS  unit.Bytes
	Body func(wg *WG, kernarg mem.Addr)
}

type aqlState struct {
	objects []KernelCode
	queues  int
	list    []*AQLQueue // every queue, for the invariant check
}

// kernelObjectBase keeps kernel object handles far from small table
// indices, so an un-rewritten index is never mistaken for a handle.
const kernelObjectBase = 1 << 40

// LoadKernel registers code and returns its kernel object handle.
func (g *GPU) LoadKernel(code KernelCode) uint64 {
	g.aql.objects = append(g.aql.objects, code)
	return kernelObjectBase + uint64(len(g.aql.objects)-1)
}

func (g *GPU) kernelCode(obj uint64) (KernelCode, bool) {
	i := obj - kernelObjectBase
	if obj < kernelObjectBase || i >= uint64(len(g.aql.objects)) {
		return KernelCode{}, false
	}
	return g.aql.objects[i], true
}

// NewSignal allocates an HSA signal: a 64-bit value in host memory that
// the CP decrements when a kernel naming it completes. It returns the
// signal's handle (the address of its value).
func (g *GPU) NewSignal(name string, v uint64) mem.Addr {
	a := g.mem.AllocData(mem.Host, 8, name)
	g.mem.Store64(a, v)
	return a
}

// AQLQueue is an HSA user-mode queue (the dissertation): a ring of 64-byte
// packet slots in host memory with a write index, a read index and a
// doorbell, all words in memory that any agent (host thread, NIC) may
// access. Producers reserve a slot by an atomic add on the write index,
// write the packet body, publish the header last, then write the new write
// index to the doorbell. The queue's packet processor on the CP waits for
// the doorbell, reads the packet at its read index, waits for a valid
// header, frees the slot (header INVALID, read index + 1) and runs the
// kernel to completion before the next packet (every packet is treated as
// having its barrier bit set), then decrements the completion signal.
// Separate queues are served independently.
type AQLQueue struct {
	g     *GPU
	name  string
	base  mem.Addr
	size  uint64
	ctl   mem.Addr // write index at ctl, read index at ctl+8
	bell  mem.Addr // doorbell, on its own line
	runs  []*Run
	stats AQLStats
}

// AQLStats counts a queue's packet processing.
type AQLStats struct {
	Doorbells  uint64 // doorbell values seen by the packet processor
	Launched   uint64 // kernels launched
	HeaderWait uint64 // packets whose header was not yet valid when read
	BadPackets uint64 // packets skipped: unknown kernel object or impossible dispatch
}

// NewAQLQueue creates a user-mode queue of size slots (a power of two in
// [1, 65536]) and starts its packet processor.
func (g *GPU) NewAQLQueue(name string, size int) (*AQLQueue, error) {
	if size < 1 || size > 1<<16 || size&(size-1) != 0 {
		return nil, fmt.Errorf("AQL queue %s: size %d: must be a power of two in [1, 65536]", name, size)
	}
	m := g.mem
	q := &AQLQueue{g: g, name: fmt.Sprintf("%s.cp.q[%d]", g.name, g.aql.queues), size: uint64(size)}
	g.aql.queues++
	g.aql.list = append(g.aql.list, q)
	q.base = m.AllocData(mem.Host, uint64(size)*AQLPacketSize, name+".ring")
	for i := range uint64(size) {
		m.Write(q.slot(i), []byte{byte(AQLTypeInvalid), 0})
	}
	q.ctl = m.AllocData(mem.Host, 16, name+".index")
	q.bell = m.AllocData(mem.Host, 8, name+".doorbell")
	p := g.e.Spawn(q.name, q.serve)
	p.SetDaemon()
	return q, nil
}

// Base returns the address of slot 0.
func (q *AQLQueue) Base() mem.Addr { return q.base }

// Size returns the number of slots.
func (q *AQLQueue) Size() uint64 { return q.size }

// WriteIndex returns the address of the write index word.
func (q *AQLQueue) WriteIndex() mem.Addr { return q.ctl }

// ReadIndex returns the address of the read index word.
func (q *AQLQueue) ReadIndex() mem.Addr { return q.ctl + 8 }

// Doorbell returns the address of the doorbell word.
func (q *AQLQueue) Doorbell() mem.Addr { return q.bell }

// Slot returns the address of the slot that packet index i occupies.
func (q *AQLQueue) Slot(i uint64) mem.Addr { return q.slot(i) }

func (q *AQLQueue) slot(i uint64) mem.Addr { return q.base + mem.Addr((i%q.size)*AQLPacketSize) }

// Runs returns the kernels launched from the queue, in order, with their
// timelines.
func (q *AQLQueue) Runs() []*Run { return q.runs }

// Stats returns the queue's counters.
func (q *AQLQueue) Stats() AQLStats { return q.stats }

// RingDoorbell writes v (the newest write index) to the doorbell word now.
// Doorbell values only grow: a late, smaller value from a slower producer
// does not move it back.
func RingDoorbell(m *mem.Memory, bell mem.Addr, v uint64) {
	if v > m.Load64(bell) {
		m.Store64(bell, v)
	}
}

func (q *AQLQueue) serve(p *sim.Proc) {
	g, m := q.g, q.g.mem
	lat := g.spec.MemLatency
	for {
		rd := m.Load64(q.ReadIndex())
		p.WaitUntil(m.Watch(q.bell), "doorbell of "+q.name, func() bool { return m.Load64(q.bell) > rd })
		q.stats.Doorbells++
		seen := p.Now()
		slot := q.slot(rd)
		p.Sleep(lat) // the CP reads the packet
		if binary.LittleEndian.Uint16(m.Bytes(slot, 2))&0xff == AQLTypeInvalid {
			q.stats.HeaderWait++
			p.WaitUntil(m.Watch(slot), "packet header of "+q.name, func() bool {
				return binary.LittleEndian.Uint16(m.Bytes(slot, 2))&0xff != AQLTypeInvalid
			})
			p.Sleep(lat)
		}
		var raw [AQLPacketSize]byte
		m.Read(slot, raw[:])
		pk := DecodeAQL(raw[:])
		m.Write(slot, []byte{byte(AQLTypeInvalid), 0}) // the slot is free again
		m.Store64(q.ReadIndex(), rd+1)
		q.launch(p, pk, seen)
	}
}

// launch runs one dispatch to completion and decrements its signal. A
// packet that cannot run (unknown kernel object, zero or impossible
// geometry) is counted and skipped; its signal is still decremented so
// waiters do not hang.
func (q *AQLQueue) launch(p *sim.Proc, pk AQLPacket, seen sim.Time) {
	g, m := q.g, q.g.mem
	code, ok := g.kernelCode(pk.KernelObject)
	k := Kernel{Name: code.Name, WGSize: int(pk.WGSize), LDS: code.LDS}
	if pk.WGSize > 0 {
		k.WGs = int((pk.Grid + uint32(pk.WGSize) - 1) / uint32(pk.WGSize))
	}
	if ok {
		kernarg := pk.Kernarg
		k.Body = func(wg *WG) { code.Body(wg, kernarg) }
	}
	if !ok || pk.Header&0xff != AQLTypeKernelDispatch || g.Validate(k) != nil {
		q.stats.BadPackets++
	} else {
		q.stats.Launched++
		r := &Run{Kernel: k, Signal: pk.Signal, Queued: seen, LaunchStart: seen}
		q.runs = append(q.runs, r)
		g.execute(p, r)
		r.Done = p.Now() + g.spec.MemLatency
		defer func() { r.finished = true; r.fin.Notify() }()
	}
	if pk.Signal != 0 {
		p.Sleep(g.spec.MemLatency) // the atomic decrement at memory
		m.Store64(pk.Signal, m.Load64(pk.Signal)-1)
	}
}

// LoadArgs reads n 64-bit kernel arguments at kernarg (one scalar memory
// access: the kernarg segment is a few lines fetched together).
func (w *WG) LoadArgs(kernarg mem.Addr, n int) []uint64 {
	w.Sleep(w.g.spec.MemLatency)
	w.mustHaveBlocked("LoadArgs")
	out := make([]uint64, n)
	for i := range out {
		out[i] = w.g.mem.Load64(kernarg + mem.Addr(8*i))
	}
	return out
}

// Groups returns the number of work-groups in the work-group's grid.
func (w *WG) Groups() int { return w.run.Kernel.WGs }
