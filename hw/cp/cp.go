package cp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/sched"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes the CP cores (the dissertation's Table 5.1).
type Spec struct {
	Cores int       `toml:"cores" doc:"command-processor cores (x86 2-wide OOO); a run with more service threads gets one core per thread unless cp.oversubscribe" src:"DOC"`
	Freq  unit.Freq `toml:"freq" doc:"CP core clock" src:"DOC"`
	Width int       `toml:"width" doc:"CP issue width (dissertation Table 5.1: 2-wide OOO)" src:"DOC"`
	// IPC overrides the instruction-count model; 0 derives it.
	IPC      float64  `toml:"ipc" doc:"effective IPC of CP software; 0 = derived from the host's model: 1 / (1/cp.width + (1/cpu.ipc − 1/cpu.width)), the same software's stall cycles on a narrower core" src:"DEFAULT"`
	L1Lines  int      `toml:"l1_lines" doc:"CP D-cache in 64 B lines (32 kB)" src:"DOC"`
	L1Cycles int      `toml:"l1_cycles" doc:"CP D-cache hit latency in CP cycles" src:"DOC"`
	Quantum  sim.Time `toml:"quantum" doc:"time slice when cp.oversubscribe puts more threads than CP cores on the cores (the dissertation)" src:"DEFAULT"`
	// CoherentL1 keeps the CP's D-cache coherent with the GPU L2.
	CoherentL1 bool `toml:"coherent_l1" doc:"the CP D-cache is kept coherent with the GPU L2 (as a stand-alone x86 core's is): a line another agent changed misses, an unchanged one hits, and the acquire marker costs nothing; off (the default, the documents' CP: in gem5's APU script each CP sits on a GPU-side L1 controller, VIPER's write-through non-coherent TCP), the D-cache is a GPU-style L1 that the acquire marker invalidates, so every poll reaches the L2" src:"DEFAULT"`
	// StoreBuffer is the store-buffer depth; 0 makes every store stall.
	StoreBuffer int `toml:"store_buffer" doc:"CP store-buffer entries: a store retires into it and reaches the GPU L2 (the CP's L1 writes through) in the background, in program order, while the core runs on; the core stalls only when the buffer is full, at a lock-prefixed RMW and at a release marker, which drain it (x86 TSO), and on a load of a line with a store still in it; 0 = every store stalls the core for its L2 access. 32: gem5's O3 CPU default store queue (BaseO3CPU SQEntries), the documents give none" src:"DEFAULT"`
	// Oversubscribe keeps cp.cores fixed and time-slices extra threads.
	Oversubscribe bool `toml:"oversubscribe" doc:"time-slice service threads beyond cp.cores on those cores (round robin, cp.quantum) instead of giving each thread a core of its own; the documents do not describe time-slicing (their simulator runs one thread per hardware context)" src:"DEFAULT"`
}

// DefaultSpec is the compnet preset's CP: 2 cores, 2-wide, at 2 GHz, IPC
// derived from the host's instruction-count model, 32 kB D-cache with
// 4-cycle hits, a 32-entry store buffer, one core per service thread
// (10 µs quantum when oversubscribed).
func DefaultSpec() Spec {
	return Spec{Cores: 2, Freq: 2e9, Width: 2, L1Lines: 512, L1Cycles: 4, StoreBuffer: 32, Quantum: 10 * sim.Microsecond}
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	if s.Cores < 1 || s.Cores > 64 {
		errs = append(errs, fmt.Errorf("cp.cores = %d: must be in [1, 64]", s.Cores))
	}
	if s.Freq <= 0 {
		errs = append(errs, fmt.Errorf("cp.freq = %v: must be > 0", s.Freq))
	}
	widthOK := s.Width >= 1 && s.Width <= 16
	if !widthOK {
		errs = append(errs, fmt.Errorf("cp.width = %d: must be in [1, 16]", s.Width))
	}
	switch {
	case widthOK && !(s.IPC == 0 || s.IPC >= cpu.MinIPC && s.IPC <= float64(s.Width)):
		errs = append(errs, fmt.Errorf("cp.ipc = %v: must be 0 (derived) or in [%v, cp.width]", s.IPC, cpu.MinIPC))
	case !widthOK && !(s.IPC == 0 || s.IPC >= cpu.MinIPC && s.IPC <= 16):
		// Its own range, without the bad cp.width: a line naming
		// cp.width is dropped as following from cp.width's (cmd
		// dropDerived).
		errs = append(errs, fmt.Errorf("cp.ipc = %v: must be 0 (derived) or in [%v, 16]", s.IPC, cpu.MinIPC))
	}
	if s.L1Lines < 1 || s.L1Lines > 1<<20 {
		errs = append(errs, fmt.Errorf("cp.l1_lines = %d: must be in [1, 1048576]", s.L1Lines))
	}
	if s.L1Cycles < 0 || s.L1Cycles > 1000 {
		errs = append(errs, fmt.Errorf("cp.l1_cycles = %d: must be in [0, 1000]", s.L1Cycles))
	}
	if s.StoreBuffer < 0 || s.StoreBuffer > 1024 {
		errs = append(errs, fmt.Errorf("cp.store_buffer = %d: must be in [0, 1024] (0 = stores stall the core)", s.StoreBuffer))
	}
	if s.Quantum <= 0 {
		errs = append(errs, fmt.Errorf("cp.quantum = %v: must be > 0", s.Quantum))
	}
	return errors.Join(errs...)
}

// CP is one GPU's command processor cores.
type CP struct {
	e       *sim.Engine
	name    string
	spec    Spec
	ipc     float64
	g       *gpu.GPU
	cores   *sched.Sched
	threads []*Thread // spawned, in order
}

// New returns the CP cores of GPU g. stallCPI is the stall cycles per
// instruction of runtime software, from the host's model
// (cpu.Spec.StallCPI); with cp.ipc = 0 the CP runs at
// cpu.IPCAt(cp.width, stallCPI).
func New(e *sim.Engine, name string, spec Spec, g *gpu.GPU, stallCPI float64) *CP {
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return &CP{e: e, name: name, spec: spec, ipc: spec.EffectiveIPC(stallCPI), g: g, cores: sched.New(name, spec.Cores, spec.Quantum)}
}

// EffectiveIPC returns the IPC CP software runs at: cp.ipc when set, else
// the instruction-count model 1 / (1/width + stallCPI).
func (s Spec) EffectiveIPC(stallCPI float64) float64 {
	if s.IPC > 0 {
		return s.IPC
	}
	return cpu.IPCAt(s.Width, stallCPI)
}

// Spec returns the CP parameters.
func (c *CP) Spec() Spec { return c.spec }

// IPC returns the IPC the CP's threads run at.
func (c *CP) IPC() float64 { return c.ipc }

// Cores returns the CP cores there are now.
func (c *CP) Cores() int { return c.cores.Cores() }

// Provision makes room for threads service threads before they are
// spawned: one hardware context each (the documents' simulator runs one
// software thread per context and cannot time-slice), so cores are added
// up to threads unless cp.oversubscribe. It returns how many it added.
func (c *CP) Provision(threads int) int {
	if c.spec.Oversubscribe {
		return 0
	}
	added := 0
	for c.cores.Cores() < threads {
		c.cores.AddCore()
		added++
	}
	return added
}

// GPU returns the GPU the CP belongs to.
func (c *CP) GPU() *gpu.GPU { return c.g }

// Counts are what a thread did, for the energy model.
type Counts struct {
	Instr, L1, L2, Mem uint64
}

// Thread is a software thread on a CP core.
type Thread struct {
	*sim.Proc
	cp    *CP
	slot  *sched.Thread
	l1    map[mem.Addr]int32 // line → its copy in l1Data
	order []mem.Addr
	n     Counts
	track string
	sb    []*sbStore // stores on their way to the L2, oldest first
	st    stepState  // the operation begun as steps (steps.go)
	// The L1's line copies in one block, those of dropped lines reused
	// (l1Free), and stores retired from the buffer, reused: a poll fills
	// a line after each acquire marker and a command stores several
	// words, so allocating each was a third of a COMPNET run's
	// allocations (which copy a line uses changes nothing).
	l1Data []([mem.LineSize]byte)
	l1Free []int32
	freeSB []*sbStore
}

// sbStore is a store in the thread's store buffer; it is also the event
// of its arrival at the L2 (Handle).
type sbStore struct {
	t       *Thread
	line    mem.Addr
	a       mem.Addr
	v       uint64
	done    sim.Time // when it reaches the L2 (later if an RMW held the line)
	arrived bool
}

// Spawn starts a CP thread running body, bound to the next core
// round-robin.
func (c *CP) Spawn(name string, body func(t *Thread)) *Thread {
	t := &Thread{cp: c, l1: map[mem.Addr]int32{}, track: c.name + "." + name}
	t.Proc = c.e.Spawn(t.track, func(p *sim.Proc) {
		t.slot = c.cores.Bind(p)
		defer t.slot.Exit()
		body(t)
	})
	c.threads = append(c.threads, t)
	return t
}

// Counts returns what the thread did so far.
func (t *Thread) Counts() Counts { return t.n }

// Core returns the index of the thread's core.
func (t *Thread) Core() int { return t.slot.Core() }

// BusyTime returns the time the thread held its core: its instructions
// and memory accesses, not the time it waited for its turn.
func (t *Thread) BusyTime() sim.Duration { return t.slot.BusyTime() }

// Preemptions returns how often the thread lost its core at a quantum end.
func (t *Thread) Preemptions() uint64 { return t.slot.Preemptions() }

// Instr runs n instructions of CP software.
func (t *Thread) Instr(n int) {
	if n <= 0 {
		return
	}
	t.n.Instr += uint64(n)
	t.slot.Busy(t.cp.spec.Freq.Cycles(float64(n) / t.cp.ipc))
}

// Acquire is the device-scope acquire marker: the CP's L1 is invalidated,
// so the next loads observe what the work-groups released to the L2. The
// invalidation costs what a CU's L1 invalidate does
// (gpu.l1_invalidate_cycles): the CP's L1 is the same kind of cache.
func (t *Thread) Acquire() {
	if t.cp.spec.CoherentL1 {
		return // the L1 holds no stale line to drop
	}
	t.invalidateL1()
	if c := t.cp.g.Spec().L1InvCycles; c > 0 {
		t.slot.Busy(t.cp.g.Spec().Cycles(c))
	}
}

// invalidateL1 drops every line of the L1.
func (t *Thread) invalidateL1() {
	clear(t.l1)
	t.l1Data, t.l1Free = t.l1Data[:0], t.l1Free[:0]
	t.order = t.order[:0]
}

// dropLine drops line l from the L1 (if there), keeping its copy's room
// for reuse.
func (t *Thread) dropLine(l mem.Addr) {
	if i, ok := t.l1[l]; ok {
		delete(t.l1, l)
		t.l1Free = append(t.l1Free, i)
	}
}

// cached returns the L1's copy of line l, or nil when the L1 does not hold
// it. The copy is valid until the thread's next fill or invalidation.
func (t *Thread) cached(l mem.Addr) *[mem.LineSize]byte {
	if i, ok := t.l1[l]; ok {
		return &t.l1Data[i]
	}
	return nil
}

// LoadLine reads the 64 B line at l (line-aligned) through the L1 and the
// GPU L2. A hit in the L1 returns the cached bytes, however stale.
func (t *Thread) LoadLine(l mem.Addr) [mem.LineSize]byte {
	t.n.L1++
	if b := t.cached(l); b != nil && (!t.cp.spec.CoherentL1 || *b == t.cp.g.CoherentLine(l)) {
		t.slot.Busy(t.cp.spec.Freq.Cycles(float64(t.cp.spec.L1Cycles)))
		return *b
	}
	t.drain(l, false) // a store to the line still on its way: wait for it
	data, hit, lat := t.cp.g.CPReadLine(t.Proc, l)
	t.count(hit)
	t.slot.Busy(lat)
	t.fill(l, data)
	return data
}

// L1State reports whether the next load of line l hits the thread's L1
// (hit) and, if so, whether the copy differs from what the GPU's coherence
// point holds (stale). Only an acquire marker, an RMW of the line or the
// eviction a fill of another line causes drop a copy, so a thread whose
// polls all hit can never see a change: models use this to detect such a
// livelock instead of polling forever.
func (t *Thread) L1State(l mem.Addr) (hit, stale bool) {
	b := t.cached(l)
	if b == nil {
		return false, false
	}
	same := *b == t.cp.g.CoherentLine(l)
	if t.cp.spec.CoherentL1 && !same {
		return false, false // a changed line misses in a coherent L1
	}
	return true, !same
}

// Load64 reads the word at a (see LoadLine).
func (t *Thread) Load64(a mem.Addr) uint64 {
	l := mem.Line(a)
	d := t.LoadLine(l)
	return binary.LittleEndian.Uint64(d[a-l:])
}

// Store64 writes v at a through the L1 (updating a cached copy) into the
// GPU L2, visible to the work-groups at device scope once it gets there.
// With a store buffer (cp.store_buffer) the store retires at once and
// reaches the L2 one L2 access later, after the stores before it (x86
// TSO keeps stores in order); the core waits only for a free entry.
// Without one, the core stalls for the L2 access.
func (t *Thread) Store64(a mem.Addr, v uint64) {
	l := mem.Line(a)
	t.n.L1++
	if b := t.cached(l); b != nil {
		binary.LittleEndian.PutUint64(b[a-l:], v)
	}
	depth := t.cp.spec.StoreBuffer
	if depth == 0 {
		hit, lat := t.cp.g.CPStore64(t.Proc, a, v)
		t.count(hit)
		t.slot.Busy(lat)
		return
	}
	t.retire()
	for len(t.sb) >= depth {
		t.stallFor(t.sb[0].done)
		t.retire()
	}
	t.push(a, v)
}

// push puts the store of v at a into the store buffer (it has room) and
// schedules its arrival at the L2.
func (t *Thread) push(a mem.Addr, v uint64) {
	l := mem.Line(a)
	var st *sbStore
	if k := len(t.freeSB); k > 0 {
		st, t.freeSB[k-1] = t.freeSB[k-1], nil
		t.freeSB = t.freeSB[:k-1]
	} else {
		st = new(sbStore)
	}
	*st = sbStore{t: t, line: l, a: a, v: v, done: t.cp.g.CPStoreDone(a)}
	if n := len(t.sb); n > 0 {
		st.done = max(st.done, t.sb[n-1].done)
	}
	t.sb = append(t.sb, st)
	t.cp.e.AtH(st.done, st, 0)
}

// Handle writes the buffered store into the L2 at its done time. A line
// another CP thread's RMW holds makes it wait a GPU cycle and retry, as
// the L2 holds any other requester of a LOCKED line.
func (st *sbStore) Handle(uint64) {
	t := st.t
	hit, ok := t.cp.g.CPStoreArrive(st.a, st.v)
	if !ok {
		st.done = t.cp.e.Now() + t.cp.g.Spec().Cycles(1)
		t.cp.e.AtH(st.done, st, 0)
		return
	}
	t.count(hit)
	st.arrived = true
}

// retire drops the stores that reached the L2 from the buffer (no event
// of theirs is pending any more: they are reused).
func (t *Thread) retire() {
	keep := t.sb[:0]
	for _, st := range t.sb {
		if !st.arrived {
			keep = append(keep, st)
		} else {
			t.freeSB = append(t.freeSB, st)
		}
	}
	clear(t.sb[len(keep):])
	t.sb = keep
}

// stallFor holds the core, doing nothing, until a buffered store that
// reaches the L2 at at has arrived: until at, or for a GPU cycle when its
// arrival runs at this instant, after the thread (stalling until now did
// nothing there, and a thread with a full buffer looped forever at one
// instant, which a store whose line another CP's RMW held could cause).
func (t *Thread) stallFor(at sim.Time) {
	if at > t.Now() {
		t.slot.Busy(at - t.Now())
		return
	}
	t.slot.Busy(t.cp.g.Spec().Cycles(1))
}

// stallUntil holds the core, doing nothing, until at.
func (t *Thread) stallUntil(at sim.Time) {
	if d := at - t.Now(); d > 0 {
		t.slot.Busy(d)
	}
}

// drain waits until every buffered store reached the L2 (all), or every
// buffered store to line: what a lock-prefixed RMW and a release marker
// do, and what a load of a line with a store still in the buffer waits
// for (the model forwards no store data).
func (t *Thread) drain(line mem.Addr, all bool) {
	for {
		t.retire()
		var last sim.Time
		pending := false
		for _, st := range t.sb {
			if all || st.line == line {
				last, pending = max(last, st.done), true
			}
		}
		if !pending {
			return
		}
		if last > t.Now() {
			t.stallUntil(last)
		} else {
			t.slot.Busy(t.cp.g.Spec().Cycles(1)) // its arrival runs at this instant, after us
		}
	}
}

// StoresInFlight returns the stores still in the thread's store buffer.
func (t *Thread) StoresInFlight() int {
	t.retire()
	return len(t.sb)
}

// RMW is a lock-prefixed read-modify-write of the word at a: it bypasses
// the L1 and holds the L2 line LOCKED between its halves, so it is atomic
// against the other CP threads and the GPU. It returns the old value.
func (t *Thread) RMW(a mem.Addr, f func(old uint64) uint64) uint64 {
	t.drain(0, true) // a locked instruction drains the store buffer first
	t.n.L2 += 2
	old := t.cp.g.CPRMW(t.Proc, a, f)
	t.dropLine(mem.Line(a))
	return old
}

// ReleaseSystem is the system-scope release marker: the GPU L2's dirty
// lines are written back so the NIC sees the command's source data.
func (t *Thread) ReleaseSystem() {
	t.drain(0, true) // the thread's own stores first
	t.cp.g.SystemRelease(t.Proc)
}

// AcquireSystem is the system-scope acquire marker: the L1 and the GPU
// L2's NIC-shared lines are invalidated, so NIC-written data is seen.
func (t *Thread) AcquireSystem() {
	t.Acquire()
	t.cp.g.SystemAcquire(t.Proc)
}

func (t *Thread) count(hit bool) {
	t.n.L2++
	if !hit {
		t.n.Mem++
	}
}

func (t *Thread) fill(l mem.Addr, data [mem.LineSize]byte) {
	if len(t.l1) >= t.cp.spec.L1Lines && len(t.order) > 0 {
		t.dropLine(t.order[0])
		t.order = t.order[1:]
	}
	i, ok := t.l1[l] // a stale copy a coherent L1 missed on: replaced in place
	if !ok {
		if k := len(t.l1Free); k > 0 {
			i = t.l1Free[k-1]
			t.l1Free = t.l1Free[:k-1]
		} else {
			i = int32(len(t.l1Data))
			t.l1Data = append(t.l1Data, [mem.LineSize]byte{})
		}
		t.l1[l] = i
	}
	t.l1Data[i] = data
	t.order = append(t.order, l)
}

// Invariants checks the CP cores' run queues at the end of a run
// (sched.Sched.Invariants) and that no service thread was on a core
// longer than the run.
func (c *CP) Invariants(now sim.Time) []sim.Violation {
	out := c.cores.Invariants(c.name, now)
	for _, t := range c.threads {
		if b := t.BusyTime(); b > now {
			out = append(out, sim.Violation{Agent: c.name, At: now, What: fmt.Sprintf("a service thread was on its core %v, longer than the run (%v)", b, now)})
		}
	}
	return out
}
