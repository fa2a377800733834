package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pulp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// NIC is the sPIN processing side of one Portals NIC: the packet buffer,
// the scheduler, the HPUs, the NIC memory and the DMA write engine. Bind it
// to matching entries through execution contexts (NewContext, then
// nic.ME.Ctx). Create it with New.
type NIC struct {
	e     *sim.Engine
	nic   *nic.NIC
	host  *mem.Memory
	spec  Spec
	name  string
	mem   memory
	accel *pulp.Accel  // the PULP model's accelerator; nil for arm
	dmaQ  []int        // pulp: outbound DMA transfers queued per cluster (issued, source not yet read)
	dmaQS []sim.Signal // pulp: notified when a cluster's queue drains by one
	dma   dmaEngine
	sched scheduler
	hpus  []*hpu

	bufUsed unit.Bytes // packet buffer bytes held
	freed   uint64     // packets whose buffer slot was freed (invariant: = stats.Packets at the end)
	alloc   unit.Bytes // NIC memory allocated to contexts
	slot    uint64     // packets taken so far: the next one's packet-buffer slot
	ctxBase uint64     // NIC address of the next context's memory
	stats   Stats
	// onHostWrite observes DMA writes landing in host memory (OnHostWrite).
	onHostWrite func(t sim.Time, a mem.Addr, n unit.Bytes)
}

// Stats are the sPIN side's counters.
type Stats struct {
	Packets      uint64     // packets taken into the packet buffer
	Stalls       uint64     // packets refused because the packet buffer was full
	BufMax       unit.Bytes // packet buffer high-water mark
	Handlers     [3]uint64  // handler runs by kind (header, payload, completion)
	HandlerBusy  sim.Time   // HPU time spent in handlers, summed over HPUs
	HandlerWork  sim.Time   // of it, cycles the handlers charged (compute, invocation, DMA issue)
	StageWait    sim.Time   // HPU time waiting for packets to reach local memory before handlers (pulp)
	DMAQueueWait sim.Time   // handler time stalled on a full cluster DMA queue (pulp)
	DMAWrites    uint64     // DMA write requests issued by handlers and engines
	DMAFIFOMax   int        // maximum DMA write FIFO occupancy (requests)
	DMAReads     uint64     // DMA reads from host issued by handlers
	NICMemBytes  uint64     // bytes moved through NIC memory
	Commands     uint64     // NIC commands issued by handlers
	MemAllocated unit.Bytes // NIC memory held by contexts now
	Failed       uint64     // messages ended by a handler returning FAIL
	Dropped      uint64     // packets discarded after a handler returned DROP
	OutOfOrder   uint64     // packets that arrived after a later packet of their message
}

// New attaches a sPIN processing side to n. The spec must be valid; New
// panics otherwise, naming the NIC. It also panics when the packet buffer
// cannot hold one full packet.
func New(n *nic.NIC, spec Spec) *NIC {
	name := n.Name() + ".spin"
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("%s: invalid spec: %v", name, err))
	}
	if spec.PktBuffer < n.MaxPayload() {
		panic(fmt.Sprintf("%s: spin.pkt_buffer = %v is below one packet (%v)", name, spec.PktBuffer, n.MaxPayload()))
	}
	s := &NIC{e: n.Engine(), nic: n, host: n.Memory(), spec: spec, name: name, ctxBase: uint64(spec.PktBuffer)}
	if spec.Model == ModelPULP {
		pm, err := newPulpMem(spec)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		s.mem, s.accel = pm, pm.a
		s.dmaQ, s.dmaQS = make([]int, spec.PULP.Clusters), make([]sim.Signal, spec.PULP.Clusters)
	} else {
		s.mem = newNICMem(spec)
	}
	s.dma.s = s
	s.sched.s = s
	for i := range spec.HPUs {
		h := &hpu{s: s, id: i, track: fmt.Sprintf("%s.hpu[%d]", name, i)}
		s.hpus = append(s.hpus, h)
		p := s.e.Spawn(h.track, h.run)
		p.SetDaemon()
		s.sched.idle = append(s.sched.idle, h)
	}
	n.AttachInvariants(s.Invariants)
	return s
}

// Spec returns the parameters.
func (s *NIC) Spec() Spec { return s.spec }

// Portals returns the Portals NIC this side is attached to.
func (s *NIC) Portals() *nic.NIC { return s.nic }

// Stats returns a copy of the counters.
func (s *NIC) Stats() Stats {
	st := s.stats
	st.DMAWrites = s.dma.writes
	st.DMAFIFOMax = s.dma.max
	st.NICMemBytes = s.mem.moved()
	st.MemAllocated = s.alloc
	return st
}

// OnHostWrite calls fn with every DMA write as it becomes visible in host
// memory (time, address, bytes), for a host memory model that counts the
// traffic; nil stops it.
func (s *NIC) OnHostWrite(fn func(t sim.Time, a mem.Addr, n unit.Bytes)) { s.onHostWrite = fn }

// Accel returns the PULP accelerator (spin.hpu_model = pulp), else nil.
func (s *NIC) Accel() *pulp.Accel { return s.accel }

// TraceDMA turns on the DMA write FIFO occupancy trace (off by default: it
// holds a sample per request).
func (s *NIC) TraceDMA(on bool) { s.dma.tracing = on }

// DMATrace returns the occupancy samples recorded so far: one at every
// request entering or leaving the read stage.
func (s *NIC) DMATrace() []OccSample { return s.dma.trace }

// DMAEvents returns the DMA completion events raised so far, in order.
func (s *NIC) DMAEvents() []DMAEvent { return s.dma.events }

// DMASignal is notified whenever a DMA event is raised.
func (s *NIC) DMASignal() *sim.Signal { return &s.dma.sig }

// Alloc reserves b bytes of NIC memory for a context's structures
// (the SC'19 paper step 2). It fails, naming the sizes, when they do not
// fit spin.mem_size.
func (s *NIC) Alloc(b unit.Bytes) error {
	if b < 0 || s.alloc+b > s.spec.MemSize {
		return fmt.Errorf("%s: %v of NIC memory requested, %v of spin.mem_size = %v free", s.name, b, s.spec.MemSize-s.alloc, s.spec.MemSize)
	}
	s.alloc += b
	return nil
}

// Free returns b bytes of NIC memory taken with Alloc.
func (s *NIC) Free(b unit.Bytes) { s.alloc = max(0, s.alloc-b) }

// packet is one packet in the packet buffer. It stays there until its
// handlers have run and every DMA reading it has read it.
type packet struct {
	msg  *msgState
	pk   nic.CtxPacket
	refs int // the handler run + DMA requests still reading it
	size unit.Bytes
	addr uint64 // NIC address of its packet-buffer slot
	// preloaded: placed by a static run, outside the packet buffer.
	preloaded bool
}

// Arrive implements nic.ExecContext for the contexts of this NIC: it copies
// the packet into the packet buffer (a NIC-memory write) and raises the HER
// when the copy is done, or refuses the packet when the buffer is full.
func (c *Context) Arrive(m *nic.CtxMsg, pk nic.CtxPacket) bool {
	ms, _ := m.State.(*msgState)
	if ms == nil {
		ms = newMsgState(c, m)
		m.State = ms
	}
	ms.learnLength()
	ok := c.s.take(ms, pk, c.s.sched.arrived)
	if ok && pk.Index < ms.maxIdx {
		c.s.stats.OutOfOrder++
	}
	if ok {
		ms.maxIdx = max(ms.maxIdx, pk.Index)
	}
	return ok
}

// take copies a packet into the packet buffer and calls ready when the
// NIC-memory write is done; false when the buffer is full.
func (s *NIC) take(ms *msgState, pk nic.CtxPacket, ready func(*packet)) bool {
	size := unit.Bytes(pk.Len)
	if s.bufUsed+size > s.spec.PktBuffer {
		s.stats.Stalls++
		return false
	}
	s.bufUsed += size
	s.stats.BufMax = max(s.stats.BufMax, s.bufUsed)
	s.stats.Packets++
	p := &packet{msg: ms, pk: pk, refs: 1, size: size, addr: s.slotAddr()}
	done := s.mem.packetIn(s.e.Now(), p.addr, size)
	s.e.At(done, func() { ready(p) })
	return true
}

// slotAddr returns the NIC address of the next packet-buffer slot: slots
// of one full payload each, taken round-robin over the buffer.
func (s *NIC) slotAddr() uint64 {
	k := uint64(s.nic.MaxPayload())
	n := max(uint64(s.spec.PktBuffer)/k, 1)
	a := (s.slot % n) * k
	s.slot++
	return a
}

// unref drops one reference to p's buffer slot and frees it at zero; a
// stalled inbound engine resumes.
func (s *NIC) unref(p *packet) {
	p.refs--
	if p.refs > 0 {
		return
	}
	if p.preloaded {
		return
	}
	s.bufUsed -= p.size
	s.freed++
	if s.nic.Stalled() {
		s.nic.Resume()
	}
}
