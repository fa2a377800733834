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
	// Steps, when set, replaces Body: it returns the work-group's body as
	// a StepBody (Kernel.Steps), run as callback events.
	Steps func(wg *WG, kernarg mem.Addr) StepBody
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
	g    *GPU
	name string
	base mem.Addr
	size uint64
	ctl  mem.Addr // write index at ctl, read index at ctl+8
	bell mem.Addr // doorbell, on its own line
	runs []*Run
	// forget: Runs keeps no launched kernel (SetKeepRuns).
	forget bool
	stats  AQLStats
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
	srv := &aqlServer{q: q, bell: "doorbell of " + q.name, hdr: "packet header of " + q.name}
	g.e.SpawnSteps(q.name, srv).SetDaemon()
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
// timelines (none after SetKeepRuns(false)).
func (q *AQLQueue) Runs() []*Run { return q.runs }

// SetKeepRuns sets whether Runs keeps every kernel launched from now on
// (true, the default) or none. A queue that launches a kernel per incoming
// task and whose caller never reads the timelines (a remote-task ring
// allreduce launches n − 1 per node and phase) would otherwise hold every
// run to the end: 0.6 KB per task, half a gigabyte at 1,024 nodes.
func (q *AQLQueue) SetKeepRuns(keep bool) { q.forget = !keep }

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

// aqlServer is the queue's packet processor as a step process
// (sim.Engine.SpawnSteps): the loop of the AQLQueue doc (wait for the
// doorbell, read the packet, wait for a valid header, free the slot,
// launch, run the kernel to completion, decrement the signal) as a state
// machine, one wait per step. A remote-task allreduce launches a kernel
// per incoming task, so this loop's waits are a large share of the run's
// events; as steps each wake-up is a call instead of two coroutine
// switches, with the same events at the same times (every wait is the
// coroutine loop's, in its order).
type aqlServer struct {
	q     *AQLQueue
	st    aqlState8
	rd    uint64   // the read index the packet processor waits past
	seen  sim.Time // when it saw the doorbell
	slot  mem.Addr
	pk    AQLPacket
	r     *Run       // the kernel being run (nil: a bad packet)
	kr    *kernelRun // its dispatch
	tDown sim.Time   // teardown start
	bell  string     // wait reasons, made once
	hdr   string
	wgs   string // "work-groups of " + the kernel's name
	wgsOf string // the name wgs was made for (a queue runs one kernel again and again)
}

// aqlState8 is where an aqlServer stands.
type aqlState8 uint8

const (
	aqlIdle      aqlState8 = iota // read the read index
	aqlBell                       // wait for the doorbell past it
	aqlRead                       // the packet's read is over: check its header
	aqlHeader                     // wait for a valid header
	aqlDecode                     // take the packet, free the slot, launch
	aqlLaunched                   // the launch latency is over: dispatch
	aqlBody                       // wait for the last work-group
	aqlTeardown                   // teardown is over: write the L2 back
	aqlWritten                    // the write-back is over
	aqlSignal                     // decrement the completion signal
	aqlSignalled                  // the decrement is over: store it
	aqlFinish                     // mark the run finished
)

// Step implements sim.Stepper.
func (s *aqlServer) Step(p *sim.Proc) bool {
	q := s.q
	g, m := q.g, q.g.mem
	for {
		switch s.st {
		case aqlIdle:
			s.rd = m.Load64(q.ReadIndex())
			s.st = aqlBell
		case aqlBell:
			if m.Load64(q.bell) <= s.rd {
				p.Wait(m.Watch(q.bell), s.bell)
				return false
			}
			q.stats.Doorbells++
			s.seen = p.Now()
			s.slot = q.slot(s.rd)
			s.st = aqlRead
			// The CP reads the packet: the packet processor is a DMA agent
			// of the system memory (gem5's HSA packet processor, the
			// documents' simulator), not a client of the GPU L2, so it
			// pays the memory access, no L2 lookup (and the directory's
			// lookup before it on a node behind one: UseDirectory).
			p.Sleep(g.dmaLat)
			return false
		case aqlRead:
			s.st = aqlDecode
			if q.headerInvalid(s.slot) {
				q.stats.HeaderWait++
				s.st = aqlHeader
			}
		case aqlHeader:
			if q.headerInvalid(s.slot) {
				p.Wait(m.Watch(s.slot), s.hdr)
				return false
			}
			s.st = aqlDecode
			p.Sleep(g.dmaLat)
			return false
		case aqlDecode:
			var raw [AQLPacketSize]byte
			m.Read(s.slot, raw[:])
			s.pk = DecodeAQL(raw[:])
			m.Write(s.slot, []byte{byte(AQLTypeInvalid), 0}) // the slot is free again
			m.Store64(q.ReadIndex(), s.rd+1)
			s.r = q.dispatch(s.pk, s.seen)
			if s.r == nil {
				s.st = aqlSignal
				continue
			}
			// execute's steps (gpu.go), in its order.
			s.st = aqlLaunched
			p.Sleep(g.spec.Launch)
			return false
		case aqlLaunched:
			s.kr = g.startKernel(p, s.r)
			if name := s.r.Kernel.Name; name != s.wgsOf || s.wgs == "" {
				s.wgs, s.wgsOf = "work-groups of "+name, name
			}
			s.st = aqlBody
		case aqlBody:
			if kr := s.kr; kr.dispatched < kr.k.WGs || kr.live > 0 { // the last retirement resumes the CP (Handle)
				p.Wait(&kr.fin, s.wgs)
				return false
			}
			s.r.BodyEnd = p.Now()
			s.tDown = p.Now()
			s.st = aqlTeardown
			p.Sleep(g.spec.Teardown)
			return false
		case aqlTeardown:
			// The completion signal is the kernel's system-scope
			// release (execute's teardown): it waits for the
			// work-groups' last stores to land, so a host that sees the
			// signal reads what the kernel wrote.
			if s.kr.storesAt > p.Now() {
				p.SleepUntil(s.kr.storesAt)
				return false
			}
			s.st = aqlWritten
			g.writeBackAll(p)
			if p.Waited() {
				return false
			}
		case aqlWritten:
			if g.e.Tracer() != nil {
				g.e.Span(g.name+".cp", "teardown "+s.r.Kernel.Name, s.tDown, p.Now())
			}
			g.freeRuns.Put(s.kr)
			s.kr = nil
			s.r.Done = p.Now() + g.dmaLat
			s.st = aqlSignal
		case aqlSignal:
			s.st = aqlFinish
			if s.pk.Signal != 0 {
				s.st = aqlSignalled
				p.Sleep(g.dmaLat) // the atomic decrement at memory
				return false
			}
		case aqlSignalled:
			m.Store64(s.pk.Signal, m.Load64(s.pk.Signal)-1)
			s.st = aqlFinish
		case aqlFinish:
			if r := s.r; r != nil {
				r.finished = true
				r.fin.Notify()
				s.r = nil
			}
			s.st = aqlIdle
		}
	}
}

// headerInvalid reports whether the packet at slot still has an INVALID
// header (not yet published).
func (q *AQLQueue) headerInvalid(slot mem.Addr) bool {
	return binary.LittleEndian.Uint16(q.g.mem.Bytes(slot, 2))&0xff == AQLTypeInvalid
}

// dispatch returns the run of packet pk, seen at the doorbell at seen, or
// nil when the packet cannot run (unknown kernel object, zero or
// impossible geometry): it is counted and skipped, and its signal is still
// decremented so waiters do not hang.
func (q *AQLQueue) dispatch(pk AQLPacket, seen sim.Time) *Run {
	g := q.g
	code, ok := g.kernelCode(pk.KernelObject)
	k := Kernel{Name: code.Name, WGSize: int(pk.WGSize), LDS: code.LDS}
	if pk.WGSize > 0 {
		k.WGs = int((pk.Grid + uint32(pk.WGSize) - 1) / uint32(pk.WGSize))
	}
	if ok {
		kernarg := pk.Kernarg
		if code.Steps != nil {
			steps := code.Steps
			k.Steps = func(wg *WG) StepBody { return steps(wg, kernarg) }
		} else {
			body := code.Body
			k.Body = func(wg *WG) { body(wg, kernarg) }
		}
	}
	if !ok || pk.Header&0xff != AQLTypeKernelDispatch || g.Validate(k) != nil {
		q.stats.BadPackets++
		return nil
	}
	q.stats.Launched++
	r := &Run{Kernel: k, Signal: pk.Signal, Queued: seen, LaunchStart: seen}
	if !q.forget {
		q.runs = append(q.runs, r)
	}
	return r
}

// LoadArgs reads n 64-bit kernel arguments at kernarg (one scalar memory
// access: the kernarg segment is a few lines fetched together).
func (w *WG) LoadArgs(kernarg mem.Addr, n int) []uint64 {
	out := make([]uint64, n)
	for !w.TryLoadArgs(kernarg, out) {
		w.mustHaveBlocked("LoadArgs")
	}
	return out
}

// TryLoadArgs is LoadArgs in steps, into out (len(out) arguments): the
// first call waits for the access (false), the second reads the
// arguments as memory holds them then (true, no wait pending).
func (w *WG) TryLoadArgs(kernarg mem.Addr, out []uint64) bool {
	if w.ph.args == 0 {
		w.ph.args = 1
		w.Sleep(w.g.missLat) // the host or the NIC wrote the segment: an L2 miss
		return false
	}
	w.ph.args = 0
	// One read of the segment, not a search of node memory per word.
	var b [8 * 8]byte
	for i := 0; i < len(out); i += 8 {
		k := min(8, len(out)-i)
		w.g.mem.ReadCached(&w.g.args, kernarg+mem.Addr(8*i), b[:8*k])
		for j := range k {
			out[i+j] = binary.LittleEndian.Uint64(b[8*j:])
		}
	}
	return true
}

// Groups returns the number of work-groups in the work-group's grid.
func (w *WG) Groups() int { return w.run.Kernel.WGs }
