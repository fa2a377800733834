package shmem

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/cp"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// ---------------------------------------------------------------------------
// Producers: how a work-group reaches its queue (the dissertation's ComP-Net chapter
// table, rows "queue memory" and "producer publish scope").

// gpuProducer writes a queue in GPU memory (or, in APU mode, the shared
// memory) through the CU's caches and publishes at scope: system for GHN
// (dGPU: write back the L2; APU: wait for the write-through), device for
// ComP-Net (the CP reads at the L2). With locked set, slot and status
// stores are store_locked (the ComP-Net paper).
type gpuProducer struct {
	scope  gpu.Scope
	locked bool
	g      *gpu.GPU
}

func (p gpuProducer) store(wg *gpu.WG, a mem.Addr, v uint64) { wg.StoreTracked(a, v, p.locked) }

func (p gpuProducer) fill(wg *gpu.WG, slot mem.Addr, w [7]uint64) {
	for i := 1; i < len(w); i++ {
		wg.StoreTracked(slot+mem.Addr(8*i), w[i], p.locked)
	}
}

func (p gpuProducer) release(wg *gpu.WG) { wg.Release(p.scope) }
func (p gpuProducer) acquire(wg *gpu.WG) { wg.Acquire(p.scope) }

func (p gpuProducer) load(wg *gpu.WG, a mem.Addr) uint64 { return wg.Load64(a) }

func (p gpuProducer) peek(a mem.Addr) uint64 {
	if p.scope == gpu.System {
		return p.g.Mem().Load64(a) // a system acquire drops the L2 copy
	}
	return p.g.CoherentLoad64(a)
}

// hostqProducer writes a queue in host memory with PCIe posted writes over
// the GPU's link and reads it with PCIe reads (GHN_DGPU_HOSTQ).
type hostqProducer struct {
	link    *pcie.Link
	m       *mem.Memory
	visible sim.Time // the latest posted write's visibility
	free    sim.FreeList[*postedWrite]
}

// postedWrite is a posted write in flight, landing in host memory at its
// visibility: an event handler with its bytes, reused once it has landed
// (a work-group posts two per entry; a closure and a copy each were two
// allocations per write).
type postedWrite struct {
	p *hostqProducer
	a mem.Addr
	n int
	b [48]byte
}

// Handle implements sim.Handler: the write lands.
func (w *postedWrite) Handle(uint64) {
	w.p.m.Write(w.a, w.b[:w.n])
	w.p.free.Put(w)
}

func (p *hostqProducer) write(wg *gpu.WG, a mem.Addr, b []byte) {
	free, vis := p.link.PostedWrite(pcie.Up, wg.Now(), unit.Bytes(len(b)))
	p.visible = max(p.visible, vis)
	if len(b) > len(postedWrite{}.b) { // (fill's words 1..6 are the most a producer writes)
		data, m := append([]byte(nil), b...), p.m
		wg.Engine().At(vis, func() { m.Write(a, data) })
		wg.SleepUntil(free)
		return
	}
	w, ok := p.free.Get()
	if !ok {
		w = &postedWrite{p: p}
	}
	w.a, w.n = a, copy(w.b[:], b)
	wg.Engine().AtH(vis, w, 0)
	wg.SleepUntil(free)
}

func (p *hostqProducer) store(wg *gpu.WG, a mem.Addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	p.write(wg, a, b[:])
}

// fill writes words 1..6 as one write-combined posted write.
func (p *hostqProducer) fill(wg *gpu.WG, slot mem.Addr, w [7]uint64) {
	var b [48]byte
	for i := 1; i < len(w); i++ {
		binary.LittleEndian.PutUint64(b[8*(i-1):], w[i])
	}
	p.write(wg, slot+8, b[:])
}

// release is the system-scope release: the posted writes visible in host
// memory, and the work-group's data in GPU memory (dirty L2 lines, e.g. a
// put's source) written back so the NIC reads it.
func (p *hostqProducer) release(wg *gpu.WG) {
	wg.Release(gpu.System)
	wg.SleepUntil(p.visible)
}

// acquire is the system-scope acquire after each completion pass (the
// producer protocol's step 5 at the queue's publish scope): the status
// words come over PCIe uncached, but the data a get brought into GPU
// memory must not be read from a stale L1 or L2 copy (dGPU: the L2
// invalidation of NIC-shared lines).
func (p *hostqProducer) acquire(wg *gpu.WG) { wg.Acquire(gpu.System) }

func (p *hostqProducer) load(wg *gpu.WG, a mem.Addr) uint64 {
	_, done := wg.HostLoad(p.link, wg.Now(), 8)
	wg.SleepUntil(done)
	return p.m.Load64(a)
}

func (p *hostqProducer) peek(a mem.Addr) uint64 { return p.m.Load64(a) }

// splitProducer is ROC_SHMEM's reverse-offload placement (IKN on preset
// gio): entries and the read index in host memory, reached like
// hostqProducer's (posted writes, a PCIe read of the read index when the
// ring looks full); the completion status words and fetch results in GPU
// memory, reached with the GPU's own loads and stores and a system
// acquire, so completion is never polled over PCIe.
type splitProducer struct {
	host *hostqProducer
	dev  gpuProducer
	m    *mem.Memory
}

func (p splitProducer) inGPU(a mem.Addr) bool { return p.m.PoolOf(a) == mem.GPU }

func (p splitProducer) store(wg *gpu.WG, a mem.Addr, v uint64) {
	if p.inGPU(a) {
		p.dev.store(wg, a, v)
		return
	}
	p.host.store(wg, a, v)
}

func (p splitProducer) fill(wg *gpu.WG, slot mem.Addr, w [7]uint64) { p.host.fill(wg, slot, w) }
func (p splitProducer) release(wg *gpu.WG)                          { p.host.release(wg) }
func (p splitProducer) acquire(wg *gpu.WG)                          { p.dev.acquire(wg) }

func (p splitProducer) load(wg *gpu.WG, a mem.Addr) uint64 {
	if p.inGPU(a) {
		return p.dev.load(wg, a)
	}
	return p.host.load(wg, a)
}

func (p splitProducer) peek(a mem.Addr) uint64 {
	if p.inGPU(a) {
		return p.dev.peek(a)
	}
	return p.host.peek(a)
}

// ---------------------------------------------------------------------------
// Consumers: how a service thread reaches the queues (row "consumer poll
// path") and what it is charged.

type consumer interface {
	proc() *sim.Proc
	name() string
	coreType() string
	instr(n int)
	poll(a mem.Addr) uint64      // one poll of a status word (with the acquire marker)
	line(a mem.Addr) [8]uint64   // the rest of the entry
	store(a mem.Addr, v uint64)  // a queue word (status, read index)
	remote(a mem.Addr, v uint64) // a word in GPU memory (a status flag of a host-memory queue)
	local(a mem.Addr, v uint64)  // the library's own memory (bounce words)
	rmw(a mem.Addr, f func(uint64) uint64) uint64
	ctRead(a mem.Addr) (succ, fail uint64)  // the NIC's write-back of a CT, in library memory
	releaseSystem()                         // before the doorbell
	acquireSystem()                         // before reading NIC-written state
	addPCIe()                               // one PCIe transaction issued
	stall(until sim.Time)                   // wait holding the core (an uncached read)
	idle() bool                             // may sleep through unchanged polls (coherent cache hits)
	contended() bool                        // another thread waits for the thread's core
	nudge() *sim.Signal                     // notified when polling should resume
	idleWait(what string, cond func() bool) // spin on the core until cond holds (re-checked when nudged)
	skip(polls uint64, instr int)           // account polls slept through
	pollCost(instr int) sim.Duration        // one unchanged poll
	counts() Counts
	preemptions() uint64
	onCore() sim.Duration // time the thread held its core
	core() int            // index of its core (host or CP)
	exit()
}

// hostPort is a host helper thread (GHN). Queues in GPU memory are read
// and written over the GPU's PCIe link (GHN_DGPU); queues in host or
// shared memory are read through the thread's coherent cache: a poll of
// an unchanged word hits, the first poll after a writer changed it
// misses to DRAM (GHN_DGPU_HOSTQ, GHN_APU).
type hostPort struct {
	// The fields its steps read at every event come first (the struct
	// is cold when the helper's event runs; the spec, 300 bytes, last).
	t      *cpu.Thread
	overPC bool // queue words live across PCIe
	// a poll and instructions as steps (svcsteps.go)
	pph    uint8  // an uncached poll: 0 before its sample, 1 after
	op     hostOp // an access begun as steps (svcsteps.go), on oa with ov
	instrN int
	pa     mem.Addr
	pv     uint64
	m      *mem.Memory
	oa     mem.Addr
	ov     uint64
	n      Counts
	pdone  sim.Time // an uncached poll's completion
	old    uint64
	words  [8]uint64
	loads  int        // uncached field loads of a stepped line read still to issue
	seen   seenWords  // the words its cache holds, as it last read or wrote them
	wake   sim.Signal // notified when an entry is posted to an owned queue
	link   *pcie.Link
	spec   cpu.Spec
}

func (h *hostPort) proc() *sim.Proc    { return h.t.Proc }
func (h *hostPort) name() string       { return h.t.Track() }
func (h *hostPort) coreType() string   { return "host" }
func (h *hostPort) counts() Counts     { return h.n }
func (h *hostPort) exit()              {}
func (h *hostPort) addPCIe()           { h.n.PCIe++ }
func (h *hostPort) nudge() *sim.Signal { return &h.wake }

func (h *hostPort) instr(n int) {
	if n <= 0 {
		return
	}
	h.n.Instr += uint64(n)
	h.t.Instr(n)
}

func (h *hostPort) stall(until sim.Time) {
	h.t.SleepUntil(until)
}

func (h *hostPort) cached(a mem.Addr) uint64 { return h.cachedRead(a, false) }

// cachedRead reads the word at a through the thread's cache model: a hit
// while it holds the value it last read, else a miss to memory (GPU
// memory beyond NVLink-C2C: a round trip over it), which it then holds.
// The thread sleeps out the access (blocking) or, with begin, begins that
// sleep as a step (quietsteps.go), the word read now either way.
func (h *hostPort) cachedRead(a mem.Addr, begin bool) uint64 {
	h.n.L1++
	v := h.m.Load64(a)
	if old, ok := h.seen.get(a); ok && old == v {
		h.sleep(h.spec.CacheHit, begin)
		return v
	}
	h.n.L2++
	h.n.DRAM++
	h.sleep(h.t.CPU().WordLatency(a), begin)
	h.seen.put(a, v)
	return v
}

// sleep runs the thread for d: blocking, or begun as a step with begin.
func (h *hostPort) sleep(d sim.Duration, begin bool) {
	if begin {
		h.t.BeginSleep(d)
		return
	}
	h.t.Sleep(d)
}

func (h *hostPort) poll(a mem.Addr) uint64 {
	if !h.overPC {
		return h.cached(a)
	}
	// A PCIe read returns the word as GPU memory held it when the request
	// arrived there, half the round trip before the completion is back.
	h.n.PCIe++
	// The thread stalls throughout; it takes the value at the sampling
	// instant rather than through a separate event, so its polls stay its
	// own activity (sim/poll.go).
	at, done := h.link.ReadSampled(pcie.Down, h.t.Now(), 8, false)
	h.stall(at)
	v := h.m.Load64(a)
	h.stall(done)
	return v
}

func (h *hostPort) line(a mem.Addr) [8]uint64 {
	var w [8]uint64
	var b [entrySize]byte
	if h.overPC {
		// One uncached load per field, each a PCIe round trip after
		// the previous one (entryLoads).
		for range entryLoads(entryOp(h.m, a)) {
			h.n.PCIe++
			h.stall(h.link.Read(pcie.Down, h.t.Now(), 8, false))
		}
	} else {
		h.n.L1++
		h.t.Sleep(h.spec.CacheHit) // the poll brought the line in
	}
	h.m.Read(a, b[:])
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return w
}

func (h *hostPort) store(a mem.Addr, v uint64) {
	if !h.overPC {
		h.local(a, v)
		return
	}
	h.remote(a, v)
}

// remote is a PCIe posted write of one word into GPU memory: the thread
// pays the link's issue, the word lands when the write is visible.
func (h *hostPort) remote(a mem.Addr, v uint64) {
	h.n.PCIe++
	free, vis := h.link.PostedWrite(pcie.Down, h.t.Now(), 8)
	m := h.m
	h.t.Engine().At(vis, func() { m.Store64(a, v) })
	h.stall(free)
}

func (h *hostPort) local(a mem.Addr, v uint64) {
	h.n.L1++
	h.t.Sleep(h.spec.CacheHit)
	h.m.Store64(a, v)
	h.seen.put(a, v)
}

// ctRead reads the CT copy through the helper's coherent cache: a hit
// while it is unchanged, a miss to memory after the NIC wrote it.
func (h *hostPort) ctRead(a mem.Addr) (succ, fail uint64) {
	succ = h.cached(a)
	return succ, h.m.Load64(a + 8) // same line
}

func (h *hostPort) rmw(a mem.Addr, f func(uint64) uint64) uint64 {
	h.n.L1++
	h.t.Sleep(h.spec.CacheHit)
	old := h.m.Load64(a)
	h.m.Store64(a, f(old))
	return old
}

func (h *hostPort) releaseSystem() {}
func (h *hostPort) acquireSystem() {}

func (h *hostPort) idle() bool      { return !h.overPC }
func (h *hostPort) contended() bool { return h.t.Contended() }

func (h *hostPort) pollCost(instr int) sim.Duration { return h.spec.CacheHit + h.spec.Instr(instr) }

func (h *hostPort) skip(polls uint64, instr int) {
	h.n.Instr += polls * uint64(instr)
	h.n.L1 += polls
}

// cpPort is a ComP-Net service thread on a CP core: polls are a device
// acquire marker (the CP L1 is invalidated) and a load that hits the GPU
// L2 when the line is resident.
type cpPort struct {
	t       *cp.Thread
	acquire bool
	pcie    uint64
	// a poll as steps (svcsteps.go): its address, and whether its
	// acquire marker is in progress
	pa  mem.Addr
	acq bool
	// a dequeue's access as steps (svcsteps.go): a line read in progress,
	// and the line's words once it is over
	lineOp bool
	words  [8]uint64
}

func (c *cpPort) proc() *sim.Proc                              { return c.t.Proc }
func (c *cpPort) name() string                                 { return c.t.Name() }
func (c *cpPort) coreType() string                             { return "cp" }
func (c *cpPort) instr(n int)                                  { c.t.Instr(n) }
func (c *cpPort) store(a mem.Addr, v uint64)                   { c.t.Store64(a, v) }
func (c *cpPort) local(a mem.Addr, v uint64)                   { c.t.Store64(a, v) }
func (c *cpPort) remote(a mem.Addr, v uint64)                  { c.t.Store64(a, v) } // the CP sits beside GPU memory
func (c *cpPort) rmw(a mem.Addr, f func(uint64) uint64) uint64 { return c.t.RMW(a, f) }
func (c *cpPort) releaseSystem()                               { c.t.ReleaseSystem() }
func (c *cpPort) acquireSystem()                               { c.t.AcquireSystem() }
func (c *cpPort) addPCIe()                                     { c.pcie++ }
func (c *cpPort) stall(until sim.Time)                         { c.t.SleepUntil(until) }
func (c *cpPort) idle() bool                                   { return false }
func (c *cpPort) contended() bool                              { return false } // CP slots hand over in timer events
func (c *cpPort) nudge() *sim.Signal                           { return nil }
func (c *cpPort) skip(uint64, int)                             {}
func (c *cpPort) pollCost(int) sim.Duration                    { return 0 }
func (c *cpPort) exit()                                        {}

func (c *cpPort) poll(a mem.Addr) uint64 {
	if c.acquire {
		c.t.Acquire()
	}
	return c.t.Load64(a)
}

// ctRead reads the CT copy at the L2 (the caller's system acquire
// dropped a stale L2 copy; the device acquire here drops the L1's).
func (c *cpPort) ctRead(a mem.Addr) (succ, fail uint64) {
	c.t.Acquire()
	w := c.line(a)
	return w[0], w[1]
}

func (c *cpPort) line(a mem.Addr) [8]uint64 {
	var w [8]uint64
	d := c.t.LoadLine(mem.Line(a))
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(d[8*i:])
	}
	return w
}

func (c *cpPort) counts() Counts {
	n := c.t.Counts()
	return Counts{Instr: n.Instr, L1: n.L1, L2: n.L2, DRAM: n.Mem, PCIe: c.pcie}
}

func (h *hostPort) preemptions() uint64  { return 0 } // the host scheduler (hw/cpu) does not count them
func (h *hostPort) onCore() sim.Duration { return h.t.OnCore() }
func (c *cpPort) onCore() sim.Duration   { return c.t.BusyTime() }
func (h *hostPort) core() int            { return h.t.Core() }
func (c *cpPort) core() int              { return c.t.Core() }
func (c *cpPort) preemptions() uint64    { return c.t.Preemptions() }

// idleWait spins on the helper's core (hw/cpu's polling wait: the core
// stays busy and is time-sliced with the other threads placed on it).
func (h *hostPort) idleWait(what string, cond func() bool) { h.t.WaitUntil(&h.wake, what, cond) }

func (c *cpPort) idleWait(string, func() bool) {} // never called: CP polls are simulated one by one (idle is false)
