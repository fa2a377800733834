package shmem

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gpunetsim/gpunetsim/hw/cp"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/hw/peer"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Kind names a backend.
type Kind string

// The backends (the dissertation's ComP-Net chapter table; Ideal is the conformance
// suite's reference).
const (
	Ideal      Kind = "ideal"     // zero cost, perfect memory: operations apply at once
	GHNDGPU    Kind = "ghn-dgpu"  // queues in GPU memory, host threads poll them over PCIe
	GHNHostQ   Kind = "ghn-hostq" // queues in host memory, written by the GPU with PCIe stores
	GHNAPU     Kind = "ghn-apu"   // queues in coherent shared memory (APU mode)
	CompNetCP  Kind = "compnet"   // CP service threads poll the queues through the GPU L2
	GIO        Kind = "gio"       // GPU-native: templated verbs work requests, no service thread (gio.go)
	kindsCount      = 6
)

// Node is the hardware of one PE that a runtime is built on.
type Node struct {
	PE, NPEs int
	Host     *cpu.Thread // the application's host thread (init, malloc)
	CPU      *cpu.CPU
	Mem      *mem.Memory
	GPU      *gpu.GPU
	NIC      *nic.NIC
	GPULink  *pcie.Link // the GPU's PCIe attachment
	NICLink  *pcie.Link // the NIC's PCIe attachment (CT reads)
	CP       *cp.CP
	SW       cost.Spec
	// Peer is the GPU's access to the other GPUs of its node (nil with
	// one GPU per node); PE numbers are its endpoint numbers.
	Peer *peer.Port
}

// Team is the run-scoped state the PEs share: each PE's device (the
// ideal backend reaches remote memory through it; each PE writes its own
// slot) and the log of symmetric allocations every PE must repeat in the
// same order. On a partitioned cluster PEs of different partitions
// allocate at once, so the log is guarded by mu.
type Team struct {
	devs  []*Device
	mu    sync.Mutex
	sizes []uint64
	// connected says a PE's GIO contexts have connected (gio.go): a
	// symmetric allocation registered from then on changes the rkey every
	// templater writes. A flag of its own, not a look at every PE's
	// backend: PEs of other partitions may be setting theirs up at once.
	connected atomic.Bool
	// keys is the last list of every PE's heap rkey a GIO PE took when it
	// connected (heapKeys), guarded by mu and never written once made.
	keys []uint32
}

// NewTeam returns the team of npes PEs.
func NewTeam(npes int) *Team { return &Team{devs: make([]*Device, npes)} }

// Runtime is the host side of one PE (cpnet_init / ghn_init): it brings a
// Device up with a backend of its kind.
type Runtime struct {
	kind Kind
	node Node
	spec Spec
	team *Team
}

// NewRuntime returns PE n.PE's runtime of the given kind.
func NewRuntime(kind Kind, n Node, spec Spec, team *Team) *Runtime {
	return &Runtime{kind: kind, node: n, spec: spec, team: team}
}

// Kind returns the backend kind.
func (r *Runtime) Kind() Kind { return r.kind }

// Spec returns the runtime knobs.
func (r *Runtime) Spec() Spec { return r.spec }

// Device is one PE's device library handle: the symmetric heap, one queue
// (context slot) per expected concurrent work-group, and the backend.
type Device struct {
	rt        *Runtime
	pe, npes  int
	heap      *Heap
	backend   Backend
	queues    int
	open      []bool
	barrier   mem.Addr // one symmetric 8 B word per queue
	epochs    []uint64
	scratch   mem.Addr // one local 64 B line per queue: g's landing word
	finalized bool
	stats     Stats
}

// Stats are what the device saw of its calls.
type Stats struct {
	Calls       uint64       // device calls submitted
	Blocking    uint64       // of them blocking (incl. fence and quiet)
	BlockingSum sim.Duration // summed call → completion time of the blocking calls
	RingFull    uint64       // reservations that found the ring full after refreshing the read index
	Peer        uint64       // calls served by peer access to another GPU of the node (Spec.PeerAccess)
	// Phases split the blocking calls' time over the service path (queued
	// backends; summed over Phased calls): see PhaseNames.
	Phases [NumPhases]sim.Duration
	Phased uint64
}

// The phases of a blocking call through a service thread, in order.
const (
	PhasePost     = iota // the work-group reserves, fills and publishes its entry
	PhasePickup          // until a service thread's poll finds it POSTED
	PhaseDequeue         // the thread reads the entry
	PhaseLibrary         // the OpenSHMEM call (argument checks, address translation)
	PhasePortals         // the Portals post under the context lock: command, release, doorbell
	PhaseNetwork         // until the quiet round that finds the operation complete (network, polling rounds, failed quiets)
	PhaseQuiet           // that quiet: CT read, entries marked COMPLETE
	PhaseComplete        // until the work-group sees COMPLETE
	NumPhases
)

// PhaseNames names the phases of Stats.Phases.
var PhaseNames = [NumPhases]string{"post", "pickup", "dequeue", "library call", "Portals post", "network + polling", "quiet", "completion seen"}

// MeanPhase returns the mean time of phase i over the phased calls.
func (s Stats) MeanPhase(i int) sim.Duration {
	if s.Phased == 0 {
		return 0
	}
	return s.Phases[i] / sim.Duration(s.Phased)
}

// MeanService returns the mean time a blocking call took (post →
// completion observed by the work-group).
func (s Stats) MeanService() sim.Duration {
	if s.Blocking == 0 {
		return 0
	}
	return s.BlockingSum / sim.Duration(s.Blocking)
}

// Init brings the device up with numQueues queues (the grid's concurrent
// work-groups): the backend's queues and service threads, the OpenSHMEM
// runtime underneath, and the runtime's own symmetric words. Every PE must
// call it with the same numQueues.
func (r *Runtime) Init(numQueues int) (*Device, error) {
	if numQueues < 1 || numQueues > 1<<16 {
		return nil, fmt.Errorf("shmem init on PE %d: %d queues: must be in [1, 65536]", r.node.PE, numQueues)
	}
	if err := r.spec.Validate(); err != nil {
		return nil, err
	}
	d := &Device{rt: r, pe: r.node.PE, npes: r.node.NPEs, queues: numQueues, open: make([]bool, numQueues),
		epochs: make([]uint64, numQueues)}
	d.heap = &Heap{mem: r.node.Mem}
	r.team.devs[d.pe] = d
	var err error
	switch r.kind {
	case Ideal:
		d.backend = &idealBackend{dev: d}
	case GHNDGPU, GHNHostQ, GHNAPU, CompNetCP:
		d.backend, err = newQueueBackend(d)
	case GIO:
		d.backend, err = newGIOBackend(d)
	default:
		err = fmt.Errorf("shmem: unknown backend %q", r.kind)
	}
	if err != nil {
		return nil, err
	}
	d.scratch = r.node.Mem.AllocData(mem.GPU, uint64(numQueues)*mem.LineSize, "shmem.scratch")
	if r.node.GPU != nil {
		r.node.GPU.ShareWithNIC(d.scratch, uint64(numQueues)*mem.LineSize)
	}
	if d.barrier, err = d.Malloc(uint64(numQueues) * 8); err != nil {
		return nil, err
	}
	return d, nil
}

// PE returns the device's PE.
func (d *Device) PE() int { return d.pe }

// NPEs returns the number of PEs.
func (d *Device) NPEs() int { return d.npes }

// Queues returns the number of queues (context slots).
func (d *Device) Queues() int { return d.queues }

// Kind returns the backend kind.
func (d *Device) Kind() Kind { return d.rt.kind }

// Stats returns the call statistics so far.
func (d *Device) Stats() Stats { return d.stats }

// Malloc is the collective symmetric allocation (cpnet_shmalloc): n bytes
// in GPU memory, registered with the NIC. Every PE must make the same
// sequence of calls.
func (d *Device) Malloc(n uint64) (mem.Addr, error) { return d.malloc(n, true) }

// MallocPayload is Malloc for bulk data: in a payload-free run its bytes
// are not kept (mem.Memory.Alloc), except the lines the caller marks as
// control words (mem.Memory.MarkControl), so a large array costs neither
// memory nor the work of computing it. In a functional run it is Malloc.
func (d *Device) MallocPayload(n uint64) (mem.Addr, error) { return d.malloc(n, false) }

func (d *Device) malloc(n uint64, data bool) (mem.Addr, error) {
	if n == 0 {
		return 0, fmt.Errorf("shmem malloc on PE %d: 0 bytes", d.pe)
	}
	t := d.rt.team
	idx := len(d.heap.regions)
	t.mu.Lock()
	if idx < len(t.sizes) && t.sizes[idx] != n {
		other := t.sizes[idx]
		t.mu.Unlock()
		return 0, fmt.Errorf("shmem malloc on PE %d: allocation %d of %d bytes, but another PE allocated %d: symmetric allocations must match", d.pe, idx, n, other)
	}
	if idx == len(t.sizes) {
		t.sizes = append(t.sizes, n)
	}
	t.mu.Unlock()
	alloc := d.heap.mem.AllocData
	if !data {
		alloc = d.heap.mem.Alloc
	}
	base := alloc(mem.GPU, n, fmt.Sprintf("shmem.heap[%d]", idx))
	d.heap.regions = append(d.heap.regions, region{base: base, size: n})
	if g := d.rt.node.GPU; g != nil {
		g.ShareWithNIC(base, n)
	}
	if h := d.rt.node.Host; h != nil {
		h.Instr(d.rt.node.SW.PortalsPost)
	}
	d.backend.Expose(idx, base, n)
	return base, nil
}

// Cooperative checks the cooperative-launch rule for kernel k, whose
// work-groups wait on each other through the device API: every
// work-group must be resident at once and have a queue.
func (d *Device) Cooperative(k gpu.Kernel) error {
	g := d.rt.node.GPU
	if err := g.Validate(k); err != nil {
		return err
	}
	if res := g.MaxResident(k); k.WGs > res {
		return fmt.Errorf("kernel %s: %d work-groups wait on each other through shmem, but only %d can be resident at once (cooperative launch rule): they would deadlock", k.Name, k.WGs, res)
	}
	if k.WGs > d.queues {
		return fmt.Errorf("kernel %s: %d work-groups, but shmem was initialised with %d queues", k.Name, k.WGs, d.queues)
	}
	return nil
}

// CtxCreate builds work-group wg's context (cpnet_ctx_create): its queue
// is queue wg.ID.
func (d *Device) CtxCreate(wg *gpu.WG) (*Ctx, error) {
	if d.finalized {
		return nil, fmt.Errorf("%s: shmem ctx_create: %w: runtime finalized", wg.Name(), ErrClosed)
	}
	if wg.ID >= d.queues {
		return nil, fmt.Errorf("%s: shmem ctx_create: %w: work-group %d, %d queues", wg.Name(), ErrNoQueue, wg.ID, d.queues)
	}
	if d.open[wg.ID] {
		return nil, fmt.Errorf("%s: shmem ctx_create: queue %d already has a context", wg.Name(), wg.ID)
	}
	ch, err := d.backend.Open(wg, wg.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: shmem ctx_create: %w", wg.Name(), err)
	}
	d.open[wg.ID] = true
	wg.Barrier()
	if d.rt.spec.PeerAccess && d.rt.node.Peer != nil {
		ch = &peerChannel{inner: ch, d: d, wg: wg, port: d.rt.node.Peer}
	}
	return &Ctx{wg: wg, dev: d, ch: &timedChannel{ch: ch, d: d, wg: wg, q: wg.ID},
		scratch: d.scratch + mem.Addr(wg.ID)*mem.LineSize}, nil
}

// Finalize stops the backend's service agents (after the kernels ended)
// and returns their report.
func (d *Device) Finalize() Report {
	if d.finalized {
		return Report{}
	}
	d.finalized = true
	rep := d.backend.Stop()
	rep.Kind = d.rt.kind
	rep.Calls = d.stats
	return rep
}

func (d *Device) barrierWord(q int) (mem.Addr, error) {
	if q >= d.queues {
		return 0, fmt.Errorf("work-group %d has no barrier word (%d queues)", q, d.queues)
	}
	return d.barrier + mem.Addr(q)*8, nil
}

// timedChannel measures every call and releases the queue at Close.
type timedChannel struct {
	ch Channel
	d  *Device
	wg *gpu.WG
	q  int
}

func (t *timedChannel) Submit(r *Request) error {
	start := t.wg.Now()
	err := t.ch.Submit(r)
	t.d.stats.Calls++
	if r.Blocking {
		t.d.stats.Blocking++
		t.d.stats.BlockingSum += t.wg.Now() - start
	}
	return err
}

func (t *timedChannel) Close() {
	t.ch.Close()
	t.d.open[t.q] = false
}

// Heap is a PE's symmetric heap: allocations in GPU memory, the same
// sequence on every PE, so (allocation index, offset) names the same
// object everywhere.
type Heap struct {
	mem     *mem.Memory
	regions []region
}

type region struct {
	base mem.Addr
	size uint64
}

// lookup returns the allocation index and offset of [a, a+n).
func (h *Heap) lookup(a mem.Addr, n uint64) (idx int, off uint64, ok bool) {
	for i, r := range h.regions {
		if a >= r.base && uint64(a-r.base)+n <= r.size && n <= r.size {
			return i, uint64(a - r.base), true
		}
	}
	return 0, 0, false
}

// translate returns where the local symmetric address a lives on dev.
func (h *Heap) translate(a mem.Addr, n uint64, dev *Device) (mem.Addr, bool) {
	idx, off, ok := h.lookup(a, n)
	if !ok || idx >= len(dev.heap.regions) {
		return 0, false
	}
	return dev.heap.regions[idx].base + mem.Addr(off), true
}
