package cpu

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Compute models selectable with cpu.compute_model.
const (
	// ModelMLP bounds a streaming core by the cache misses it keeps in
	// flight (Little's law, the dissertation).
	ModelMLP = "mlp"
	// ModelFlat streams at stream_bytes_per_cycle per core, for comparison
	// with the earlier model only.
	ModelFlat = "flat"
)

// Spec describes the host CPU of a node and its memory.
type Spec struct {
	Cores         int       `toml:"cores" doc:"host cores" src:"DOC"`
	Freq          unit.Freq `toml:"freq" doc:"core clock" src:"DOC"`
	IPC           float64   `toml:"ipc" doc:"effective instructions per cycle of runtime software (the dissertation)" src:"DEFAULT"`
	Width         int       `toml:"width" doc:"issue width of a core (dissertation Table 5.1: 8-wide OOO); with cpu.ipc it fixes the stall cycles per instruction of runtime software, from which the CP's speed follows (0: not modelled)" src:"DOC"`
	StreamBPC     float64   `toml:"stream_bytes_per_cycle" doc:"issue-bound streaming rate per core (load/store ports); the whole rate when cpu.compute_model = flat" src:"DEFAULT"`
	DRAMLatency   sim.Time  `toml:"dram_latency" doc:"unloaded DRAM access latency, the memory's part of a core's miss: a miss pays cpu.cache.l3_path (the way to the last-level cache it missed; on the documents' presets the system directory's lookup, as the NIC's coherent access pays soc.dir_latency) and then this (a poll that misses pays both; a streaming miss waits at least both)" src:"DEFAULT"`
	DRAMBandwidth unit.Rate `toml:"dram_bandwidth" doc:"peak DRAM bandwidth (channels × 8B × transfer rate)" src:"DEFAULT"`
	CacheHit      sim.Time  `toml:"cache_hit" doc:"a poll that hits its cache line (unchanged word)" src:"DEFAULT"`

	// The streaming model (the dissertation). The defaults are gem5's stock
	// classic caches, which the documents' hosts used: 4 L1D MSHRs, 20 L2
	// MSHRs, no prefetcher.
	ComputeModel  string     `toml:"compute_model" doc:"host streaming model: mlp (misses in flight / loaded latency, capped by DRAM) or flat (stream_bytes_per_cycle per core)" src:"DEFAULT"`
	L1DMisses     int        `toml:"l1d_misses" doc:"outstanding L1D misses per core (MSHRs): the demand misses a streaming core keeps in flight (documents' presets: 16, the Ruby sequencer's max_outstanding_requests of gem5's AMD APU model, src/mem/ruby/system/Sequencer.py)" src:"DEFAULT"`
	L2Misses      int        `toml:"l2_misses" doc:"outstanding L2 misses per core (MSHRs): caps demand plus prefetch misses in flight (documents' presets: 16, the same per-core request limit)" src:"DEFAULT"`
	LineSize      unit.Bytes `toml:"line_size" doc:"cache line: the bytes one miss brings" src:"DEFAULT"`
	Prefetch      bool       `toml:"prefetch" doc:"L2 stream prefetcher on: it keeps prefetch_depth lines in flight ahead of the demand misses" src:"DEFAULT"`
	PrefetchDepth int        `toml:"prefetch_depth" doc:"lines the prefetcher runs ahead when cpu.prefetch is on" src:"DEFAULT"`

	// Cores as a shared resource: threads beyond the cores, or pinned to a
	// busy one, share it round robin.
	TimeSlice     sim.Time `toml:"time_slice" doc:"scheduler time slice: a thread sharing a core runs at most this long before the next one gets it (Linux CFS minimum granularity order)" src:"DEFAULT"`
	ContextSwitch sim.Time `toml:"context_switch" doc:"core time to put a different thread on a core (kernel path plus cache and TLB refill)" src:"DEFAULT"`
	WakeLatency   sim.Time `toml:"wake_latency" doc:"blocking wait: from the awaited write to the thread being runnable again (interrupt, handler, scheduler wake-up)" src:"DEFAULT"`

	// Cache is the core's cache hierarchy, used where a walk runs address
	// by address (Walk: the host's datatype pack and unpack).
	Cache CacheSpec `toml:"cache"`
}

// MinIPC is the smallest instructions-per-cycle a core (cpu.ipc) or
// command processor (cp.ipc) may be given: 100 cycles per instruction,
// slower than a core stalled on DRAM at every instruction (a DRAM access
// is about 80 ns, 100-200 cycles, and cores overlap several).
const MinIPC = 0.01

// minStreamBPC is the smallest cpu.stream_bytes_per_cycle: a hundredth of
// a byte per cycle (tens of MB/s at GHz clocks), below any memory system.
const minStreamBPC = 0.01

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	if s.Cores < 1 || s.Cores > 1024 {
		errs = append(errs, fmt.Errorf("cpu.cores = %d: must be in [1, 1024]", s.Cores))
	}
	if s.Freq <= 0 {
		errs = append(errs, fmt.Errorf("cpu.freq = %v: must be > 0", s.Freq))
	}
	// The floors (minIPC, minStreamBPC) are far below any core's, and
	// keep one instruction or byte within the clock: cpu.ipc = 1e-320 (a
	// denormal) ran and failed with the clock's overflow (exit 1).
	ipcOK := s.IPC >= MinIPC && s.IPC <= 16
	if !ipcOK {
		errs = append(errs, fmt.Errorf("cpu.ipc = %v: must be in [%v, 16]", s.IPC, MinIPC))
	}
	switch {
	case ipcOK && (s.Width < 0 || s.Width > 64 || s.Width > 0 && float64(s.Width) < s.IPC):
		errs = append(errs, fmt.Errorf("cpu.width = %d: must be 0 or in [cpu.ipc, 64] (a core retires at most its width per cycle)", s.Width))
	case !ipcOK && (s.Width < 0 || s.Width > 64):
		// Its own range, without the bad cpu.ipc: a line naming cpu.ipc
		// is dropped as following from cpu.ipc's (cmd dropDerived).
		errs = append(errs, fmt.Errorf("cpu.width = %d: must be 0 or in [1, 64]", s.Width))
	}
	if !(s.StreamBPC >= minStreamBPC && s.StreamBPC <= 1024) {
		errs = append(errs, fmt.Errorf("cpu.stream_bytes_per_cycle = %v: must be in [%v, 1024]", s.StreamBPC, minStreamBPC))
	}
	errs = append(errs, sim.Negatives(sim.Named{Name: "cpu.dram_latency", T: s.DRAMLatency}, sim.Named{Name: "cpu.cache_hit", T: s.CacheHit})...)
	if s.DRAMBandwidth <= 0 {
		errs = append(errs, fmt.Errorf("cpu.dram_bandwidth = %v: must be > 0", s.DRAMBandwidth))
	}
	errs = append(errs, s.validateStreaming()...)
	if err := s.Cache.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (s Spec) validateStreaming() []error {
	var errs []error
	if s.ComputeModel != ModelMLP && s.ComputeModel != ModelFlat {
		errs = append(errs, fmt.Errorf("cpu.compute_model = %q: must be %s or %s", s.ComputeModel, ModelMLP, ModelFlat))
	}
	if s.L1DMisses < 1 || s.L1DMisses > 4096 {
		errs = append(errs, fmt.Errorf("cpu.l1d_misses = %d: must be in [1, 4096]", s.L1DMisses))
	}
	if s.L2Misses < 1 || s.L2Misses > 4096 {
		errs = append(errs, fmt.Errorf("cpu.l2_misses = %d: must be in [1, 4096]", s.L2Misses))
	}
	if s.LineSize < 1 || s.LineSize > 4096 {
		errs = append(errs, fmt.Errorf("cpu.line_size = %v: must be in [1B, 4KiB]", s.LineSize))
	}
	if s.TimeSlice < sim.Nanosecond || s.TimeSlice > sim.Second {
		errs = append(errs, fmt.Errorf("cpu.time_slice = %v: must be in [1ns, 1s]", s.TimeSlice))
	}
	if s.ContextSwitch < 0 || s.ContextSwitch > sim.Second {
		errs = append(errs, fmt.Errorf("cpu.context_switch = %v: must be in [0s, 1s]", s.ContextSwitch))
	}
	if s.WakeLatency < 0 || s.WakeLatency > sim.Second {
		errs = append(errs, fmt.Errorf("cpu.wake_latency = %v: must be in [0s, 1s]", s.WakeLatency))
	}
	if s.PrefetchDepth < 0 || s.PrefetchDepth > 4096 {
		errs = append(errs, fmt.Errorf("cpu.prefetch_depth = %d: must be in [0, 4096]", s.PrefetchDepth))
	}
	return errs
}

// StallCPI returns the cycles per instruction runtime software loses to
// stalls (branch mispredictions, dependences, cache misses) on top of the
// 1/width of issue: 1/ipc − 1/width. It is the property of the software
// that the core-width model (IPCAt) carries to another core; 0 without a
// width.
func (s Spec) StallCPI() float64 {
	if s.Width <= 0 {
		return 0
	}
	return max(0, 1/s.IPC-1/float64(s.Width))
}

// IPCAt is the instruction-count model of a core: a core of issue width
// width runs software whose stall CPI is stall at 1 / (1/width + stall)
// instructions per cycle. The host's cpu.ipc and cpu.width fix stall; the
// CP's width gives its IPC.
func IPCAt(width int, stall float64) float64 { return 1 / (1/float64(width) + stall) }

// Instr returns the time to run n instructions of runtime software.
func (s Spec) Instr(n int) sim.Duration { return s.Freq.Cycles(float64(n) / s.IPC) }

// Outstanding returns the cache misses one streaming core keeps in flight:
// its L1D MSHRs, plus what the prefetcher runs ahead when it is on, never
// more than the L2 MSHRs that track them all.
func (s Spec) Outstanding() int {
	n := s.L1DMisses
	if s.Prefetch {
		n += s.PrefetchDepth
	}
	return min(n, max(s.L2Misses, s.L1DMisses))
}

// CoreStreamRate returns one core's streaming rate in bytes per second on
// an unloaded memory: the issue bound, or under the mlp model the smaller
// of it and Little's law, outstanding misses × line / miss latency.
func (s Spec) CoreStreamRate() float64 {
	issue := s.StreamBPC * float64(s.Freq)
	miss := s.MissLatency()
	if s.ComputeModel == ModelFlat || miss <= 0 {
		return issue
	}
	return min(issue, float64(s.Outstanding())*float64(s.LineSize)/miss.Seconds())
}

// MissLatency returns the latency of a core's access that memory serves:
// the way to the last-level cache that missed (cpu.cache.l3_path: on the
// documents' presets the system directory's lookup, where their L3 sits),
// then the DRAM access, cpu.dram_latency. It is what the NIC's coherent
// access to the same line pays through the same directory (its
// soc.dir_latency, then the memory), and never less than an L3 hit's path.
// Where the L3 latency is a load-to-use total (cpu.cache.l3_path = 0),
// cpu.dram_latency is the whole miss, as before.
func (s Spec) MissLatency() sim.Duration { return s.Cache.L3Path + s.DRAMLatency }
