package cpu

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CPU is a node's host processor.
type CPU struct {
	e     *sim.Engine
	instr uint64 // (beside the spec's first fields: Instr reads Freq and IPC)
	name  string
	spec  Spec
	mem   *mem.Memory
	dram  *mem.Server
	cores []*core
	team  []*int // identities of the OpenMP team threads, kept across regions
	// teamTracks are the team threads' names; idleTeam holds the team
	// threads of finished regions, reused by the next (team.go).
	teamTracks []string
	idleTeam   []*teamThread
	// teamCoroutines runs team threads as coroutines instead of step
	// processes: the reference form the tests compare the step form with.
	teamCoroutines bool
	stats          Stats
	// functions are the host functions agent-dispatch packets can name
	// (LoadFunction, agent.go).
	functions []Function
	// res is what the caches hold of the ranges streaming computations
	// touched (resident.go).
	res *residency
	// c2c is the chip-to-chip link to the GPU (NVLink-C2C) on nodes
	// whose GPU memory lies beyond it (UseC2C); nil elsewhere.
	c2c *pcie.Link
}

// UseC2C puts the node's GPU memory beyond the chip-to-chip link l
// (NVLink-C2C): the cores' word loads, stores and atomics of GPU-pool
// addresses cross l, with its latency each way and its byte server.
func (c *CPU) UseC2C(l *pcie.Link) { c.c2c = l }

// WordLatency returns how long a core's load of the word at a that
// misses its caches takes, issued now: the miss latency (Spec.MissLatency:
// the way to the last level that missed, then DRAM), plus the C2C
// round trip when a lies in GPU memory beyond NVLink-C2C. Pollers that
// model their own misses (runtime progress loops) charge it.
func (c *CPU) WordLatency(a mem.Addr) sim.Duration {
	if c.c2c == nil || c.mem.PoolOf(a) != mem.GPU {
		return c.spec.MissLatency()
	}
	now := c.e.Now()
	return c.c2c.Read(pcie.Down, now, mem.LineSize, false) - now + c.spec.MissLatency()
}

// storeDelay returns how long after now a core's store to the word at a
// becomes visible: the miss latency (its ownership fetched through the
// last level that missed, then DRAM), or for GPU memory beyond
// NVLink-C2C the posted write's crossing first.
func (c *CPU) storeDelay(a mem.Addr) sim.Duration {
	if c.c2c == nil || c.mem.PoolOf(a) != mem.GPU {
		return c.spec.MissLatency()
	}
	now := c.e.Now()
	_, vis := c.c2c.PostedWrite(pcie.Down, now, 8)
	return vis - now + c.spec.MissLatency()
}

// Stats counts what the CPU's cores did.
type Stats struct {
	StreamBytes uint64       // bytes moved by Compute
	StreamLines uint64       // cache lines (misses) those bytes took
	StreamTime  sim.Duration // core time spent streaming, summed over cores
}

// LoadedLatency returns the mean memory latency a streaming miss saw, by
// Little's law: time × outstanding misses / misses. Zero if nothing streamed.
func (s Stats) LoadedLatency(outstanding int) sim.Duration {
	if s.StreamLines == 0 {
		return 0
	}
	return sim.Duration(float64(s.StreamTime) * float64(outstanding) / float64(s.StreamLines))
}

// New returns the CPU of a node; dram is the node's shared memory server.
func New(e *sim.Engine, name string, spec Spec, m *mem.Memory, dram *mem.Server) *CPU {
	c := &CPU{e: e, name: name, spec: spec, mem: m, dram: dram, res: newResidency(spec)}
	if m != nil {
		// A write by any agent invalidates cached copies of its lines.
		m.OnTouch(c.res.invalidate)
	}
	for i := range max(1, spec.Cores) {
		c.cores = append(c.cores, &core{id: i, cpu: c})
	}
	return c
}

// Cores returns the cores there are now: cpu.cores, plus any AddCores
// added.
func (c *CPU) Cores() int { return len(c.cores) }

// AddCores adds n idle cores, for threads that need a hardware context of
// their own beyond cpu.cores (GHN helper threads as the documents'
// simulator ran them: one per context). They take part in placement like
// the others.
func (c *CPU) AddCores(n int) {
	for range n {
		c.cores = append(c.cores, &core{id: len(c.cores), cpu: c})
	}
}

// Spec returns the CPU parameters.
func (c *CPU) Spec() Spec { return c.spec }

// Mem returns the node memory the CPU reaches.
func (c *CPU) Mem() *mem.Memory { return c.mem }

// Stats returns the counters of streaming work so far.
func (c *CPU) Stats() Stats { return c.stats }

// Instructions returns the runtime instructions charged so far.
func (c *CPU) Instructions() uint64 { return c.instr }

// Thread is a host thread: a process that runs on one core of its CPU,
// competing for it with the other threads placed there.
type Thread struct {
	// The fields a step's Try reads come first, within 64 bytes (the
	// thread's struct is usually cold when its event runs).
	*sim.Proc
	cpu  *CPU
	core *core
	// Where the thread's blocking operations stand, so that they can run
	// as steps (tryAcquire, tryRun, tryStream) in a step process.
	acq acqState
	run runState
	// The operation begun by a Begin* call, advanced by Try (steps.go).
	op      opKind
	ws      waitState    // where a step-form Wait or Block (or join) stands
	queued  bool         // in its core's queue
	awake   bool         // its process waits in acquire (not parked in a poll)
	running bool         // inside a runFor chunk: yields at its slice end by itself
	polling bool         // spinning on a word or an event queue
	runLeft sim.Duration // core time left of the current run
	chunk   sim.Duration // the chunk of it being slept on the core

	track     string
	ident     any        // what the core's context holds: the thread, or its team slot
	turn      sim.Signal // notified when the thread is put on its core
	pollSince sim.Time
	onCore    sim.Duration // time held the core, up to its last release

	streamLeft uint64 // bytes left of the current stream
	mix        mix    // where the current region's bytes are (ComputeOn); off: DRAM

	opStart  sim.Time    // when a step-form Compute began
	opJoined int         // team threads a step-form Compute has joined
	wblock   bool        // it blocks off the core (else it spins)
	wsig     *sim.Signal // what it waits on, or
	wjoin    *sim.Proc   // the team thread it joins
	wwhat    string
	wcond    func() bool // BeginWaitUntil's condition, nil for a plain wait

	team []*teamThread // the team of the thread's current region (Compute), kept for the next

	// storesVisible is when the thread's last store becomes globally
	// visible. x86 stores leave the store buffer in program order (TSO):
	// a store is visible no earlier than the one before it, a locked
	// read-modify-write waits until every earlier store is (RMW), and an
	// uncached MMIO store is issued only then (StoreUncached).
	storesVisible sim.Time
}

// Spawn starts a host thread running body on the core the scheduler
// places it on: the one with the fewest live threads, the lowest index
// among equals (the first thread of a node gets core 0). Threads do not
// migrate.
func (c *CPU) Spawn(name string, body func(t *Thread)) *Thread {
	return c.spawn(c.place(), name, body)
}

// SpawnOn starts a host thread running body pinned to core k, in
// [0, cpu.cores), whatever else runs there (a GHN service thread on a core
// of its own, or on the application's core to show what that costs).
func (c *CPU) SpawnOn(k int, name string, body func(t *Thread)) (*Thread, error) {
	if k < 0 || k >= len(c.cores) {
		return nil, fmt.Errorf("cpu: thread %q pinned to core %d: must be in [0, %d) (cpu.cores)", name, k, len(c.cores))
	}
	return c.spawn(c.cores[k], name, body), nil
}

func (c *CPU) spawn(k *core, name string, body func(t *Thread)) *Thread {
	t := &Thread{cpu: c, track: c.name + "." + name, core: k}
	t.ident = t
	k.threads++
	t.Proc = c.e.Spawn(t.track, func(*sim.Proc) {
		defer t.exit()
		t.acquire()
		body(t)
	})
	return t
}

// exit gives the core up when the body returns.
func (t *Thread) exit() {
	t.core.threads--
	if t.core.cur == t {
		t.core.release()
	}
}

// CPU returns the processor the thread runs on.
func (t *Thread) CPU() *CPU { return t.cpu }

// Core returns the index of the core the thread runs on.
func (t *Thread) Core() int { return t.core.id }

// Track returns the trace track name of the thread.
func (t *Thread) Track() string { return t.track }

// Span records a trace span on the thread's track from start to now.
// Empty spans are dropped.
func (t *Thread) Span(what string, start sim.Time) {
	if now := t.Now(); now > start {
		t.Engine().Span(t.track, what, start, now)
	}
}

// Sleep keeps the thread's core busy for d of core time (a stall or work
// the thread does): sharing the core stretches it.
func (t *Thread) Sleep(d sim.Duration) { t.runFor(d) }

// SleepUntil keeps the core busy until time when, or later if the thread
// loses its core on the way.
func (t *Thread) SleepUntil(when sim.Time) { t.runFor(max(0, when-t.Now())) }

// Wait spins on the core until s is notified (a polling loop: the core
// stays busy; see Block for a blocking wait).
func (t *Thread) Wait(s *sim.Signal, what string) { t.spin(func() { t.Proc.Wait(s, what) }) }

// WaitUntil spins on the core until cond holds, re-checked at each
// notification of s.
func (t *Thread) WaitUntil(s *sim.Signal, what string, cond func() bool) {
	t.spin(func() { t.Proc.WaitUntil(s, what, cond) })
}

// Join spins until thread q has finished (an OpenMP barrier).
func (t *Thread) Join(q *Thread) { t.spin(func() { t.Proc.Join(q.Proc) }) }

// Block waits off the core until s is notified (a blocking wait: the core
// runs other threads meanwhile), then pays cpu.wake_latency and waits for
// its core.
func (t *Thread) Block(s *sim.Signal, what string) { t.block(func() { t.Proc.Wait(s, what) }) }

// Instr runs n instructions of runtime software.
func (t *Thread) Instr(n int) {
	if n < 0 {
		panic(fmt.Sprintf("cpu: %s runs %d instructions", t.track, n))
	}
	t.cpu.instr += uint64(n)
	t.runFor(t.cpu.spec.Instr(n))
}

// Compute streams bytes of a reduction or stencil as an OpenMP-style
// parallel region of threads threads: the calling thread and threads-1 team
// threads, placed by the scheduler, each stream an equal share, and the
// region ends when the last share is done (the dissertation, see stream).
// Team threads that share a core with others (more threads than cores, or
// a core taken by a polling helper) take turns on it.
func (t *Thread) Compute(bytes uint64, threads int) {
	if bytes == 0 {
		return
	}
	if threads < 1 {
		panic(fmt.Sprintf("cpu: %s computes with %d threads", t.track, threads))
	}
	start := t.Now()
	share := t.spawnShares(bytes, threads)
	team := t.team
	t.stream(share)
	// The barrier spins, unless the team outnumbers the cores: then, like
	// libgomp's throttled spin, the caller sleeps so its core's team thread
	// can run.
	for _, w := range team {
		if w.Done() {
			continue
		}
		if threads > t.cpu.spec.Cores {
			t.block(func() { t.Proc.Join(w.Proc) })
		} else {
			t.Join(&w.Thread)
		}
	}
	t.cpu.endTeam(team)
	t.team = team[:0]
	t.Span("compute", start)
}

// spawnShares starts the threads−1 team threads of a parallel region over
// bytes, in t.team, each on an equal share (the last one on the rest), and
// returns the calling thread's share.
func (t *Thread) spawnShares(bytes uint64, threads int) uint64 {
	share := bytes / uint64(threads)
	team := t.team[:0]
	for i := 1; i < threads; i++ {
		n := share
		if i == threads-1 {
			n = bytes - share*uint64(threads-1)
		}
		team = append(team, t.cpu.spawnTeam(t, i, n))
	}
	t.team = team
	return share
}

// teamSlot returns the identity of OpenMP team thread i: a region's team
// threads are the same OS threads as the previous region's (a thread pool),
// so putting one back on the core it ran on costs no context switch.
func (c *CPU) teamSlot(i int) *int {
	for len(c.team) <= i {
		c.team = append(c.team, new(int))
	}
	return c.team[i]
}

// streamSlice is how many bytes a core streams between two reservations
// at the memory server: small enough that other agents' traffic interleaves
// with a long region, large enough that a region costs few events.
const streamSlice = 16 << 10

// stream moves bytes through one core. Each slice of the region reserves its
// bytes at the node's DRAM server (FIFO, shared with the GPU in APU mode) and
// ends at the latest of
//   - the issue bound, bytes / (stream_bytes_per_cycle × f);
//   - under the mlp model, Little's law: lines × dram_latency / outstanding
//     misses (at least one latency), the time the core's miss-handling
//     capacity needs to bring the lines in;
//   - the server's finish time, which includes the traffic queued ahead.
//
// A core alone is thus latency-bound at outstanding × line / latency, and
// enough cores together saturate at the DRAM bandwidth; the loaded latency
// a miss saw is recorded in Stats.
func (t *Thread) stream(bytes uint64) {
	t.streamLeft = bytes
	for !t.tryStream() {
	}
}

// tryStream is stream as a step: it advances the stream of t.streamLeft
// bytes and reports true once it is over, false when it waited (or must
// wait) and has to be called again. Each slice reserves its bytes at the
// DRAM server once, when its run begins.
func (t *Thread) tryStream() bool {
	s := t.cpu.spec
	for {
		if t.run != runIdle && !t.tryRun() {
			return false
		}
		if t.streamLeft == 0 {
			return true
		}
		n := min(t.streamLeft, streamSlice)
		t.streamLeft -= n
		start := t.Now()
		end := t.sliceEnd(start, n)
		lines := (n + uint64(s.LineSize) - 1) / uint64(s.LineSize)
		t.cpu.stats.StreamBytes += n
		t.cpu.stats.StreamLines += lines
		t.cpu.stats.StreamTime += end - start
		t.beginRun(end - start)
	}
}

// sliceEnd returns when a slice of n bytes streamed from start ends: the
// issue bound, the DRAM server's finish for the bytes DRAM serves, and under
// the mlp model Little's law over the lines each level serves at its
// latency (at least the slowest level's latency). With no mix (Compute)
// every byte comes from DRAM.
func (t *Thread) sliceEnd(start sim.Time, n uint64) sim.Time {
	s := t.cpu.spec
	issue := start.Add(s.Freq.Cycles(float64(n) / s.StreamBPC))
	lines := (n + uint64(s.LineSize) - 1) / uint64(s.LineSize)
	if !t.mix.on || t.mix.frac[DRAM] == 1 {
		end := max(issue, t.cpu.dram.Reserve(start, n))
		if s.ComputeModel == ModelMLP {
			out := s.Outstanding()
			miss := s.MissLatency()
			little := sim.FromPicoseconds(float64(lines) * float64(miss) / float64(out))
			end = max(end, start+max(miss, little))
		}
		return end
	}
	end := issue
	if d := uint64(math.Ceil(float64(n) * t.mix.frac[DRAM])); d > 0 {
		end = max(end, t.cpu.dram.Reserve(start, d))
	}
	if s.ComputeModel != ModelMLP {
		return end
	}
	var lat float64 // summed line latencies, ps
	var slowest sim.Duration
	for l := L1; l < nLevels; l++ {
		if f := t.mix.frac[l]; f > 0 {
			ll := s.levelLatency(l)
			lat += float64(lines) * f * float64(ll)
			slowest = max(slowest, ll)
		}
	}
	little := sim.FromPicoseconds(lat / float64(s.Outstanding()))
	return max(end, start+max(slowest, little))
}

// WaitWord polls the 64-bit word at a until cond holds and returns its
// value. what names the wait in deadlock reports.
func (t *Thread) WaitWord(a mem.Addr, what string, cond func(uint64) bool) uint64 {
	m := t.cpu.mem
	t.Sleep(t.cpu.spec.CacheHit)
	for {
		v := m.Load64(a)
		if cond(v) {
			return v
		}
		t.Wait(m.Watch(a), what)
		t.Sleep(t.cpu.WordLatency(a))
	}
}

// Load charges one memory read of a word another agent may have written
// (a cache miss) and returns it.
func (t *Thread) Load(a mem.Addr) uint64 {
	t.Sleep(t.cpu.WordLatency(a))
	return t.cpu.mem.Load64(a)
}

// Store writes a word to a line another agent may hold (a miss: the line's
// ownership is fetched from memory). The thread does not wait: the store
// retires into the store buffer and becomes visible to others after the
// DRAM latency, and never before the thread's earlier stores (x86 TSO; the
// ownership requests themselves overlap).
func (t *Thread) Store(a mem.Addr, v uint64) {
	m := t.cpu.mem
	t.storeAfter(t.cpu.storeDelay(a), func() { m.Store64(a, v) })
}

// StoreMiss is Store of any write: write runs when the store becomes
// visible, which StoreMiss returns.
func (t *Thread) StoreMiss(write func()) sim.Time {
	return t.storeAfter(t.cpu.spec.MissLatency(), write)
}

// storeAfter is a store that takes d from the core to visibility, kept
// behind the thread's earlier stores.
func (t *Thread) storeAfter(d sim.Duration, write func()) sim.Time {
	vis := max(t.Now()+d, t.storesVisible)
	t.storesVisible = vis
	if write != nil {
		t.Engine().At(vis, write)
	}
	return vis
}

// StoreUncached is an uncached store to a device register (an MMIO
// doorbell) that reaches the device lat after it leaves the core. An x86
// uncached store is not buffered past earlier stores: it leaves only once
// every earlier store of the thread is visible (the Intel SDM's
// strong-uncacheable ordering, vol. 3 §11.3), so a doorbell never arrives
// before the packet it announces. The thread does not wait; write runs
// when the device sees the store, which StoreUncached returns.
func (t *Thread) StoreUncached(lat sim.Duration, write func()) sim.Time {
	vis := max(t.Now(), t.storesVisible) + lat
	t.storesVisible = vis
	if write != nil {
		t.Engine().At(vis, write)
	}
	return vis
}

// BlockWord waits off the core until the word at a satisfies cond (a
// blocking wait on a signal: the writer's interrupt wakes the thread, which
// pays cpu.wake_latency and then waits for its core), and returns it.
func (t *Thread) BlockWord(a mem.Addr, what string, cond func(uint64) bool) uint64 {
	m := t.cpu.mem
	t.Sleep(t.cpu.spec.CacheHit)
	if v := m.Load64(a); cond(v) {
		return v
	}
	t.block(func() { t.Proc.WaitUntil(m.Watch(a), what, func() bool { return cond(m.Load64(a)) }) })
	t.Sleep(t.cpu.WordLatency(a))
	return m.Load64(a)
}

// RMW performs a locked read-modify-write that adds add to the word at a
// and returns the old value. The line is assumed taken by another agent
// (a queue index the GPU or NIC reads), so it costs a DRAM access on the
// core, after the thread's earlier stores are visible: an x86 locked
// instruction drains the store buffer first (the Intel SDM, vol. 3
// §8.2.2: loads and stores are not reordered with locked instructions).
func (t *Thread) RMW(a mem.Addr, add uint64) uint64 {
	t.Sleep(max(0, t.storesVisible-t.Now()) + t.cpu.WordLatency(a))
	m := t.cpu.mem
	v := m.Load64(a)
	m.Store64(a, v+add)
	return v
}
