package pulp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes the PULP accelerator's clusters and memories (the dissertation
// §12.2). The core clock is the sPIN side's spin.hpu_freq.
type Spec struct {
	Clusters     int        `toml:"clusters" doc:"clusters of RISC-V cores" src:"DOC"`
	Cores        int        `toml:"cores" doc:"cores per cluster" src:"DOC"`
	L1Banks      int        `toml:"l1_banks" doc:"L1 scratchpad banks per cluster (2 per core)" src:"DOC"`
	L1BankSize   unit.Bytes `toml:"l1_bank_size" doc:"bytes per L1 bank" src:"DOC"`
	L1Width      unit.Bytes `toml:"l1_width" doc:"bytes an L1 bank moves per cycle (one 32-bit word)" src:"DEFAULT"`
	L1Latency    int        `toml:"l1_latency_cycles" doc:"L1 access latency" src:"DOC"`
	L2Banks      int        `toml:"l2_banks" doc:"L2 scratchpad banks" src:"DOC"`
	L2BankSize   unit.Bytes `toml:"l2_bank_size" doc:"bytes per L2 bank" src:"DOC"`
	L2Width      unit.Bytes `toml:"l2_width" doc:"bytes an L2 bank port moves per cycle (256 bit)" src:"DOC"`
	L2Latency    int        `toml:"l2_latency_cycles" doc:"L2 access base latency; queueing at the bank comes on top" src:"DEFAULT"`
	L2Interleave unit.Bytes `toml:"l2_interleave" doc:"L2 address interleaving granule over the banks (one packet slot)" src:"DEFAULT"`
	DMAWidth     unit.Bytes `toml:"dma_width" doc:"cluster DMA bytes per cycle in each direction (64 bit)" src:"DOC"`
	DMASetup     int        `toml:"dma_setup_cycles" doc:"cycles a cluster DMA channel spends per transfer (descriptor programming and decode, address generation); 11 fitted to calibration entry d1-fig9c-pulp-256B" src:"DEFAULT"`
	DMAQueue     int        `toml:"dma_queue" doc:"outbound transfers a cluster DMA holds at once (issued, source not yet read); a core issuing into a full queue stalls; 0 = unbounded" src:"DEFAULT"`
	PortWidth    unit.Bytes `toml:"port_width" doc:"bytes per cycle of the network input port and the PCIe output port (256 bit)" src:"DOC"`
}

// DefaultSpec returns the design of the SC'19 paper: 4 clusters × 8
// cores, 16 × 64 KiB L1 banks per cluster (1-cycle), 2 × 4 MiB L2 banks
// with 256-bit ports and 10 cycles base latency, a 64-bit/cycle DMA per
// cluster and direction, 256-bit input and output ports. The [DEFAULT]
// values: 4-byte L1 bank words (32-bit cores); L2 interleaved over its
// banks in 2 KiB granules, so consecutive packet slots alternate banks;
// 11 setup cycles per DMA transfer, fitted to the calibration entry
// d1-fig9c-pulp-256B (the sPIN datatype paper's PULP bandwidth test
// reaches 192 Gbit/s at 256 B blocks: 32 beats of 8 B over 32 + 11
// cycles), the order of a core programming a transfer's descriptor
// registers; 16 outbound transfers queued per cluster DMA (a command FIFO
// per engine, as in PULP's cluster DMA).
func DefaultSpec() Spec {
	return Spec{Clusters: 4, Cores: 8, L1Banks: 16, L1BankSize: 64 * unit.KiB, L1Width: 4, L1Latency: 1,
		L2Banks: 2, L2BankSize: 4 * unit.MiB, L2Width: 32, L2Latency: 10, L2Interleave: 2 * unit.KiB,
		DMAWidth: 8, DMASetup: 11, DMAQueue: 16, PortWidth: 32}
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	in := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("spin.pulp.%s = %d: must be in [%d, %d]", name, v, lo, hi))
		}
	}
	in("clusters", s.Clusters, 1, 1024)
	in("cores", s.Cores, 1, 1024)
	in("l1_banks", s.L1Banks, 1, 4096)
	in("l1_latency_cycles", s.L1Latency, 0, 1<<16)
	in("l2_banks", s.L2Banks, 1, 1024)
	in("l2_latency_cycles", s.L2Latency, 0, 1<<16)
	in("dma_setup_cycles", s.DMASetup, 0, 1<<16)
	in("dma_queue", s.DMAQueue, 0, 1<<20)
	bytesIn := func(name string, v, lo, hi unit.Bytes) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("spin.pulp.%s = %v: must be in [%v, %v]", name, v, lo, hi))
		}
	}
	bytesIn("l1_bank_size", s.L1BankSize, 64, unit.GiB)
	bytesIn("l2_bank_size", s.L2BankSize, 64, unit.GiB)
	bytesIn("l1_width", s.L1Width, 1, 4096)
	bytesIn("l2_width", s.L2Width, 1, 4096)
	bytesIn("l2_interleave", s.L2Interleave, 1, unit.GiB)
	bytesIn("dma_width", s.DMAWidth, 1, 4096)
	bytesIn("port_width", s.PortWidth, 1, 4096)
	if s.L1Banks > 0 && s.Cores > 0 && s.L1Banks < s.Cores {
		errs = append(errs, fmt.Errorf("spin.pulp.l1_banks = %d: must be ≥ spin.pulp.cores = %d (each core owns L1 banks)", s.L1Banks, s.Cores))
	}
	return errors.Join(errs...)
}

// TotalCores returns the accelerator's core count (clusters × cores).
func (s Spec) TotalCores() int { return s.Clusters * s.Cores }
