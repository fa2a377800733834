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
	stats Stats
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
	return &CPU{e: e, name: name, spec: spec, mem: m, dram: dram}
}

// Spec returns the CPU parameters.
func (c *CPU) Spec() Spec { return c.spec }

// Mem returns the node memory the CPU reaches.
func (c *CPU) Mem() *mem.Memory { return c.mem }

// Stats returns the counters of streaming work so far.
func (c *CPU) Stats() Stats { return c.stats }

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

// Compute streams bytes of a reduction or stencil as an OpenMP-style
// parallel region of threads threads (at most one per core): the calling
// thread and threads-1 team threads each stream an equal share, and the
// region ends when the last share is done (hardware.md §10, see stream).
func (t *Thread) Compute(bytes uint64, threads int) {
	if bytes == 0 {
		return
	}
	if threads < 1 {
		panic(fmt.Sprintf("cpu: %s computes with %d threads", t.track, threads))
	}
	threads = min(threads, t.cpu.spec.Cores)
	start := t.Now()
	share := bytes / uint64(threads)
	team := make([]*Thread, 0, threads-1)
	for i := 1; i < threads; i++ {
		n := share
		if i == threads-1 {
			n = bytes - share*uint64(threads-1)
		}
		team = append(team, t.cpu.Spawn(fmt.Sprintf("omp[%d]", i), func(w *Thread) { w.stream(n) }))
	}
	t.stream(share)
	for _, w := range team {
		t.Join(w.Proc)
	}
	t.Span("compute", start)
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
	s := t.cpu.spec
	for bytes > 0 {
		n := min(bytes, streamSlice)
		bytes -= n
		start := t.Now()
		end := max(start+s.Freq.Cycles(float64(n)/s.StreamBPC), t.cpu.dram.Reserve(start, n))
		lines := (n + uint64(s.LineSize) - 1) / uint64(s.LineSize)
		if s.ComputeModel == ModelMLP {
			out := s.Outstanding()
			little := sim.Duration(float64(lines)*float64(s.DRAMLatency)/float64(out) + 0.5)
			end = max(end, start+max(s.DRAMLatency, little))
		}
		t.cpu.stats.StreamBytes += n
		t.cpu.stats.StreamLines += lines
		t.cpu.stats.StreamTime += end - start
		t.SleepUntil(end)
	}
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
