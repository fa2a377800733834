package cpu

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes the host CPU of a node and its memory.
type Spec struct {
	Cores         int       `toml:"cores" doc:"host cores" src:"DOC"`
	Freq          unit.Freq `toml:"freq" doc:"core clock" src:"DOC"`
	IPC           float64   `toml:"ipc" doc:"effective instructions per cycle of runtime software (gpu-networking.md §6)" src:"DEFAULT"`
	StreamBPC     float64   `toml:"stream_bytes_per_cycle" doc:"streaming reduction/stencil throughput per core" src:"DEFAULT"`
	DRAMLatency   sim.Time  `toml:"dram_latency" doc:"DRAM access latency (a poll that misses pays it)" src:"DEFAULT"`
	DRAMBandwidth unit.Rate `toml:"dram_bandwidth" doc:"peak DRAM bandwidth (channels × 8B × transfer rate)" src:"DEFAULT"`
	CacheHit      sim.Time  `toml:"cache_hit" doc:"a poll that hits its cache line (unchanged word)" src:"DEFAULT"`
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	if s.Cores < 1 || s.Cores > 1024 {
		errs = append(errs, fmt.Errorf("cpu.cores = %d: must be in [1, 1024]", s.Cores))
	}
	if s.Freq <= 0 {
		errs = append(errs, fmt.Errorf("cpu.freq = %v: must be > 0", s.Freq))
	}
	if !(s.IPC > 0 && s.IPC <= 16) {
		errs = append(errs, fmt.Errorf("cpu.ipc = %v: must be in (0, 16]", s.IPC))
	}
	if !(s.StreamBPC > 0 && s.StreamBPC <= 1024) {
		errs = append(errs, fmt.Errorf("cpu.stream_bytes_per_cycle = %v: must be in (0, 1024]", s.StreamBPC))
	}
	if s.DRAMLatency < 0 || s.CacheHit < 0 {
		errs = append(errs, fmt.Errorf("cpu.dram_latency/cache_hit = %v/%v: must be ≥ 0", s.DRAMLatency, s.CacheHit))
	}
	if s.DRAMBandwidth <= 0 {
		errs = append(errs, fmt.Errorf("cpu.dram_bandwidth = %v: must be > 0", s.DRAMBandwidth))
	}
	return errors.Join(errs...)
}

// Instr returns the time to run n instructions of runtime software.
func (s Spec) Instr(n int) sim.Duration { return s.Freq.Cycles(float64(n) / s.IPC) }
