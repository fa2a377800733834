package spin

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Costs are the software costs of datatype processing (the SC'19 paper,
// §7): the handler steps in HPU cycles (§7.3; the invocation and DMA-issue
// cycles are the NIC's, spin.invoke_cycles and spin.dma_issue_cycles),
// the checkpoint size and ε of the Δr model, and the host unpack baseline
// (§7.1).
type Costs struct {
	MPITStart       int        `toml:"mpit_start_cycles" doc:"MPITypes processing-function start" src:"DEFAULT"`
	LevelCycles     int        `toml:"level_cycles" doc:"per stack level descended or ascended at a handler's start" src:"DEFAULT"`
	BlockCycles     int        `toml:"block_cycles" doc:"per contiguous block found (general handlers)" src:"DEFAULT"`
	SkipCycles      int        `toml:"skip_cycles" doc:"per block skipped in catch-up (leaf arithmetic)" src:"DEFAULT"`
	VecSetup        int        `toml:"vec_setup_cycles" doc:"specialized vector handler: setup" src:"DEFAULT"`
	VecBlock        int        `toml:"vec_block_cycles" doc:"specialized vector handler: per block (DMA issue extra)" src:"DEFAULT"`
	IdxSearch       int        `toml:"idx_search_cycles" doc:"specialized index handlers: per binary-search level" src:"DEFAULT"`
	IdxBlock        int        `toml:"idx_block_cycles" doc:"specialized index handlers: per block (DMA issue extra)" src:"DEFAULT"`
	DataloopRead    unit.Bytes `toml:"dataloop_read" doc:"dataloop bytes a general handler reads per stack level at its start (one loop's fields: kind, count, sizes, extents, stride, child); NIC memory on arm, L2 on pulp" src:"DEFAULT"`
	BlockLoopRead   unit.Bytes `toml:"block_dataloop_read" doc:"PULP: L2 bytes a general handler reads per contiguous block it finds or skips (the leaf dataloop's parameters; the dataloops stay in L2), through the L2 banks" src:"DEFAULT"`
	Checkpoint      unit.Bytes `toml:"checkpoint_size" doc:"C: checkpoint (and segment) size in NIC memory" src:"DOC"`
	Epsilon         float64    `toml:"epsilon" doc:"ε: allowed scheduling-overhead fraction when choosing Δr" src:"DOC"`
	MasterCopies    bool       `toml:"rwcp_master_copies" doc:"RW-CP keeps a master copy of every checkpoint (NIC memory ×2)" src:"DEFAULT"`
	BufferAware     bool       `toml:"buffer_aware_interval" doc:"OURS, not the paper's: also cap Δr at B_pkt/P when a handler is slower than a packet arrival, so all P sequences start (a deviation; false = the paper's three constraints only)" src:"DEFAULT"`
	HostModel       string     `toml:"host_model" doc:"host unpack, pack and checkpoint creation: sim (executed on the simulated host core, cpu.cache.*, cold caches) or affine (regions·host_region + m/host_copy_cold, for comparison)" src:"DOC"`
	HostRegionInstr int        `toml:"host_region_instr" doc:"host datatype engine: bookkeeping instructions per contiguous region besides its loads and stores (the engine's vector kernel loop: two pointer increments, a count decrement, a branch)" src:"DEFAULT"`
	HostRegion      sim.Time   `toml:"host_region" doc:"host_model = affine only: time per contiguous region (t_region)" src:"DEFAULT"`
	HostCopyCold    unit.Rate  `toml:"host_copy_cold" doc:"host_model = affine only: cold-cache copy bandwidth (BW_copy_cold)" src:"DEFAULT"`
	DescriptorWord  unit.Bytes `toml:"descriptor_word" doc:"bytes per offset, length or prefix-sum entry of specialized descriptors (the NIC memory they take; the specialized handlers read them from there at their start)" src:"DEFAULT"`
	NICPolicy       string     `toml:"nic_mem_policy" doc:"when a receive's structures do not fit the free NIC memory: evict (idle resident types, lowest priority then least recently used) or fallback (host unpack); the sPIN datatypes paper describes both policies and names no default: evict is a choice" src:"DEFAULT"`
	Interval        unit.Bytes `toml:"interval" doc:"RO-CP/RW-CP checkpoint interval Δr, a multiple of the packet payload; 0 = chosen by the model of the SC'19 paper" src:"RUN"`
}

// DefaultCosts returns the constants of the SC'19 paper.
func DefaultCosts() Costs {
	return Costs{MPITStart: 60, LevelCycles: 25, BlockCycles: 45, SkipCycles: 12, VecSetup: 20, VecBlock: 8,
		IdxSearch: 10, IdxBlock: 10, DataloopRead: 64, BlockLoopRead: 8, Checkpoint: 612, Epsilon: 0.2, MasterCopies: true,
		HostModel: HostSim, HostRegionInstr: 4, HostRegion: 15 * sim.Nanosecond, HostCopyCold: 6e9, DescriptorWord: 8, NICPolicy: PolicyEvict}
}

// Validate reports every invalid field.
func (c Costs) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"mpit_start_cycles", c.MPITStart}, {"level_cycles", c.LevelCycles}, {"block_cycles", c.BlockCycles},
		{"skip_cycles", c.SkipCycles}, {"vec_setup_cycles", c.VecSetup}, {"vec_block_cycles", c.VecBlock},
		{"idx_search_cycles", c.IdxSearch}, {"idx_block_cycles", c.IdxBlock}} {
		if f.v < 0 || f.v > 1<<20 {
			errs = append(errs, fmt.Errorf("ddt.%s = %d: must be in [0, 1048576]", f.name, f.v))
		}
	}
	if c.DataloopRead < 0 || c.DataloopRead > unit.MiB {
		errs = append(errs, fmt.Errorf("ddt.dataloop_read = %v: must be in [0B, 1MiB]", c.DataloopRead))
	}
	if c.BlockLoopRead < 0 || c.BlockLoopRead > unit.KiB {
		errs = append(errs, fmt.Errorf("ddt.block_dataloop_read = %v: must be in [0B, 1KiB]", c.BlockLoopRead))
	}
	if c.Checkpoint < 8 || c.Checkpoint > unit.MiB {
		errs = append(errs, fmt.Errorf("ddt.checkpoint_size = %v: must be in [8B, 1MiB]", c.Checkpoint))
	}
	if !(c.Epsilon > 0 && c.Epsilon <= 10) {
		errs = append(errs, fmt.Errorf("ddt.epsilon = %v: must be in (0, 10]", c.Epsilon))
	}
	if c.HostModel != HostSim && c.HostModel != HostAffine {
		errs = append(errs, fmt.Errorf("ddt.host_model = %q: must be sim or affine", c.HostModel))
	}
	if c.HostRegionInstr < 0 || c.HostRegionInstr > 1<<20 {
		errs = append(errs, fmt.Errorf("ddt.host_region_instr = %d: must be in [0, 1048576]", c.HostRegionInstr))
	}
	if c.HostRegion < 0 {
		errs = append(errs, fmt.Errorf("ddt.host_region = %v: must be ≥ 0", c.HostRegion))
	}
	if c.HostCopyCold <= 0 {
		errs = append(errs, fmt.Errorf("ddt.host_copy_cold = %v: must be > 0", c.HostCopyCold))
	}
	if c.Interval < 0 || c.Interval > unit.GiB {
		errs = append(errs, fmt.Errorf("ddt.interval = %v: must be in [0, 1GiB] (0 = chosen by the model)", c.Interval))
	}
	if c.NICPolicy != PolicyEvict && c.NICPolicy != PolicyFallback {
		errs = append(errs, fmt.Errorf("ddt.nic_mem_policy = %q: must be evict or fallback", c.NICPolicy))
	}
	if c.DescriptorWord < 1 || c.DescriptorWord > 64 {
		errs = append(errs, fmt.Errorf("ddt.descriptor_word = %v: must be in [1B, 64B]", c.DescriptorWord))
	}
	return errors.Join(errs...)
}
