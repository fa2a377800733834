package spin

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/pulp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes a sPIN NIC's processing side (the SC'19 paper):
// the HPUs, the NIC memory and packet buffer, the DMA engine's view of
// PCIe, and the Portals-iovec engine of the baseline (the SC'19 paper).
type Spec struct {
	HPUs           int        `toml:"hpus" doc:"handler processing units (NIC cores); 32 unless an experiment states otherwise (the datatype studies of Fig 8, 12, 13b and 14 state 16: ddtbench.hpus_stated)" src:"DOC"`
	HPUFreq        unit.Freq  `toml:"hpu_freq" doc:"HPU clock (ARM Cortex-A15 class)" src:"DOC"`
	MemBandwidth   unit.Rate  `toml:"mem_bandwidth" doc:"NIC memory bandwidth, shared by the inbound engine, the HPUs and the DMA engine" src:"DOC"`
	MemLatency     int        `toml:"mem_latency_cycles" doc:"NIC memory access latency in HPU cycles (k)" src:"DOC"`
	MemChannels    int        `toml:"mem_channels" doc:"NIC memory channels (concurrent accesses); 0 = 2 × hpus" src:"DOC"`
	MemSize        unit.Bytes `toml:"mem_size" doc:"M_NIC: NIC memory for datatype structures (dataloops, segments, checkpoints, descriptors)" src:"DEFAULT"`
	PktBuffer      unit.Bytes `toml:"pkt_buffer" doc:"B_pkt: packet buffer; the inbound engine stalls (back-pressure) when it is full" src:"DEFAULT"`
	InvokeCycles   int        `toml:"invoke_cycles" doc:"per handler invocation: HER dispatch and argument setup" src:"DEFAULT"`
	DMAIssueCycles int        `toml:"dma_issue_cycles" doc:"HPU cycles to issue one DMA request" src:"DEFAULT"`
	TLPHeader      unit.Bytes `toml:"tlp_header" doc:"PCIe per-TLP overhead (header, framing, CRC) charged by the DMA engine on every TLP (the sPIN datatypes paper models PCIe packet overheads without giving them; 24 B: the TLP header, sequence number and LCRC of a 4-DW header TLP, a choice)" src:"DEFAULT"`
	IovecEntries   int        `toml:"iovec_entries" doc:"v: iovec entries the Portals-iovec NIC holds at a time (scatter-gather limit)" src:"DOC"`
	IovecFetch     sim.Time   `toml:"iovec_fetch" doc:"PCIe read latency to fetch the next v iovec entries" src:"DOC"`
	IovecEntrySize unit.Bytes `toml:"iovec_entry_size" doc:"bytes per iovec entry (address, length)" src:"DEFAULT"`
	Model          string     `toml:"hpu_model" doc:"HPU model: arm (cores on a flat NIC memory, the SC'19 paper) or pulp (clusters with L1/L2 scratchpads and cluster DMAs, the SC'19 paper's PULP design; spin.pulp.* apply and spin.mem_bandwidth, mem_latency_cycles, mem_channels do not)" src:"DOC"`
	PULP           pulp.Spec  `toml:"pulp"`
}

// DefaultSpec returns the `spin` preset's NIC side (the SC'19 paper):
// 32 HPUs at 800 MHz, 50 GiB/s 1-cycle NIC memory with 2 × HPUs channels,
// 6 MiB for datatypes, a 256 KiB packet buffer, 50-cycle invocations and
// 20-cycle DMA issue (the SC'19 paper), 24 B per TLP, v = 32 iovec entries
// fetched with a 500 ns PCIe read.
func DefaultSpec() Spec {
	return Spec{
		HPUs: 32, HPUFreq: 800e6, MemBandwidth: unit.Rate(50 * float64(unit.GiB)), MemLatency: 1, MemChannels: 0,
		MemSize: 6 * unit.MiB, PktBuffer: 256 * unit.KiB, InvokeCycles: 50, DMAIssueCycles: 20, TLPHeader: 24,
		IovecEntries: 32, IovecFetch: 500 * sim.Nanosecond, IovecEntrySize: 16,
		Model: ModelARM, PULP: pulp.DefaultSpec(),
	}
}

// HPU models (Spec.Model).
const (
	ModelARM  = "arm"  // HPUs on the flat NIC memory (the SC'19 paper)
	ModelPULP = "pulp" // the PULP accelerator's memories and DMAs (the SC'19 paper)
)

// Channels returns the NIC memory channel count (MemChannels, or 2 × HPUs).
func (s Spec) Channels() int {
	if s.MemChannels > 0 {
		return s.MemChannels
	}
	return 2 * s.HPUs
}

// Cycles returns the duration of n HPU cycles.
func (s Spec) Cycles(n int) sim.Duration { return s.HPUFreq.Cycles(float64(n)) }

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	bad := func(f string, args ...any) { errs = append(errs, fmt.Errorf(f, args...)) }
	if s.HPUs < 1 || s.HPUs > 4096 {
		bad("spin.hpus = %d: must be in [1, 4096]", s.HPUs)
	}
	if s.HPUFreq <= 0 || s.HPUFreq > 100e9 {
		bad("spin.hpu_freq = %v: must be in (0, 100GHz]", s.HPUFreq)
	}
	if s.MemBandwidth <= 0 {
		bad("spin.mem_bandwidth = %v: must be > 0", s.MemBandwidth)
	}
	if s.MemLatency < 0 || s.MemLatency > 1<<20 {
		bad("spin.mem_latency_cycles = %d: must be in [0, 1048576]", s.MemLatency)
	}
	if s.MemChannels < 0 || s.MemChannels > 1<<16 {
		bad("spin.mem_channels = %d: must be in [0, 65536] (0 = 2 × hpus)", s.MemChannels)
	}
	if s.MemSize < 0 || s.MemSize > unit.GiB {
		bad("spin.mem_size = %v: must be in [0, 1GiB]", s.MemSize)
	}
	if s.PktBuffer < 64 || s.PktBuffer > unit.GiB {
		bad("spin.pkt_buffer = %v: must be in [64B, 1GiB]", s.PktBuffer)
	}
	if s.InvokeCycles < 0 {
		bad("spin.invoke_cycles = %d: must be ≥ 0", s.InvokeCycles)
	}
	if s.DMAIssueCycles < 0 {
		bad("spin.dma_issue_cycles = %d: must be ≥ 0", s.DMAIssueCycles)
	}
	if s.TLPHeader < 0 || s.TLPHeader > 256 {
		bad("spin.tlp_header = %v: must be in [0B, 256B]", s.TLPHeader)
	}
	if s.IovecEntries < 1 || s.IovecEntries > 1<<20 {
		bad("spin.iovec_entries = %d: must be in [1, 1048576]", s.IovecEntries)
	}
	if s.IovecFetch < 0 {
		bad("spin.iovec_fetch = %v: must be ≥ 0", s.IovecFetch)
	}
	if s.IovecEntrySize < 1 || s.IovecEntrySize > 256 {
		bad("spin.iovec_entry_size = %v: must be in [1B, 256B]", s.IovecEntrySize)
	}
	switch s.Model {
	case ModelARM:
	case ModelPULP:
		if err := s.PULP.Validate(); err != nil {
			errs = append(errs, err)
		} else if s.HPUs > s.PULP.TotalCores() {
			bad("spin.hpus = %d: the pulp model has spin.pulp.clusters × spin.pulp.cores = %d cores; must be ≤ that", s.HPUs, s.PULP.TotalCores())
		} else if l2 := unit.Bytes(s.PULP.L2Banks) * s.PULP.L2BankSize; s.MemSize+s.PktBuffer > l2 {
			bad("spin.mem_size + spin.pkt_buffer = %v: the pulp model keeps both in L2 (spin.pulp.l2_banks × spin.pulp.l2_bank_size = %v); must be ≤ that", s.MemSize+s.PktBuffer, l2)
		}
	default:
		bad("spin.hpu_model = %q: must be arm or pulp", s.Model)
	}
	return errors.Join(errs...)
}
