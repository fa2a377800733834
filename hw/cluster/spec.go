package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/hw/cp"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec is the whole hardware description of a cluster: every node is built
// from the same CPU, GPU, NIC and PCIe specs, joined by the network.
type Spec struct {
	Link     net.LinkSpec     `toml:"link"`
	Switch   net.SwitchSpec   `toml:"switch"`
	Topology net.TopologySpec `toml:"topology"`
	Node     net.NodeSpec     `toml:"node"`
	Network  net.NetworkSpec  `toml:"network"`
	PCIe     pcie.Spec        `toml:"pcie"`
	SoC      pcie.SoCSpec     `toml:"soc"`
	C2C      pcie.C2CSpec     `toml:"c2c"`
	CPU      cpu.Spec         `toml:"cpu"`
	GPU      gpu.Spec         `toml:"gpu"`
	NIC      nic.Spec         `toml:"nic"`
	Spin     spin.Spec        `toml:"spin"`
	L2       gpu.L2Spec       `toml:"gpu_l2"`
	CP       cp.Spec          `toml:"cp"`
	Caps     NICCaps          `toml:"nic_caps"`
}

// Validate reports every invalid field of every component.
func (s Spec) Validate() error {
	return errors.Join(s.Link.Validate(), s.Switch.Validate(), s.Topology.Validate(), s.Node.Validate(), s.validateRails(), s.Network.Validate(),
		s.PCIe.Validate(), s.SoC.Validate(), s.C2C.Validate(), s.CPU.Validate(), s.GPU.Validate(), s.NIC.Validate(), s.Spin.Validate(),
		s.L2.Validate(), s.CP.Validate(), s.Caps.Validate())
}

// pcieGen4x16 is the effective Gen4 x16 rate: 16 GT/s × 16 lanes × 128/130
// ÷ 8 ≈ 31.51 GB/s raw, times the TLP efficiency MPS/(MPS+24) at MPS = 256 B
// (the dissertation) = 28.807 GB/s, rounded to 28.8 GB/s so the printed
// parameter is exact.
const pcieGen4x16 = unit.Rate(28.8e9)

// ddrRate returns channels × 8 B × transfer rate (MT/s).
func ddrRate(channels int, mts float64) unit.Rate {
	return unit.Rate(float64(channels) * 8 * mts * 1e6)
}

// GPUTN returns preset gputn (dissertation Table 6.1, the dissertation's Table 6.1):
// APU-style node, 24-CU GCN3 at 1.5 GHz, 1.5 µs launch and teardown,
// 100 ns / 100 Gbps star, 16 trigger entries.
func GPUTN() Spec {
	return Spec{
		Link:     net.LinkSpec{Bandwidth: unit.Rate(100e9 / 8), Latency: 0, Payload: 2 * unit.KiB, Header: 64},
		Switch:   net.SwitchSpec{Latency: 100 * sim.Nanosecond},
		Topology: starTopology(),
		Node:     oneGPUNode(),
		Network:  net.NetworkSpec{Model: net.ModelPacket, FlowBundle: net.BundleExact},
		PCIe: pcie.Spec{Latency: 250 * sim.Nanosecond, Overhead: 10 * sim.Nanosecond, Gap: 4 * sim.Nanosecond,
			Bandwidth: pcieGen4x16, MPS: 256, MaxReadReq: 512, P2PReadPenalty: 1},
		// The APU's NIC hangs on the coherent system directory (the
		// dissertation's §3.1); pcie.DefaultSoC names each value's source.
		SoC: pcie.DefaultSoC(),
		// No chip-to-chip link: the seeds' CPU and GPU share one memory
		// (APU) or sit on PCIe (dGPU). Its values are GH200's, unused.
		C2C: pcie.DefaultC2C(),
		CPU: cpu.Spec{Cores: 8, Freq: 4e9, IPC: 2.0, Width: 8, StreamBPC: 16, DRAMLatency: 80 * sim.Nanosecond,
			DRAMBandwidth: ddrRate(8, 2133), CacheHit: 500 * sim.Picosecond,
			// 16 outstanding requests per core, no prefetcher: the Ruby
			// sequencer's max_outstanding_requests of the AMD APU model the
			// dissertation names (gem5 src/mem/ruby/system/Sequencer.py;
			// its CorePair controller, configs/ruby/GPU_VIPER.py), not
			// gem5's classic 4 L1D / 20 L2 MSHRs.
			ComputeModel: cpu.ModelMLP, L1DMisses: 16, L2Misses: 16, LineSize: 64, PrefetchDepth: 16,
			TimeSlice: sim.Millisecond, ContextSwitch: 2 * sim.Microsecond, WakeLatency: 5 * sim.Microsecond,
			// The tables' host caches as gem5 Ruby's CorePair runs them:
			// two cores per L2, the L3 in the directory.
			Cache: cpu.CorePairCache()},
		// 10 wavefronts per SIMD: the dissertation's §5.4.2 fills the 12-CU
		// GPU with 480 one-wavefront work-groups (10 per SIMD), as GCN3 and
		// the APU script's --wfs-per-simd 10 (gem5 configs/example/apu_se.py);
		// the tables' "40 waves per SIMD" are per CU.
		GPU: gpu.Spec{Mode: "apu", CUs: 24, SIMDs: 4, WavesPerSIMD: 10, WaveSize: 64, Freq: 1.5e9,
			LDSPerCU: 64 * unit.KiB, MaxWGSize: 1024, Launch: 1500 * sim.Nanosecond, Teardown: 1500 * sim.Nanosecond,
			DispatchCycles: 100, ICacheCUs: 4, ICacheCycles: 12, L1Lines: 512, L1Cycles: 12, L2Cycles: 100, L1InvCycles: 16, L2InvCycles: 500,
			MemLatency: 80 * sim.Nanosecond, MemBandwidth: ddrRate(8, 2133), ScalarCycles: 4, L2PortBytes: 64, WaitPoll: 100 * sim.Nanosecond},
		NIC: nic.Spec{CmdLatency: 100 * sim.Nanosecond, CmdSize: 64, MatchCost: 5 * sim.Nanosecond,
			TrigEvalCost: 10 * sim.Nanosecond, EventSize: 64, EQSize: 1024, TrigFIFODepth: 256,
			TrigPop: 2 * sim.Nanosecond, TrigMaxEntries: 16, TrigLookup: "assoc",
			VerbsEngines: 16, VerbsWQECost: 10 * sim.Nanosecond, VerbsMaxSGE: 16, VerbsRNRRetry: 3, VerbsRNRTimer: 10 * sim.Microsecond,
			XtqLookup: 5 * sim.Nanosecond, XtqRewrite: 20 * sim.Nanosecond, XtqTableSize: 64,
			// A full GPU queue drops the task and Portals events tell both
			// sides (the dissertation's §4.1.2); no NIC retry is described.
			XtqFullPolicy: "drop",
			XtqRetry:      sim.Microsecond, XtqHoldDepth: 8,
			XtqTables: "nic", XtqCacheEntries: 16, XtqCacheWays: 4},
		Spin: spin.DefaultSpec(),
		L2:   gpu.L2Spec{Size: unit.MiB, Ways: 16},
		CP:   cp.DefaultSpec(),
		Caps: documentsNIC(),
	}
}

// XTQ returns preset xtq (dissertation Table 4.1): 8 4-wide cores at 3 GHz,
// DDR3-1600, 24 CUs at 1 GHz, and the optimistic launch model (no fixed
// overheads).
func XTQ() Spec {
	s := GPUTN()
	s.CPU.Freq, s.CPU.IPC, s.CPU.Width, s.CPU.DRAMBandwidth = 3e9, 1.5, 4, ddrRate(8, 1600)
	s.GPU.Freq, s.GPU.MemBandwidth = 1e9, ddrRate(8, 1600)
	s.GPU.Launch, s.GPU.Teardown = 0, 0
	return s
}

// CompNet returns preset compnet (dissertation Table 5.1): 16 cores at 4 GHz,
// DDR4-2400, 12 CUs at 1.5 GHz, dGPU memory mode.
func CompNet() Spec {
	s := GPUTN()
	s.CPU.Cores, s.CPU.DRAMBandwidth = 16, ddrRate(8, 2400)
	s.GPU.CUs, s.GPU.MemBandwidth, s.GPU.Mode = 12, ddrRate(8, 2400), "dgpu"
	// 10 wavefronts per SIMD (40 per CU), not the table's 40: the
	// dissertation's 480 simultaneous 64-item work-groups "fully saturate
	// the 12 CU system" (§5.4.2), 480 / (12 × 4) = 10, gem5's GCN3 default
	// (--wfs-per-simd 10).
	s.GPU.WavesPerSIMD = 10
	// The ComP-Net paper's §5.1: the NIC reaches queues and data through
	// PCIe in every design, GHN_APU included.
	s.SoC.NICAttach = pcie.AttachPCIe
	return s
}

// CompNetPaper returns preset compnet_paper (ComP-Net PACT'18 Table 1): as
// compnet with a 16 kB V-cache and 150-cycle L2.
func CompNetPaper() Spec {
	s := CompNet()
	s.GPU.L1Lines, s.GPU.L2Cycles = 256, 150
	return s
}

// pcieGen4x32 is the effective Gen4 x32 rate of the spin preset: 32 lanes ×
// 16 GT/s × 128/130 ÷ 8 = 63.02 GB/s raw, times the full-TLP efficiency
// MPS/(MPS+24) at MPS = 256 B = 57.61 GB/s, rounded to 57.6 GB/s. The sPIN
// DMA engine charges each shorter TLP its 24 B overhead on top
// (spin.tlp_header), so small writes pay the packet overheads the
// documents model.
const pcieGen4x32 = unit.Rate(57.6e9)

// Spin returns preset spin (the SC'19 paper, the documents' SST + gem5
// setup): 200 Gb/s links with 2 KiB payloads, PCIe Gen4 x32, an i7-4770
// host at 3.4 GHz for the unpack baseline, and a sPIN NIC with 16 HPUs at
// 800 MHz — the count of the datatype experiments (the SC'19 paper; the
// documents' default of 32 is spin.hpus=32). The PCIe gap of 2 ns (500 M
// TLPs/s) is a [DEFAULT] for x32: twice the x16 message rate.
func Spin() Spec {
	s := GPUTN()
	s.Link.Bandwidth = unit.Rate(200e9 / 8)
	s.PCIe.Bandwidth, s.PCIe.Gap = pcieGen4x32, 2*sim.Nanosecond
	s.SoC.NICAttach = pcie.AttachPCIe // a PCIe Gen4 x32 NIC (the sPIN paper's set-up)
	s.GPU.ICacheCUs = 0               // no GPU kernels in the sPIN experiments: fetch not modelled
	s.CPU.Cores, s.CPU.Freq = 4, 3.4e9
	// The documents' measurement host (an Intel i7-4770, Haswell): dual
	// channel DDR3-1600 (Intel ARK), 36 cycles + 57 ns to DRAM (7-cpu.com's
	// i7-4770 measurement), 10 L1D fill buffers and 16 L2 miss slots
	// (superqueue), the L2 streamer on and up to 20 lines ahead (Intel
	// Optimization Reference Manual, Haswell); the caches of HaswellCache.
	s.CPU.DRAMBandwidth, s.CPU.DRAMLatency = ddrRate(2, 1600), 68*sim.Nanosecond
	s.CPU.L1DMisses, s.CPU.L2Misses, s.CPU.Prefetch, s.CPU.PrefetchDepth = 10, 16, true, 20
	s.CPU.Cache = cpu.HaswellCache()
	// 32 HPUs unless an experiment states otherwise (the sPIN datatype
	// paper's simulation set-up).
	s.Spin.HPUs = 32
	return s
}

// PULP returns preset pulp (the SC'19 paper): the spin preset's node,
// network and PCIe with the PULP accelerator as the HPUs — 4 clusters × 8
// RISC-V cores at 1 GHz on L1/L2 scratchpads with cluster DMAs
// (spin.hpu_model = pulp, spin.pulp.*). The datatype structures keep the
// 6 MiB of M_NIC and the 256 KiB packet buffer, both inside its 8 MiB L2.
func PULP() Spec {
	s := Spin()
	s.Spin.Model = spin.ModelPULP
	s.Spin.HPUs = s.Spin.PULP.TotalCores()
	s.Spin.HPUFreq = 1e9
	return s
}

// pcieGen3x16 is the effective Gen3 x16 rate of the K40c, Connect-IB and
// MI-25 attachments: 16 lanes × 8 GT/s × 128/130 ÷ 8 = 15.75 GB/s raw,
// times MPS/(MPS+24) at MPS = 256 B = 14.40 GB/s.
const pcieGen3x16 = unit.Rate(14.4e9)

// GPURDMA returns preset gpurdma (the GPUrdma paper): an NVIDIA K40c (15 SMs,
// 32-thread warps; 4 schedulers × 16 warps, 745 MHz base clock, 288 GB/s
// GDDR5 and a 400 ns memory latency are [DEFAULT] K40c data-sheet values)
// in dGPU mode, a Connect-IB HCA on FDR InfiniBand (56 Gb/s), both PCIe
// Gen3 x16 behind a PLX PEX8747 switch (no peer-to-peer read penalty).
func GPURDMA() Spec {
	s := GPUTN()
	s.Link.Bandwidth = unit.Rate(56e9 / 8)
	s.PCIe.Bandwidth, s.PCIe.P2PReadPenalty = pcieGen3x16, 1
	s.SoC.NICAttach = pcie.AttachPCIe // a Connect-IB HCA behind a PLX switch
	s.GPU.Mode, s.GPU.CUs, s.GPU.WaveSize, s.GPU.WavesPerSIMD = "dgpu", 15, 32, 16
	s.GPU.ICacheCUs = 0 // the GPUrdma paper gives no instruction cache: fetch not modelled
	s.GPU.Freq, s.GPU.MemBandwidth, s.GPU.MemLatency = 745e6, unit.Rate(288e9), 400*sim.Nanosecond
	s.GPU.LDSPerCU, s.GPU.L1Lines = 48*unit.KiB, 256
	// An NVIDIA L2: the HCA's writes into GPU memory pass through it
	// (PresetSource), so a poll of a CQ there is served by the L2.
	s.GPU.L2MemorySide = true
	hcaPipeline(&s, 320*sim.Nanosecond)
	// Every device access to host memory crosses the PLX switch and its
	// upstream port (PresetSource: the PEX 8747 product brief).
	s.PCIe.SwitchLatency = 100 * sim.Nanosecond
	dgpuLaunch(&s)
	// The host of this real-hardware study keeps the dissertation's
	// classic-cache misses in flight and private L2s (not the documents'
	// gem5 APU host).
	s.CPU.L1DMisses, s.CPU.L2Misses = 4, 20
	s.CPU.Cache = cpu.HaswellCache()
	return s
}

// dgpuLaunch sets the discrete GPUs' launch and teardown (PresetSource
// gives the sources): 3 µs to launch an empty kernel, 6 µs from its end
// to the host seeing it, 9 µs per synchronized kernel.
func dgpuLaunch(s *Spec) {
	s.GPU.Launch, s.GPU.Teardown = 3*sim.Microsecond, 6*sim.Microsecond
}

// hcaPipeline sets the bounds of the FDR HCA's pipeline (Connect-IB on
// preset gpurdma, the same generation on gio; docs/gnn.md): 16 WQEs in
// flight per QP, tag-limited DMA reads, and the extra completion latency
// of a peer-to-peer read of GPU memory.
func hcaPipeline(s *Spec, p2p sim.Time) {
	s.NIC.VerbsQPInflight = 16
	s.NIC.ReadTags = 10
	s.PCIe.P2PReadLatency = p2p
}

// GIO returns preset gio (the GIO slides): up to 4 nodes of one x86 host
// and one AMD Radeon MI-25 (dGPU with HBM; 64 CUs at 1.5 GHz and 484 GB/s
// are the [DEFAULT] values of §7) on 56 Gb/s InfiniBand, PCIe Gen3 x16.
func GIO() Spec {
	s := GPUTN()
	s.Link.Bandwidth = unit.Rate(56e9 / 8)
	s.PCIe.Bandwidth = pcieGen3x16
	s.SoC.NICAttach = pcie.AttachPCIe // an InfiniBand HCA on PCIe Gen3 x16
	s.GPU.Mode, s.GPU.CUs, s.GPU.MemBandwidth = "dgpu", 64, unit.Rate(484e9)
	s.GPU.ICacheCUs = 0      // the GIO slides give no instruction cache: fetch not modelled
	s.L2.Size = 4 * unit.MiB // §7 [DEFAULT] MI-25 L2: its reuse decides the L2-off cost of §5.3
	hcaPipeline(&s, 0)
	dgpuLaunch(&s)
	// The host of this real-hardware study keeps the dissertation's
	// classic-cache misses in flight and private L2s (not the documents'
	// gem5 APU host).
	s.CPU.L1DMisses, s.CPU.L2Misses = 4, 20
	s.CPU.Cache = cpu.HaswellCache()
	return s
}

var presets = map[string]func() Spec{
	"spin": Spin, "pulp": PULP, "gpurdma": GPURDMA, "gio": GIO,
	"gputn": GPUTN, "xtq": XTQ, "compnet": CompNet, "compnet_paper": CompNetPaper,
	"h100-cx7": H100CX7, "mi300a-ss11": MI300ASS11, "gh200": GH200, "gh200-cx7": GH200CX7,
}

// PresetNames lists the built-in presets in sorted order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the named built-in preset.
func Preset(name string) (Spec, error) {
	f, ok := presets[name]
	if !ok {
		return Spec{}, fmt.Errorf("unknown preset %q: must be one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

// Where a GPU's L2 meets the NIC's writes to its memory (gpu.l2_memory_side).
var (
	nvidiaL2 = Source{"DEFAULT", "true: an NVIDIA L2 is a memory-side cache that every write to device memory passes through, " +
		"PCIe peers' included (NVIDIA PTX ISA, Cache Operators: \"global data is coherent at the L2 level\", and ld.cv discards and " +
		"re-fetches only L2 lines of system memory, never of device memory; J. Nickolls and W. J. Dally, \"The GPU Computing Era\", " +
		"IEEE Micro 2010: Fermi's L2 connects the SMs with the DRAM interfaces and the PCIe interface and caches both; NVIDIA " +
		"GPUDirect RDMA documentation, Synchronization and Memory Ordering: a CUDA copy reads back what a peer wrote through the BAR)"}
	amdL2 = Source{"DEFAULT", "false: host and NIC writes through an AMD GPU's PCIe BAR reach its memory by the host data path (HDP), " +
		"not the L2 (the GIO slides: NIC writes do not probe the GPU L2; ROC_SHMEM flushes the HDP; LLVM AMDGPU Usage, GFX9 " +
		"memory model: the L2 is kept coherent with other agents only by bypassing it for their ranges)"}
)

// docPresetSources lists, for the source documents' presets, the
// parameters whose source differs from their field's tag. The dGPU presets' launch costs are not in their
// papers (the GPU-TN table's APU values are documented only for that
// machine), so they are [DEFAULT] values from external measurements.
var docPresetSources = map[string]map[string]Source{
	"gpurdma": {
		"gpu.launch": {"DEFAULT", "Kepler-class empty-kernel launch: about 3 µs per asynchronous launch " +
			"(M. Boyer, \"CUDA Kernel Overhead\", University of Virginia: ~334 000 empty kernels/s)"},
		"gpu.teardown": {"DEFAULT", "empty kernel's completion to the host seeing it: a synchronized empty kernel costs about three " +
			"asynchronous ones in the same measurement (M. Boyer, \"CUDA Kernel Overhead\"), launch + teardown = 9 µs"},
		"pcie.p2p_read_latency": {"DEFAULT", "a BAR read of GPU memory is served from GDDR5 (gpu.mem_latency 400 ns) instead of host DRAM (80 ns)"},
		"nic.read_tags":         {"DEFAULT", "fitted to the GPUrdma paper's naive peak bandwidth (Fig 3, 1 MB); no public value for the HCA's outstanding DMA reads"},
		"pcie.switch_latency": {"DEFAULT", "the PLX PEX 8747's maximum cut-through latency, x16 to x16 (PLX, PEX 8747 product brief: " +
			"100 ns), paid by every access of the GPU or the HCA to host memory (CQ polls and fence reads of host memory, WQE fetches " +
			"from it, CQE writes into it); peer-to-peer transactions turn around in the switch"},
		"nic.verbs_qp_inflight": {"DEFAULT", "per-QP outstanding requests of a Connect-IB (max_qp_rd_atom = 16 in ibv_devinfo)"},
		// The HCA's command processing, engine count and per-WQE engine
		// time are not published for any Mellanox HCA: knobs, printed
		// with every result.
		"nic.cmd_latency":    noSource,
		"nic.verbs_engines":  noSource,
		"nic.verbs_wqe_cost": noSource,
		// The one-way latency through the K40c's or the HCA's link and the
		// root complex is not published either (the qpcpu-cqcpu entry's
		// miss rests on it, docs/validation.md).
		"pcie.latency":          noSource,
		"pcie.max_read_request": {"DEFAULT", "the PCI Express Base Specification's reset value of Max_Read_Request_Size, 512 B; the paper gives none"},
		"nic.verbs_blueflame":   {"DEFAULT", "the GPUrdma paper does not mention BlueFlame: every WQE is fetched by DMA"},
		"gpu.l2_memory_side":    nvidiaL2,
	},
	"gio": {
		"gpu.launch": {"DEFAULT", "ROCm-era Vega10 hipLaunchKernel of an empty kernel: no verified public measurement; " +
			"set to the order of a discrete GPU's driver launch (M. Boyer, \"CUDA Kernel Overhead\": ~3 µs) plus dispatch; sweep it (docs/gnn.md)"},
		"gpu.teardown": {"DEFAULT", "empty kernel's completion to hipStreamSynchronize returning: the order of a synchronized " +
			"empty kernel on a discrete GPU (M. Boyer, \"CUDA Kernel Overhead\"); sweep it (docs/gnn.md)"},
		"pcie.p2p_read_latency": {"DEFAULT", "0: a BAR read of GPU memory is served from HBM, whose latency the preset sets equal to host DRAM's (gpu.mem_latency = cpu.dram_latency = 80 ns)"},
		"nic.read_tags":         {"DEFAULT", "the FDR HCA's value of preset gpurdma"},
		"nic.verbs_qp_inflight": {"DEFAULT", "the FDR HCA's value of preset gpurdma"},
		"nic.cmd_latency":       noSource,
		"nic.verbs_engines":     noSource,
		"nic.verbs_wqe_cost":    noSource,
		"pcie.latency":          noSource,
		"pcie.max_read_request": {"DEFAULT", "the PCI Express Base Specification's reset value of Max_Read_Request_Size, 512 B; the slides give none"},
		"gpu.l2_memory_side":    amdL2,
		"pcie.switch_latency":   {"DEFAULT", "0: the GIO slides name no PCIe switch between the GPU and the NIC"},
		"nic.verbs_blueflame":   {"DEFAULT", "the GIO slides do not mention BlueFlame: every WQE is fetched by DMA, as on preset gpurdma"},
	},
}

// validateRails refuses a rail-optimised fat tree whose rail count is not
// the node's GPU (and NIC) count: NIC g of every node is on rail g. On
// the other kinds, which do not read them, the rail-tree and dragonfly
// knobs are still held to their ranges (net.TopologySpec.Validate checks
// them only under the kind that reads them), so that a value no topology
// could take (topology.rails = -1, topology.routing = "ü") is refused
// whatever the kind, not ignored until the kind changes.
func (s Spec) validateRails() error {
	t := s.Topology
	var errs []error
	railsOK := t.Rails >= 1 && t.Rails <= 64
	if t.Kind == "railfattree" && railsOK && s.Node.GPUs >= 1 && s.Node.GPUs <= 64 && t.Rails != s.Node.GPUs {
		// Compared only when both are in range (each names its own
		// problem otherwise), and without returning: it hid a bad
		// dragonfly knob or routing.
		errs = append(errs, fmt.Errorf("topology.rails = %d: must equal node.gpus = %d (one NIC per GPU, NIC g on rail g)", t.Rails, s.Node.GPUs))
	}
	if t.Kind != "railfattree" && !railsOK {
		errs = append(errs, fmt.Errorf("topology.rails = %d: must be in [1, 64] (read by a railfattree only)", t.Rails))
	}
	if t.Kind == "dragonfly" {
		return errors.Join(errs...)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"nodes_per_router", t.NodesPerRouter}, {"routers_per_group", t.RoutersPerGroup}, {"global_per_router", t.GlobalPerRouter}, {"radix", t.Radix}} {
		if f.v < 1 || f.v > 1024 {
			errs = append(errs, fmt.Errorf("topology.%s = %d: must be in [1, 1024] (read by a dragonfly only)", f.name, f.v))
		}
	}
	switch t.Routing {
	case "minimal", "valiant", "ugal":
	default:
		errs = append(errs, fmt.Errorf("topology.routing = %q: must be minimal, valiant or ugal (read by a dragonfly only)", t.Routing))
	}
	return errors.Join(errs...)
}

// starTopology is the source documents' network: one switch. The other
// kinds' knobs hold their defaults: a fat tree of 16-node leaves, and a
// dragonfly of Slingshot Rosetta switches (De Sensi et al., "An In-Depth
// Analysis of the Slingshot Interconnect", SC 2020: 64 ports, 16 to
// endpoints, 31 local, 17 global).
func starTopology() net.TopologySpec {
	return net.TopologySpec{Kind: "star", LeafSize: 16, InOrder: true, Rails: 1,
		NodesPerRouter: 16, RoutersPerGroup: 32, GlobalPerRouter: 17, Radix: 64, Routing: "minimal"}
}

// oneGPUNode is the source documents' node: one GPU (or APU), one NIC.
func oneGPUNode() net.NodeSpec {
	return net.NodeSpec{GPUs: 1, Fabric: "switch", Bandwidth: unit.Rate(450e9), Latency: 700 * sim.Nanosecond, CopyEngines: 2, CopyLaunch: 2 * sim.Microsecond, Placement: net.PlaceRails}
}
