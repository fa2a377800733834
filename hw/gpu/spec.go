package gpu

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes one GPU (the dissertation).
type Spec struct {
	Mode           string     `toml:"mode" doc:"memory mode: apu (shared coherent memory, write-through L2) or dgpu (separate memory, write-back L2)" src:"DOC"`
	CUs            int        `toml:"cus" doc:"compute units" src:"DOC"`
	SIMDs          int        `toml:"simds_per_cu" doc:"SIMD-16 units per CU" src:"DOC"`
	WavesPerSIMD   int        `toml:"waves_per_simd" doc:"resident wavefronts per SIMD (documents' presets: 10, from the dissertation's §5.4.2 480 one-wavefront work-groups filling 12 CUs, GCN3, gem5 apu_se.py --wfs-per-simd 10; the tables' 40 are per CU)" src:"DOC"`
	WaveSize       int        `toml:"wave_size" doc:"work-items per wavefront" src:"DOC"`
	Freq           unit.Freq  `toml:"freq" doc:"GPU clock" src:"DOC"`
	LDSPerCU       unit.Bytes `toml:"lds_per_cu" doc:"LDS scratchpad per CU" src:"DEFAULT"`
	MaxWGSize      int        `toml:"max_wg_size" doc:"maximum work-items per work-group" src:"DEFAULT"`
	Launch         sim.Time   `toml:"launch" doc:"fixed kernel launch overhead" src:"DOC"`
	Teardown       sim.Time   `toml:"teardown" doc:"fixed kernel teardown overhead" src:"DOC"`
	DispatchCycles int        `toml:"dispatch_cycles" doc:"dispatcher cost per work-group" src:"DEFAULT"`
	L1Lines        int        `toml:"l1_lines" doc:"vector L1 capacity in 64 B lines (32 kB)" src:"DOC"`
	L1Cycles       int        `toml:"l1_cycles" doc:"vector L1 hit latency" src:"DOC"`
	L2Cycles       int        `toml:"l2_cycles" doc:"L2 hit latency" src:"DOC"`
	L1InvCycles    int        `toml:"l1_invalidate_cycles" doc:"cost of an L1 invalidate" src:"DEFAULT"`
	L2InvCycles    int        `toml:"l2_invalidate_cycles" doc:"dGPU: base cost of invalidating NIC-shared L2 lines (+1 cycle per line)" src:"DEFAULT"`
	// ICacheCUs and ICacheCycles are the instruction cache a work-group's
	// first instruction is fetched through (the SQC of GCN: with the
	// scalar cache, one per group of CUs). The documents' simulator fetches
	// every wavefront's instructions through it by timing requests (gem5's
	// GCN3 model, src/gpu-compute/fetch_unit.cc: the wavefront cannot issue
	// before its first line is in its fetch buffer), so a kernel no CU of
	// the group has run yet waits for its first line from the L2, or from
	// memory when no group has fetched it either.
	ICacheCUs    int `toml:"icache_cus" doc:"CUs sharing one instruction cache (the SQC): a work-group waits for its first instruction line, an instruction-cache hit (gpu.icache_cycles), or, the first time a kernel runs on the group, a miss that goes on to the L2 (a hit when another group fetched the kernel before: code is never written) or to memory (gpu.l2_cycles + gpu.mem_latency, and the directory on an APU node behind one); later work-groups of the group wait for the same miss; 4 on the documents' GCN3 presets (the dissertation's Tables 4.1, 5.1, 6.1: I-cache per 4 CUs; gem5's GCN3 model fetches each wavefront's instructions through it, fetch_unit.cc); 0 = instruction fetch not modelled (presets whose sources give no instruction cache)" src:"DOC"`
	ICacheCycles int `toml:"icache_cycles" doc:"instruction cache (SQC) hit latency (the dissertation's Tables 4.1, 5.1, 6.1: 12 cycles)" src:"DOC"`
	// MemLatency is the part of a memory access past the L2, not a
	// load-to-use total: the specification gives the memory model's DRAM
	// access latency (80 ns plus bank and bus queueing) apart from the
	// tables' cache latencies, and composes a coherent access as a lookup
	// followed by that DRAM access, as the documents' simulator (gem5
	// Ruby) composes controller latencies with the memory controller's.
	// An access that misses or bypasses the L2 therefore pays the L2
	// lookup first (MissLatency): a miss never costs less than a hit.
	MemLatency sim.Time `toml:"mem_latency" doc:"GPU access to memory past the L2: what a load, atomic, line fill or write-through store pays after the L2 lookup it missed or bypassed, so an access served by memory costs gpu.l2_cycles + this, never less than an L2 hit (80ns on the dissertation's presets and gio: the memory model's DRAM access latency, a default the documents do not give, read as the part after the cache lookups as in the documents' simulator, gem5 Ruby, and as the NIC's coherent access pays it after the directory lookup); a load reads memory half-way through it, when the request reaches memory, and its data returns in the other half (an even split: a choice, the documents give one latency), so a write landing in the second half is seen by the next load" src:"DEFAULT"`
	// L2MemorySide says where NIC writes to the GPU's own memory meet its
	// L2: through it (NVIDIA: the L2 is the memory-side cache of each
	// memory partition, the point where all writers of device memory
	// meet) or past it (AMD dGPUs: writes over the PCIe BAR take the
	// host data path to memory and leave the L2's copies stale). It
	// decides what a poll of a word the NIC writes costs.
	L2MemorySide bool      `toml:"l2_memory_side" doc:"the L2 is a memory-side cache of the GPU's own memory that every write to that memory passes through, a NIC's over PCIe or NVLink-C2C included, so it stays coherent with them: a word load or system-scope load of the GPU's own memory (a CQ or flag poll included) is served by the L2, a hit (gpu.l2_cycles, read half-way through) when the tag model holds its line, a miss (gpu.l2_cycles + gpu.mem_latency) otherwise, which brings the line in; a NIC write updates a line the L2 holds and allocates none (no document says it does); a GPU store of that memory is visible to every agent, the NIC's reads included, once it reaches the L2, so a system-scope acquire or release has only lines of host memory to invalidate or write back. true on NVIDIA GPUs (NVIDIA PTX ISA, Cache Operators: global data is coherent at the L2 level, and ld.cv re-fetches only L2 lines of system memory; Nickolls and Dally, The GPU Computing Era, IEEE Micro 2010: Fermi's L2 connects the SMs with the DRAM interfaces and the PCIe interface); false: NIC writes pass the L2 by and a poll of GPU memory goes to memory (AMD dGPUs: host and NIC writes through the PCIe BAR go by the host data path, HDP, which ROC_SHMEM flushes; the GIO slides: NIC writes do not probe the GPU L2; LLVM AMDGPU Usage, GFX9 memory model: the L2 is kept coherent with other agents only by bypassing it for their ranges)" src:"DEFAULT"`
	MemBandwidth unit.Rate `toml:"mem_bandwidth" doc:"memory bandwidth shared by the CUs (APU: the system DRAM)" src:"DEFAULT"`
	ScalarCycles int       `toml:"scalar_cycles" doc:"GPU cycles per serial scalar instruction" src:"DEFAULT"`
	// L2PortBytes is the CU↔L2 path of bulk accesses; 0 leaves it
	// unlimited (only memory bandwidth and latency count).
	L2PortBytes int `toml:"l2_port_bytes" doc:"bytes per GPU cycle one CU's vector L1 moves to or from the L2 in bulk accesses (StreamLines, gathers): the GCN L1–L2 path, 64 B/clk per CU (AMD GCN architecture whitepaper; the documents give none); 0 = unlimited" src:"DEFAULT"`
	// LSUBytes is one CU's (SM's) load/store path for streaming copies
	// and reductions (WG.Stream); 0 leaves it unlimited, as the source
	// documents' presets have it (their GPU model gives a work-group the
	// whole memory bandwidth).
	LSUBytes        int  `toml:"lsu_bytes" doc:"bytes per GPU cycle one CU's (SM's) load/store units move in streaming copies and reductions (a work-group's bulk traffic, WG.Stream): a work-group streams at most this rate, the work-groups of one CU share it, so k CUs stream at min(k x rate, memory bandwidth); 0 = unlimited (the source documents' presets)" src:"DEFAULT"`
	CooperativeOnly bool `toml:"cooperative" doc:"reject kernels whose work-groups cannot all be resident at once" src:"DEFAULT"`
	// WaitPoll is the command processor's re-read period of a GDS
	// wait-value word: the documents say the CP waits on a value between
	// kernels but not how often it looks (a firmware choice).
	WaitPoll sim.Time `toml:"cp_wait_poll" doc:"GDS: how often the command processor re-reads the word of a stream wait-value operation; a change is seen at the next re-read, one memory latency later (100ns: a choice, the documents give no period)" src:"DEFAULT"`
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	if s.Mode != "apu" && s.Mode != "dgpu" {
		errs = append(errs, fmt.Errorf("gpu.mode = %q: must be apu or dgpu", s.Mode))
	}
	pos := []struct {
		name string
		v    int
		max  int
	}{
		{"gpu.cus", s.CUs, 1024}, {"gpu.simds_per_cu", s.SIMDs, 64}, {"gpu.waves_per_simd", s.WavesPerSIMD, 1024},
		{"gpu.wave_size", s.WaveSize, 1024}, {"gpu.max_wg_size", s.MaxWGSize, 1 << 16}, {"gpu.l1_lines", s.L1Lines, 1 << 20},
		{"gpu.scalar_cycles", s.ScalarCycles, 1 << 20},
	}
	for _, p := range pos {
		if p.v < 1 || p.v > p.max {
			errs = append(errs, fmt.Errorf("%s = %d: must be in [1, %d]", p.name, p.v, p.max))
		}
	}
	nonneg := []struct {
		name string
		v    int
	}{{"gpu.dispatch_cycles", s.DispatchCycles}, {"gpu.l1_cycles", s.L1Cycles}, {"gpu.l2_cycles", s.L2Cycles},
		{"gpu.l1_invalidate_cycles", s.L1InvCycles}, {"gpu.l2_invalidate_cycles", s.L2InvCycles},
		{"gpu.icache_cycles", s.ICacheCycles}}
	for _, p := range nonneg {
		if p.v < 0 {
			errs = append(errs, fmt.Errorf("%s = %d: must be ≥ 0", p.name, p.v))
		}
	}
	if s.ICacheCUs < 0 || s.ICacheCUs > 1024 {
		errs = append(errs, fmt.Errorf("gpu.icache_cus = %d: must be in [0, 1024] (0 = instruction fetch not modelled)", s.ICacheCUs))
	}
	if s.LSUBytes < 0 || s.LSUBytes > 1<<16 {
		errs = append(errs, fmt.Errorf("gpu.lsu_bytes = %d: must be in [0, 65536] (0 = unlimited)", s.LSUBytes))
	}
	if s.L2PortBytes < 0 || s.L2PortBytes > 1<<16 {
		errs = append(errs, fmt.Errorf("gpu.l2_port_bytes = %d: must be in [0, 65536] (0 = unlimited)", s.L2PortBytes))
	}
	if s.Freq <= 0 {
		errs = append(errs, fmt.Errorf("gpu.freq = %v: must be > 0", s.Freq))
	}
	if s.MemBandwidth <= 0 {
		errs = append(errs, fmt.Errorf("gpu.mem_bandwidth = %v: must be > 0", s.MemBandwidth))
	}
	errs = append(errs, sim.Negatives(sim.Named{Name: "gpu.launch", T: s.Launch}, sim.Named{Name: "gpu.teardown", T: s.Teardown},
		sim.Named{Name: "gpu.mem_latency", T: s.MemLatency})...)
	if s.WaitPoll <= 0 || s.WaitPoll > sim.Millisecond {
		errs = append(errs, fmt.Errorf("gpu.cp_wait_poll = %v: must be in (0, 1ms]", s.WaitPoll))
	}
	if s.LDSPerCU < 0 {
		errs = append(errs, fmt.Errorf("gpu.lds_per_cu = %v: must be ≥ 0", s.LDSPerCU))
	}
	return errors.Join(errs...)
}

// Cycles returns the duration of n GPU cycles.
func (s Spec) Cycles(n int) sim.Duration { return s.Freq.Cycles(float64(n)) }

// MissLatency returns the latency of a GPU access that memory serves: the
// L2 lookup that misses (or that an L2-uncacheable or system-scope access
// passes through), gpu.l2_cycles, then the access past the L2,
// gpu.mem_latency. It is never less than an L2 hit.
func (s Spec) MissLatency() sim.Duration { return s.Cycles(s.L2Cycles) + s.MemLatency }

// cycleMemo is the last Spec.Cycles a GPU's VALU computed: the
// work-groups of a kernel ask for the same count again and again, and the
// conversion is a float division and a rounding.
type cycleMemo struct {
	n int
	d sim.Duration
}

// cycles is g.spec.Cycles(n), remembering the last answer.
func (g *GPU) cycles(n int) sim.Duration {
	if m := &g.cyc; m.n == n && n != 0 {
		return m.d
	}
	d := g.spec.Cycles(n)
	g.cyc = cycleMemo{n, d}
	return d
}
