package gpu

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Scope is a memory-model scope (the dissertation).
type Scope uint8

// Scopes, narrowest first.
const (
	Wavefront Scope = iota
	Workgroup
	Device
	System
)

// GPU is one GPU with its command processor.
type GPU struct {
	e            *sim.Engine
	name         string
	spec         Spec
	mem          *mem.Memory
	dram         *mem.Server
	cus          []*computeUnit
	rr           int
	room         sim.Signal // a WG retired somewhere
	l2           *cache     // dGPU only: write-back, not probed (behind a memory-side L2, lines of host memory only)
	queue        []Op
	queueSig     sim.Signal
	cp           *sim.Proc
	stats        Stats
	aql          aqlState      // user-mode queues and kernel objects (aql.go)
	tags         *L2           // set-associative L2 tag model with LOCKED lines (l2.go); nil until UseL2
	uncached     [][2]mem.Addr // L2-uncacheable ranges (uncached.go)
	uncachedMemo *uncachedMemo // per-page and per-line answers of Uncached (uncached.go); nil until used
	uncachedGen  uint32        // SetUncached calls so far: a work-group's span memo older than this is void
	wgNames      []string      // "<gpu>.wg[i]", made once per index (kernels reuse them)
	// code is when each kernel's first instruction line is (or will be) in
	// each instruction cache (Spec.ICacheCUs); codeL2, when the L2 holds
	// the first lines some cache has fetched (fetch.go).
	code          map[codeKey]sim.Time
	codeL2        map[string]sim.Time
	freeWGs       sim.FreeList[*wgSteps]   // retired step work-groups, for reuse (steps.go)
	freeRuns      sim.FreeList[*kernelRun] // finished dispatches, for reuse
	dispatchName  string                   // the dispatcher's process name
	cyc           cycleMemo                // the last Cycles conversion of VALU (spec.go)
	dispatchDelay sim.Duration             // spec.DispatchCycles, converted once
	missLat       sim.Duration             // spec.MissLatency() and the directory's lookup (UseDirectory), computed once
	hitLat        sim.Duration             // spec.L2Cycles: an L2 hit, computed once
	l1Lat         sim.Duration             // spec.L1Cycles, converted once (every store's L1 wait)
	l1InvLat      sim.Duration             // spec.L1InvCycles, converted once (every acquire's L1 invalidation)
	dmaLat        sim.Duration             // the packet processor's DMA access: spec.MemLatency and the directory's lookup
	dirLat        sim.Duration             // the coherent directory's lookup (UseDirectory); 0 without one
	stores        sim.FreeList[*memStore]  // store events done with, for reuse (wg.go)
	hostBell      sim.Duration             // a host thread's doorbell store reaching the CP (SetHostDoorbell)
	// args is the last kernarg segment a work-group read (TryLoadArgs):
	// a task kernel's work-groups read the same one in turn.
	args mem.ReadCache
	// c2c is the chip-to-chip link to the CPU (NVLink-C2C) on nodes
	// whose host memory lies beyond it (UseC2C); nil elsewhere.
	c2c *pcie.Link
	// host is the host memory's server beyond c2c (UseC2C); hostArrays:
	// the workloads' arrays live there (UseHostArrays).
	host       *mem.Server
	hostArrays bool
	// keepLoadEnds schedules every poll's load end (skipLoadEnd off) and
	// skips, when set, logs the keys of the ends skipped: tests compare
	// the two.
	keepLoadEnds bool
	skips        *[]sim.Time
	// samples are the deferred sample points of poll loads whose keys
	// are still ahead (sample.go); sampleHook: touched is registered with
	// the memory. keepSamples runs every sample point as an event (tests
	// compare the two).
	samples     []sampleRef
	sampleHook  bool
	keepSamples bool
}

// Stats counts GPU activity.
type Stats struct {
	Kernels, WGs              uint64
	L1Hits, L1Misses          uint64
	L1Invalidates, L2Writebks uint64
	Uncached                  uint64 // loads and stores of L2-uncacheable pages
	BulkHits, BulkMisses      uint64 // lines of bulk accesses (StreamLines, LoadLanes) the L2 served / that went to memory
	BulkUncached              uint64 // of the misses, lines of L2-uncacheable pages
	ICacheMisses              uint64 // first fetches of a kernel in an instruction cache (Spec.ICacheCUs)
}

type computeUnit struct {
	id       int
	simdFree []sim.Time
	// simdBuf holds the SIMDs' clocks where there are at most four
	// (simdFree is a slice of it): beside the CU's other fields, not in
	// an array of their own, whose line was a cache miss of its own at
	// every VALU and barrier of a work-group at a thousand nodes.
	simdBuf  [4]sim.Time
	nextSIMD int
	waves    int
	lds      unit.Bytes
	l1       *cache      // nil until its first fill (WG.l1Fill): get and clear take nil
	port     *mem.Server // the L1–L2 path of bulk accesses (nil: unlimited)
	lsu      *mem.Server // the load/store path of streaming copies and reductions (nil: unlimited)
	// armed is the work-group alone on the CU whose poll's wake-up runs no
	// event (WG.armLateWake); nil when none.
	armed *WG
}

// New returns a GPU using node memory m and the node's memory server dram.
// Its command processor starts serving the queue at once.
func New(e *sim.Engine, name string, spec Spec, m *mem.Memory, dram *mem.Server) *GPU {
	g := &GPU{e: e, name: name, spec: spec, mem: m, dram: dram, dispatchDelay: spec.Cycles(spec.DispatchCycles), missLat: spec.MissLatency(),
		hitLat: spec.Cycles(spec.L2Cycles), dmaLat: spec.MemLatency, l1Lat: spec.Cycles(spec.L1Cycles),
		l1InvLat: spec.Cycles(spec.L1InvCycles)}
	// The CUs, their SIMDs' clocks and their servers in one array each,
	// not five objects per CU (an MI300A has 228 CUs: 8,192 GPUs made 9 M
	// objects); an L1 is made on its first fill (l1Fill): the kernels of
	// most GPUs in a large run never load through it (pack and unpack
	// stream), and 228 empty caches were 30 KB per GPU.
	cus := make([]computeUnit, spec.CUs)
	var simd []sim.Time // the SIMDs' clocks where simdBuf is too small
	if spec.SIMDs > len(computeUnit{}.simdBuf) {
		simd = make([]sim.Time, spec.CUs*spec.SIMDs)
	}
	var ports, lsus []mem.Server
	if spec.L2PortBytes > 0 {
		ports = make([]mem.Server, spec.CUs)
	}
	if spec.LSUBytes > 0 {
		lsus = make([]mem.Server, spec.CUs)
	}
	g.cus = make([]*computeUnit, spec.CUs)
	for i := range spec.CUs {
		cu := &cus[i]
		*cu = computeUnit{id: i}
		if simd != nil {
			cu.simdFree = simd[i*spec.SIMDs : (i+1)*spec.SIMDs : (i+1)*spec.SIMDs]
		} else {
			cu.simdFree = cu.simdBuf[:spec.SIMDs:spec.SIMDs]
		}
		if ports != nil {
			ports[i] = *mem.NewServer(float64(spec.L2PortBytes) * float64(spec.Freq))
			cu.port = &ports[i]
		}
		if lsus != nil {
			lsus[i] = *mem.NewServer(float64(spec.LSUBytes) * float64(spec.Freq))
			cu.lsu = &lsus[i]
		}
		g.cus[i] = cu
	}
	if spec.Mode == "dgpu" {
		g.l2 = newCache(1 << 30) // capacity is not the point; staleness is
	}
	g.cp = e.Spawn(name+".cp", g.serve)
	g.cp.SetDaemon()
	return g
}

// UseC2C puts the node's host memory, served by host, beyond the
// chip-to-chip link l (NVLink-C2C): the GPU's word accesses past its L2
// to host-pool addresses cross l (its latency each way and its byte
// server), and so do the lines of its bulk accesses (StreamLines,
// LoadLanes) that lie in host memory and miss the L2, which then take
// host's bandwidth instead of the HBM's; the kernel launch's own costs
// (gpu.launch) stay as they are. Its memory server is then its HBM alone.
func (g *GPU) UseC2C(l *pcie.Link, host *mem.Server) { g.c2c, g.host = l, host }

// UseHostArrays says the workloads' arrays live in host memory beyond the
// C2C link (c2c.arrays = host): the address-less bulk traffic of Stream
// then crosses the link and takes the host memory's bandwidth. Call it
// after UseC2C.
func (g *GPU) UseHostArrays() { g.hostArrays = g.c2c != nil }

// hostBulk returns when n bytes of bulk array traffic in host memory
// beyond the C2C link, issued now, have moved: the host memory serves all
// n bytes; the link carries half of them each way (bulk traffic says
// nothing of its direction: a copy's or a stencil's read-one-write-one,
// reads coming down as writes go up), each pipelined behind one crossing
// and the memory latency.
func (g *GPU) hostBulk(now sim.Time, n uint64) sim.Time {
	up := n / 2
	read := g.c2c.Read(pcie.Up, now, unit.Bytes(n-up), false)
	done := max(g.host.Reserve(now, n), read+g.missLat)
	if up > 0 {
		_, vis := g.c2c.PostedWrite(pcie.Up, now, unit.Bytes(up))
		done = max(done, vis+g.missLat)
	}
	return done
}

// farLoad returns the latency of a load of one line at a issued now,
// whose memory access costs lat: lat itself, plus the C2C round trip
// when a lies in host memory beyond NVLink-C2C.
func (g *GPU) farLoad(a mem.Addr, lat sim.Duration) sim.Duration {
	if g.c2c == nil || g.mem.PoolOf(a) != mem.Host {
		return lat
	}
	now := g.e.Now()
	return g.c2c.Read(pcie.Up, now, mem.LineSize, false) - now + lat
}

// The sample point of a load that memory serves: the instant the request
// reaches memory's access point, where the value it returns is read. A
// write that lands after it is not seen by this load, however long the
// data then takes back to the core; one that lands before it is. The
// model splits gpu.mem_latency (the access past the L2) evenly into the
// request's way to the access point and the data's way back (a choice:
// the documents give one latency, no split), so a GPU-memory load
// samples after the L2 lookup (and the directory's, UseDirectory) and
// half of gpu.mem_latency, and its data returns gpu.mem_latency/2 later.
// A word load of host memory beyond NVLink-C2C (farLoad) has the link's
// one-way latency on the way back as well. Every GPU load of a word that
// another agent writes takes its value there: AtomicLoad, the uncached
// and the cache-missing loads of tryLoad64 (so PollUntil, PollDevice) and
// the CQ polls of model/verbs (LoadSample). A host-memory load over PCIe
// samples where the read reaches host memory (HostLoad). A vector gather
// (LoadLanes) reads its values at issue: it reads data that a poll's
// acquire ordered before it, which no write races. The load's time is the
// same whatever it reads: the sample point only decides the value. A
// poll's load in APU mode reads it there without an event of its own
// (sample.go).

// loadReturn is the data's way back from memory's access point to the
// core for a load of a that memory serves: gpu.mem_latency/2, plus the
// NVLink-C2C link's one-way latency for host memory beyond it.
func (g *GPU) loadReturn(a mem.Addr) sim.Duration {
	r := g.spec.MemLatency / 2
	if g.c2c != nil && g.mem.PoolOf(a) == mem.Host {
		r += g.c2c.Spec().Latency
	}
	return r
}

// sampleAt returns how far into a load of a that memory serves, d long
// in all, the load reads memory: d less the data's way back.
func (g *GPU) sampleAt(a mem.Addr, d sim.Duration) sim.Duration {
	return max(0, d-g.loadReturn(a))
}

// LoadSample returns how far into a load of the GPU's own memory that
// misses the caches (MissLatency long) the load reads memory: the L2
// lookup and half of gpu.mem_latency. A poll loop of such loads sees a
// write at the first load whose sample point is at or after it.
func (g *GPU) LoadSample() sim.Duration { return g.missLat - g.spec.MemLatency/2 }

// A memory-side L2 (Spec.L2MemorySide, NVIDIA). Every write to the GPU's
// own memory passes through its L2, a NIC's too, so the L2 never holds a
// stale copy of that memory: a word load of it that misses the L1, and a
// system-scope load, are served by the L2 (a hit when the tag model holds
// the line, else a miss that brings it in), and a store is visible to
// every agent when it reaches the L2. The L2's values of that memory are
// memory's: the dGPU mode's functional L2 copy (g.l2) keeps only lines of
// host memory, which a system-scope acquire invalidates and a release
// writes back. Without the property a NIC write leaves the L2 untouched
// (the AMD dGPUs' HDP path): a load of a word another agent writes goes
// to memory past the L2, and only an acquire that drops the L2's copies
// lets the GPU see it.

// memSide reports whether a lies in the GPU's own memory behind a
// memory-side L2.
func (g *GPU) memSide(a mem.Addr) bool {
	return g.spec.L2MemorySide && g.mem.PoolOf(a) == mem.GPU
}

// l2Copy reports whether the GPU keeps a functional L2 copy of a's line:
// in dGPU mode, except for its own memory behind a memory-side L2.
func (g *GPU) l2Copy(a mem.Addr) bool { return g.l2 != nil && !g.memSide(a) }

// wordLoad returns the latency of a word load of a that the L1 does not
// serve (or a system-scope load, which bypasses the L1) and how far into
// it the load reads its value (its sample point). Behind a memory-side L2
// the L2 serves it: a hit costs the lookup and reads the line half-way
// through it (the request reaching the L2, the data coming back: an even
// split, as the load of host memory splits the lookup, HostLoad); a miss
// is the L2 lookup and memory, and brings the line in. Otherwise memory
// serves it (farLoad, sampleAt).
func (g *GPU) wordLoad(a mem.Addr) (d, s sim.Duration) {
	if g.memSide(a) {
		if g.touch(mem.Line(a), CU) {
			return g.hitLat, g.hitLat / 2
		}
		return g.missLat, g.sampleAt(a, g.missLat)
	}
	d = g.farLoad(a, g.missLat)
	return d, g.sampleAt(a, d)
}

// PollLoad returns the latency of one load of a poll loop of the word at
// a, a load the previous one of the same loop has just made (so the
// line's L2 residency is the previous load's), and how far into it the
// load reads the word. Behind a memory-side L2 a word of the GPU's own
// memory is then an L2 hit (the NIC's write updates the line the loop
// keeps in the L2); otherwise every load goes to memory (MissLatency,
// LoadSample).
func (g *GPU) PollLoad(a mem.Addr) (d, s sim.Duration) {
	if g.memSide(a) {
		return g.hitLat, g.hitLat / 2
	}
	return g.missLat, g.LoadSample()
}

// L2MemorySide reports whether the GPU's L2 is a memory-side cache of its
// own memory that the NIC's writes pass through (Spec.L2MemorySide).
func (g *GPU) L2MemorySide() bool { return g.spec.L2MemorySide }

// farStore returns when a store of n bytes at a, leaving the GPU now
// past the L2 (the write-through L2 of APU mode, an L2-uncacheable page),
// is done: visible to every agent and counted by a system release. That is
// the same point a bulk write's is (memAck): on a node behind the coherent
// directory the directory's ack on receipt, from which on the directory
// serves every coherent read of the line (the NIC's, the host's, the
// GPU's own) the new data; elsewhere its landing in memory, after the L2
// and the memory latency (Spec.MissLatency); for host memory beyond
// NVLink-C2C once the posted write has crossed the link as well.
func (g *GPU) farStore(a mem.Addr, n unit.Bytes) sim.Time {
	now := g.e.Now()
	if g.c2c == nil || g.mem.PoolOf(a) != mem.Host {
		return now + g.memAck()
	}
	_, vis := g.c2c.PostedWrite(pcie.Up, now, n)
	return vis + g.missLat
}

// Name returns the GPU's instance name, e.g. "node[0].gpu".
func (g *GPU) Name() string { return g.name }

// Spec returns the GPU parameters.
func (g *GPU) Spec() Spec { return g.spec }

// SetHostDoorbell sets how long a host thread's uncached store to one of
// the GPU's AQL doorbells takes to reach the command processor once it
// leaves the core: on an APU node (the NIC on the coherent system
// directory) an on-chip posted MMIO store, soc.mmio_latency. Zero (the
// default) charges nothing beyond the packet store's visibility. Call it
// before the run.
func (g *GPU) SetHostDoorbell(d sim.Duration) { g.hostBell = d }

// UseDirectory puts the GPU's memory behind the node's coherent system
// directory (an APU of the documents' presets, whose CPU, GPU and NIC share
// one directory): every access past the L2 and every DMA access of the
// packet processor pays the directory's lookup d before the memory access
// (gpu.mem_latency), as the NIC's coherent access and the host core's miss
// through the same directory do. Call it before the run.
func (g *GPU) UseDirectory(d sim.Duration) {
	g.missLat = g.spec.MissLatency() + d
	g.dmaLat = g.spec.MemLatency + d
	g.dirLat = d
}

// writeAck is how long a bulk write a work-group issues takes to be
// counted done by a system-scope release: behind a memory-side L2 the L2
// (every agent reads through it); on a node whose memory sits behind the
// coherent directory, the directory's ack on receipt, before memory (the
// write-through protocol of the documents' simulator: the L2's request,
// the directory, the response; gpu.l2_cycles + soc.dir_latency);
// elsewhere memory (the L2 lookup and gpu.mem_latency, Spec.MissLatency).
func (g *GPU) writeAck() sim.Duration {
	if g.spec.L2MemorySide {
		return g.hitLat
	}
	return g.memAck()
}

// memAck is how long a write leaving the GPU past its L2 toward memory
// takes to be done (writeAck, farStore): on a node behind the coherent
// directory its ack on receipt, gpu.l2_cycles + soc.dir_latency (the
// directory orders the write there: a coherent read it serves later, the
// NIC's DMA read included, gets the new data, so nothing waits for DRAM);
// elsewhere the L2 lookup and memory (MissLatency).
func (g *GPU) memAck() sim.Duration {
	if g.dirLat > 0 {
		return g.hitLat + g.dirLat
	}
	return g.missLat
}

// MissLatency returns the latency of a GPU access that memory serves: the
// L2 lookup, the directory's lookup on a node whose memory sits behind one
// (UseDirectory), then gpu.mem_latency. Callers that time an access to
// GPU-visible memory themselves (a poll loop's iterations) use it, not
// Spec.MissLatency.
func (g *GPU) MissLatency() sim.Duration { return g.missLat }

// DMALatency returns the latency of the packet processor's DMA access to
// memory: gpu.mem_latency, after the directory's lookup on a node behind
// one (UseDirectory).
func (g *GPU) DMALatency() sim.Duration { return g.dmaLat }

// HostDoorbell is the latency SetHostDoorbell set.
func (g *GPU) HostDoorbell() sim.Duration { return g.hostBell }

// Mem returns the memory the GPU reaches.
func (g *GPU) Mem() *mem.Memory { return g.mem }

// Stats returns activity counters.
func (g *GPU) Stats() Stats { return g.stats }

// Op is one entry of the CP's in-order queue: a kernel dispatch or a stream
// operation (GDS doorbell, wait-on-value). It runs on the CP process.
type Op func(cp *sim.Proc)

// Submit appends op to the queue as the doorbell write becomes visible to
// the CP.
func (g *GPU) Submit(op Op) {
	g.queue = append(g.queue, op)
	g.queueSig.Notify()
}

func (g *GPU) serve(cp *sim.Proc) {
	for {
		for len(g.queue) == 0 {
			cp.Wait(&g.queueSig, "queue doorbell")
		}
		op := g.queue[0]
		if len(g.queue) == 1 {
			g.queue[0] = nil
			g.queue = g.queue[:0] // keeps the storage: no allocation per operation
		} else {
			g.queue[0] = nil
			g.queue = g.queue[1:]
		}
		op(cp)
	}
}

// Kernel describes a kernel dispatch.
type Kernel struct {
	Name string
	// Code names the kernel's code for the instruction caches
	// (Spec.ICacheCUs): launches with the same Code run the same
	// instructions, so a loop of launches fetches its lines once. Empty
	// means Name; set it where launches of one code are named apart for
	// the trace (reduce[3], step[2]).
	Code   string
	WGs    int        // grid size in work-groups
	WGSize int        // work-items per work-group
	LDS    unit.Bytes // LDS per work-group
	Body   func(wg *WG)
	// Steps, when set, replaces Body: it returns the work-group's body as
	// a StepBody, run as callback events instead of a coroutine (steps.go).
	Steps func(wg *WG) StepBody
}

// Run is a dispatched kernel and its timeline.
type Run struct {
	Kernel Kernel
	// Signal is the completion-signal word the CP sets to 1 after teardown.
	Signal mem.Addr
	// Timeline, filled as the kernel progresses.
	Queued, LaunchStart, BodyStart, BodyEnd, Done sim.Time
	finished                                      bool
	fin                                           sim.Signal
}

// Finished reports whether the kernel's completion signal has been written.
func (r *Run) Finished() bool { return r.finished }

// WaitDone blocks p (a CP-side or test agent) until the kernel finished.
func (r *Run) WaitDone(p *sim.Proc) {
	p.WaitUntil(&r.fin, "kernel "+r.Kernel.Name, func() bool { return r.finished })
}

// Validate checks k against the GPU's limits.
func (g *GPU) Validate(k Kernel) error {
	if k.WGs < 1 {
		return fmt.Errorf("kernel %s: %d work-groups: need at least 1", k.Name, k.WGs)
	}
	if k.WGSize < 1 || k.WGSize > g.spec.MaxWGSize {
		return fmt.Errorf("kernel %s: work-group size %d: must be in [1, gpu.max_wg_size = %d]", k.Name, k.WGSize, g.spec.MaxWGSize)
	}
	if k.LDS > g.spec.LDSPerCU {
		return fmt.Errorf("kernel %s: LDS %v per work-group exceeds gpu.lds_per_cu = %v", k.Name, k.LDS, g.spec.LDSPerCU)
	}
	waves := g.waves(k)
	if waves > g.spec.SIMDs*g.spec.WavesPerSIMD {
		return fmt.Errorf("kernel %s: %d wavefronts per work-group exceed a CU's %d", k.Name, waves, g.spec.SIMDs*g.spec.WavesPerSIMD)
	}
	if g.spec.CooperativeOnly && k.WGs > g.maxResident(k) {
		return fmt.Errorf("kernel %s: cooperative launch of %d work-groups, but only %d can be resident", k.Name, k.WGs, g.maxResident(k))
	}
	return nil
}

func (g *GPU) waves(k Kernel) int { return (k.WGSize + g.spec.WaveSize - 1) / g.spec.WaveSize }

// MaxResident returns how many work-groups of k fit on the GPU at once.
func (g *GPU) maxResident(k Kernel) int {
	perCU := g.spec.SIMDs * g.spec.WavesPerSIMD / g.waves(k)
	if k.LDS > 0 {
		perCU = min(perCU, int(g.spec.LDSPerCU/k.LDS))
	}
	return perCU * len(g.cus)
}

// MaxResident returns how many work-groups of k fit on the GPU at once.
func (g *GPU) MaxResident(k Kernel) int { return g.maxResident(k) }

// DispatchOp returns the queue operation that runs k: the CP reads the AQL
// packet, pays the launch overhead (with the kernel-start system acquire),
// dispatches the work-groups as they fit, waits for the last, pays the
// teardown (with the kernel-end system release) and writes the completion
// signal. The returned Run is filled in as it goes.
func (g *GPU) DispatchOp(k Kernel) (Op, *Run) {
	if err := g.Validate(k); err != nil {
		panic(err) // callers validate first; reaching here is a simulator bug
	}
	r := &Run{Kernel: k, Signal: g.mem.AllocData(mem.GPU, 8, k.Name+".signal"), Queued: g.e.Now()}
	return func(cp *sim.Proc) { g.runKernel(cp, r) }, r
}

func (g *GPU) runKernel(cp *sim.Proc, r *Run) {
	r.LaunchStart = cp.Now()
	cp.Sleep(g.dmaLat) // the CP reads the AQL packet by DMA, not through the L2 (aql.go)
	g.execute(cp, r)
	r.Done = cp.Now()
	r.finished = true
	if r.Signal != 0 { // RunUnsignalled: a null completion signal
		g.mem.Store64(r.Signal, 1)
	}
	r.fin.Notify()
}

// execute runs a decoded dispatch on cp: the launch overhead (with the
// kernel-start system acquire), the work-groups as they fit, the teardown
// (with the kernel-end system release). The caller writes the completion
// signal.
func (g *GPU) execute(cp *sim.Proc, r *Run) {
	k := r.Kernel
	cp.Sleep(g.spec.Launch)
	kr := g.startKernel(cp, r)
	for kr.dispatched < k.WGs || kr.live > 0 { // the last retirement resumes the CP (Handle)
		cp.Wait(&kr.fin, "work-groups of "+k.Name)
	}
	r.BodyEnd = cp.Now()
	tStart := cp.Now()
	cp.Sleep(g.spec.Teardown)
	if kr.storesAt > cp.Now() {
		cp.SleepUntil(kr.storesAt)
	}
	g.writeBackAll(cp)
	if g.e.Tracer() != nil {
		g.e.Span(g.name+".cp", "teardown "+k.Name, tStart, cp.Now())
	}
	// The dispatcher finished with its last dispatch and the last
	// retirement's wake-up (Handle) has run: nothing refers to kr now.
	g.freeRuns.Put(kr)
}

// startKernel starts r's body once its launch latency is over: the caches
// are invalidated and a step process that continues the CP's work in this
// event places, dispatches and waits for the work-groups; the CP itself
// then waits once, for the last work-group to retire (kernelRun.fin).
func (g *GPU) startKernel(cp *sim.Proc, r *Run) *kernelRun {
	g.invalidateAll()
	if g.e.Tracer() != nil { // span names are made only for a tracer
		g.e.Span(g.name+".cp", "launch "+r.Kernel.Name, r.LaunchStart, cp.Now())
	}
	r.BodyStart = cp.Now()
	g.stats.Kernels++
	kr := g.newKernelRun(r)
	if g.dispatchName == "" {
		g.dispatchName = g.name + ".dispatch"
	}
	g.e.StartStepsIn(&kr.proc, g.dispatchName, kr)
	kr.proc.SetDaemon() // part of the CP, which is a daemon
	return kr
}

// newKernelRun returns the dispatch state of r: a finished dispatch's
// kernelRun, whose dispatcher process the engine checks is finished when
// it is reused, or a new one.
func (g *GPU) newKernelRun(r *Run) *kernelRun {
	kr, ok := g.freeRuns.Get()
	if !ok {
		kr = new(kernelRun)
	}
	kr.g, kr.k, kr.r, kr.waves = g, &r.Kernel, r, g.waves(r.Kernel)
	kr.dispatched, kr.live, kr.cu, kr.wakeSet = 0, 0, nil, false
	kr.storesAt = 0
	return kr
}

// place reserves room for a WG of k on some CU, trying CUs round-robin,
// and reports false when none has room.
func (g *GPU) place(k *Kernel, waves int) *computeUnit {
	maxWaves := g.spec.SIMDs * g.spec.WavesPerSIMD
	for range g.cus {
		cu := g.cus[g.rr]
		g.rr = (g.rr + 1) % len(g.cus)
		if cu.waves+waves <= maxWaves && cu.lds+k.LDS <= g.spec.LDSPerCU {
			if w := cu.armed; w != nil {
				w.disarm() // the newcomer shares the L1: as the wake-up left it
			}
			cu.waves += waves
			cu.lds += k.LDS
			return cu
		}
	}
	return nil
}

func (g *GPU) invalidateAll() {
	for _, cu := range g.cus {
		cu.l1.clear()
	}
	if g.l2 != nil {
		g.l2.clear()
	}
}

// writeBackAll writes every dirty L2 line to memory (dGPU system release).
func (g *GPU) writeBackAll(p *sim.Proc) {
	if g.l2 == nil {
		return
	}
	n := g.l2.writeBack(g.mem)
	g.stats.L2Writebks += uint64(n)
	if n > 0 {
		p.SleepUntil(g.dram.Reserve(p.Now(), uint64(n)*mem.LineSize))
	}
}
