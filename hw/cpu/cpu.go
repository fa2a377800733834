// Package cpu models the host CPU of a node at the level the strategies
// need: host threads as blocking agents whose runtime software costs
// instructions / (IPC × f) (gpu-networking.md §6), streaming compute at a
// per-core byte rate capped by the DRAM bandwidth shared with the other
// agents of the node (hardware.md §10), and polling of memory words.
//
// Caches are not simulated line by line: a poll of an unchanged word costs
// a cache hit, and the first poll after a writer changed it costs a DRAM
// access (the writer's store or DMA invalidated the line). Polling loops are
// not simulated iteration by iteration: the thread sleeps until the word is
// written and then pays the miss, which is the time the next poll would see
// the change, up to one hit's latency.
package cpu

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CPU is a node's host processor.
type CPU struct {
	e     *sim.Engine
	name  string
	spec  Spec
	mem   *mem.Memory
	dram  *mem.Server
	instr uint64
}

// New returns the CPU of a node; dram is the node's shared memory server.
func New(e *sim.Engine, name string, spec Spec, m *mem.Memory, dram *mem.Server) *CPU {
	return &CPU{e: e, name: name, spec: spec, mem: m, dram: dram}
}

// Spec returns the CPU parameters.
func (c *CPU) Spec() Spec { return c.spec }

// Mem returns the node memory the CPU reaches.
func (c *CPU) Mem() *mem.Memory { return c.mem }

// Instructions returns the runtime instructions charged so far.
func (c *CPU) Instructions() uint64 { return c.instr }

// Thread is a host thread: a process bound to one core.
type Thread struct {
	*sim.Proc
	cpu   *CPU
	track string
}

// Spawn starts a host thread running body.
func (c *CPU) Spawn(name string, body func(t *Thread)) *Thread {
	t := &Thread{cpu: c, track: c.name + "." + name}
	t.Proc = c.e.Spawn(t.track, func(*sim.Proc) { body(t) })
	return t
}

// CPU returns the processor the thread runs on.
func (t *Thread) CPU() *CPU { return t.cpu }

// Track returns the trace track name of the thread.
func (t *Thread) Track() string { return t.track }

// Span records a trace span on the thread's track from start to now.
// Empty spans are dropped.
func (t *Thread) Span(what string, start sim.Time) {
	if now := t.Now(); now > start {
		t.Engine().Span(t.track, what, start, now)
	}
}

// Instr runs n instructions of runtime software.
func (t *Thread) Instr(n int) {
	if n < 0 {
		panic(fmt.Sprintf("cpu: %s runs %d instructions", t.track, n))
	}
	t.cpu.instr += uint64(n)
	t.Sleep(t.cpu.spec.Instr(n))
}

// Compute streams bytes of a reduction or stencil over threads cores
// (OpenMP-style): each core moves stream_bytes_per_cycle, and the whole
// region is capped by the node's DRAM bandwidth.
func (t *Thread) Compute(bytes uint64, threads int) {
	if bytes == 0 {
		return
	}
	threads = max(1, min(threads, t.cpu.spec.Cores))
	coreTime := t.cpu.spec.Freq.Cycles(float64(bytes) / (t.cpu.spec.StreamBPC * float64(threads)))
	start := t.Now()
	done := max(start+coreTime, t.cpu.dram.Reserve(start, bytes))
	t.SleepUntil(done)
	t.Span("compute", start)
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
		t.Sleep(t.cpu.spec.DRAMLatency)
	}
}

// Load charges one memory read of a word another agent may have written
// (a cache miss) and returns it.
func (t *Thread) Load(a mem.Addr) uint64 {
	t.Sleep(t.cpu.spec.DRAMLatency)
	return t.cpu.mem.Load64(a)
}

// Store writes a word to memory; it is visible to others after the DRAM
// latency (the thread does not wait).
func (t *Thread) Store(a mem.Addr, v uint64) {
	m := t.cpu.mem
	t.Engine().After(t.cpu.spec.DRAMLatency, func() { m.Store64(a, v) })
}
