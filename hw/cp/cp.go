package cp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/sched"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes the CP cores (hardware.md §2.2, §8).
type Spec struct {
	Cores    int       `toml:"cores" doc:"command-processor cores (x86 2-wide OOO)" src:"DOC"`
	Freq     unit.Freq `toml:"freq" doc:"CP core clock" src:"DOC"`
	IPC      float64   `toml:"ipc" doc:"effective IPC of CP software (gpu-networking.md §6)" src:"DEFAULT"`
	L1Lines  int       `toml:"l1_lines" doc:"CP D-cache in 64 B lines (32 kB)" src:"DOC"`
	L1Cycles int       `toml:"l1_cycles" doc:"CP D-cache hit latency in CP cycles" src:"DOC"`
	Quantum  sim.Time  `toml:"quantum" doc:"time slice when more threads than CP cores (hardware.md §8)" src:"DEFAULT"`
}

// DefaultSpec is the compnet preset's CP: 2 cores at 2 GHz, IPC 0.8, 32 kB
// D-cache with 4-cycle hits, 10 µs quantum.
func DefaultSpec() Spec {
	return Spec{Cores: 2, Freq: 2e9, IPC: 0.8, L1Lines: 512, L1Cycles: 4, Quantum: 10 * sim.Microsecond}
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
	if !(s.IPC > 0 && s.IPC <= 8) {
		errs = append(errs, fmt.Errorf("cp.ipc = %v: must be in (0, 8]", s.IPC))
	}
	if s.L1Lines < 1 || s.L1Lines > 1<<20 {
		errs = append(errs, fmt.Errorf("cp.l1_lines = %d: must be in [1, 1048576]", s.L1Lines))
	}
	if s.L1Cycles < 0 || s.L1Cycles > 1000 {
		errs = append(errs, fmt.Errorf("cp.l1_cycles = %d: must be in [0, 1000]", s.L1Cycles))
	}
	if s.Quantum <= 0 {
		errs = append(errs, fmt.Errorf("cp.quantum = %v: must be > 0", s.Quantum))
	}
	return errors.Join(errs...)
}

// CP is one GPU's command processor cores.
type CP struct {
	e     *sim.Engine
	name  string
	spec  Spec
	g     *gpu.GPU
	cores *sched.Sched
}

// New returns the CP cores of GPU g.
func New(e *sim.Engine, name string, spec Spec, g *gpu.GPU) *CP {
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return &CP{e: e, name: name, spec: spec, g: g, cores: sched.New(name, spec.Cores, spec.Quantum)}
}

// Spec returns the CP parameters.
func (c *CP) Spec() Spec { return c.spec }

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
	l1    map[mem.Addr]*[mem.LineSize]byte
	order []mem.Addr
	n     Counts
	track string
}

// Spawn starts a CP thread running body, bound to the next core
// round-robin.
func (c *CP) Spawn(name string, body func(t *Thread)) *Thread {
	t := &Thread{cp: c, l1: map[mem.Addr]*[mem.LineSize]byte{}, track: c.name + "." + name}
	t.Proc = c.e.Spawn(t.track, func(p *sim.Proc) {
		t.slot = c.cores.Bind(p)
		defer t.slot.Exit()
		body(t)
	})
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
	t.slot.Busy(t.cp.spec.Freq.Cycles(float64(n) / t.cp.spec.IPC))
}

// Acquire is the device-scope acquire marker: the CP's L1 is invalidated,
// so the next loads observe what the work-groups released to the L2.
func (t *Thread) Acquire() {
	clear(t.l1)
	t.order = t.order[:0]
}

// LoadLine reads the 64 B line at l (line-aligned) through the L1 and the
// GPU L2. A hit in the L1 returns the cached bytes, however stale.
func (t *Thread) LoadLine(l mem.Addr) [mem.LineSize]byte {
	t.n.L1++
	if b := t.l1[l]; b != nil {
		t.slot.Busy(t.cp.spec.Freq.Cycles(float64(t.cp.spec.L1Cycles)))
		return *b
	}
	data, hit, lat := t.cp.g.CPReadLine(t.Proc, l)
	t.count(hit)
	t.slot.Busy(lat)
	t.fill(l, data)
	return data
}

// Load64 reads the word at a (see LoadLine).
func (t *Thread) Load64(a mem.Addr) uint64 {
	l := mem.Line(a)
	d := t.LoadLine(l)
	return binary.LittleEndian.Uint64(d[a-l:])
}

// Store64 writes v at a through the L1 (updating a cached copy) into the
// GPU L2, visible to the work-groups at device scope.
func (t *Thread) Store64(a mem.Addr, v uint64) {
	l := mem.Line(a)
	t.n.L1++
	if b := t.l1[l]; b != nil {
		binary.LittleEndian.PutUint64(b[a-l:], v)
	}
	hit, lat := t.cp.g.CPStore64(t.Proc, a, v)
	t.count(hit)
	t.slot.Busy(lat)
}

// RMW is a lock-prefixed read-modify-write of the word at a: it bypasses
// the L1 and holds the L2 line LOCKED between its halves, so it is atomic
// against the other CP threads and the GPU. It returns the old value.
func (t *Thread) RMW(a mem.Addr, f func(old uint64) uint64) uint64 {
	t.n.L2 += 2
	old := t.cp.g.CPRMW(t.Proc, a, f)
	delete(t.l1, mem.Line(a))
	return old
}

// ReleaseSystem is the system-scope release marker: the GPU L2's dirty
// lines are written back so the NIC sees the command's source data.
func (t *Thread) ReleaseSystem() { t.cp.g.SystemRelease(t.Proc) }

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
		delete(t.l1, t.order[0])
		t.order = t.order[1:]
	}
	b := data
	t.l1[l] = &b
	t.order = append(t.order, l)
}
