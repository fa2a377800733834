package cluster

import (
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// NICCaps says which of the source documents' NIC extensions the node's
// NIC has. The documents' NIC (a Portals 4 NIC with every extension) has
// them all; a present-day NIC has only what it ships (docs/today.md).
type NICCaps struct {
	Model       string `toml:"model" doc:"the NIC modelled: documents (a Portals 4 NIC with every extension the documents propose), connectx7 or cassini" src:"DEFAULT"`
	Triggered   bool   `toml:"triggered_ops" doc:"triggered operations fired by a counter (GPU-TN; Cassini through libfabric FI_TRIGGER; ConnectX has none)" src:"DEFAULT"`
	GPUVerbs    bool   `toml:"gpu_verbs" doc:"GPU threads may write work requests and ring doorbells (GPUrdma, GIO; ConnectX yes, Cassini no)" src:"DEFAULT"`
	Handlers    bool   `toml:"handlers" doc:"packet handlers on the NIC (sPIN); no production NIC runs them" src:"DEFAULT"`
	RemoteTasks bool   `toml:"remote_tasks" doc:"the NIC enqueues kernels on the GPU (XTQ); no production NIC does" src:"DEFAULT"`
}

// documentsNIC is the source documents' NIC: every extension.
func documentsNIC() NICCaps {
	return NICCaps{Model: "documents", Triggered: true, GPUVerbs: true, Handlers: true, RemoteTasks: true}
}

// Validate reports an unknown NIC model.
func (c NICCaps) Validate() error {
	if !slices.Contains([]string{"documents", "connectx7", "cassini"}, c.Model) {
		return fmt.Errorf("nic_caps.model = %q: must be documents, connectx7 or cassini", c.Model)
	}
	return nil
}

// Source is where one value of a preset comes from: Tag SPEC for a vendor
// or facility specification named in Ref, DEFAULT for a value nobody has
// published (Ref "no source"), to be swept.
type Source struct {
	Tag, Ref string
}

// NoSource is the source of a value nobody has published.
var noSource = Source{"DEFAULT", NoSourceRef}

// NoSourceRef is the reference of a present-day value nobody has
// published: a knob to sweep before trusting a result.
const NoSourceRef = "no source"

// pcieGen5x16 is the effective Gen5 x16 rate: 16 lanes × 32 GT/s ×
// 128/130 ÷ 8 = 63.02 GB/s raw, times the TLP efficiency MPS/(MPS+24) at
// MPS = 256 B, as for the other PCIe generations: 57.6 GB/s.
const pcieGen5x16 = unit.Rate(57.6e9)

// hopperLSUBytes is an H100 SM's load/store path per clock: its L1 and
// shared memory return 128 bytes per clock (32 banks of 4 bytes, one
// 32-thread warp's word each; NVIDIA CUDA C++ Programming Guide, compute
// capability 9.0), so a warp-wide 4-byte load or store moves 128 bytes a
// cycle and no more.
const hopperLSUBytes = 128

// H100CX7 returns preset h100-cx7: an HGX H100 node of 8 H100 SXM GPUs,
// each with its own ConnectX-7 400 Gb/s NIC on rail g of a rail-optimised
// fat tree, NVLink 4 through NVSwitch inside the node, 2 × Xeon 8480C
// hosts. Sources: PresetSources("h100-cx7").
func H100CX7() Spec {
	s := GPUTN()
	s.Node = net.NodeSpec{GPUs: 8, Fabric: "switch", Bandwidth: unit.Rate(450e9), Latency: 700 * sim.Nanosecond, CopyEngines: 2, CopyLaunch: 2 * sim.Microsecond, Placement: net.PlaceRails}
	s.Link.Bandwidth, s.Link.Payload = unit.Rate(400e9/8), 4*unit.KiB
	s.Switch.Latency = 200 * sim.Nanosecond
	s.Topology.Kind, s.Topology.Rails, s.Topology.LeafSize = "railfattree", 8, 32
	s.PCIe.Bandwidth = pcieGen5x16
	s.SoC.NICAttach = pcie.AttachPCIe       // a ConnectX-7 card on PCIe Gen5
	s.CPU.L1DMisses, s.CPU.L2Misses = 4, 20 // as before the documents' presets moved to their gem5 APU host
	s.CPU.Cache = cpu.HaswellCache()        // likewise
	s.CPU.Cores, s.CPU.Freq, s.CPU.DRAMBandwidth = 112, 2.0e9, ddrRate(16, 4800)
	s.GPU.Mode, s.GPU.CUs, s.GPU.SIMDs, s.GPU.WaveSize, s.GPU.WavesPerSIMD = "dgpu", 132, 4, 32, 16
	s.GPU.Freq, s.GPU.MemBandwidth, s.GPU.MemLatency = 1.98e9, unit.Rate(3.35e12), 500*sim.Nanosecond
	s.GPU.LDSPerCU, s.GPU.MaxWGSize = 228*unit.KiB, 1024
	s.GPU.ICacheCUs = 0 // no public instruction-cache figures used: fetch not modelled (PresetSources)
	s.GPU.LSUBytes = hopperLSUBytes
	s.GPU.Launch, s.GPU.Teardown = 2500*sim.Nanosecond, 1500*sim.Nanosecond
	s.GPU.L2MemorySide = true // an NVIDIA L2 (PresetSources)
	s.L2.Size = 50 * unit.MiB
	s.Caps = NICCaps{Model: "connectx7", GPUVerbs: true}
	return s
}

// MI300ASS11 returns preset mi300a-ss11: an El Capitan-class node of 4
// MI300A APUs (CPU and GPU on one coherent HBM pool), fully connected by
// Infinity Fabric, one Slingshot-11 Cassini NIC per APU on a dragonfly of
// Rosetta switches. Sources: PresetSources("mi300a-ss11").
func MI300ASS11() Spec {
	s := GPUTN()
	s.Node = net.NodeSpec{GPUs: 4, Fabric: "mesh", Bandwidth: unit.Rate(64e9), Latency: 700 * sim.Nanosecond, CopyEngines: 2, CopyLaunch: 2 * sim.Microsecond, Placement: net.PlaceRails}
	s.Link.Bandwidth, s.Link.Payload = unit.Rate(200e9/8), 4*unit.KiB
	s.Switch.Latency = 350 * sim.Nanosecond
	s.Topology.Kind = "dragonfly"
	s.PCIe.Bandwidth = pcieGen5x16
	s.SoC.NICAttach = pcie.AttachPCIe // a Cassini NIC on PCIe Gen5, not on the APU's fabric
	// Values this preset had before the documents' presets moved to their
	// gem5 APU host and GCN3 residency; present-day values are its own.
	s.CPU.L1DMisses, s.CPU.L2Misses, s.GPU.WavesPerSIMD = 4, 20, 40
	s.CPU.Cache = cpu.HaswellCache()
	s.CPU.Cores, s.CPU.Freq, s.CPU.DRAMBandwidth = 96, 3.7e9, unit.Rate(4*5.3e12)
	s.GPU.Mode, s.GPU.CUs, s.GPU.Freq = "apu", 228, 2.1e9
	s.GPU.LSUBytes = 64 // no source: the GCN vector L1's 64 B per clock per CU, kept for CDNA 3
	s.GPU.MemBandwidth, s.GPU.MemLatency = unit.Rate(5.3e12), 500*sim.Nanosecond
	s.GPU.Launch, s.GPU.Teardown = 2500*sim.Nanosecond, 1500*sim.Nanosecond
	s.L2.Size = 4 * unit.MiB
	s.Caps = NICCaps{Model: "cassini", Triggered: true}
	s.GPU.ICacheCUs = 0 // no public instruction-cache figures used: fetch not modelled (PresetSources)
	return s
}

// GH200 returns preset gh200: an Alps-style node of 4 GH200 superchips
// (Grace CPU and H100 GPU coherent over NVLink-C2C), NVLink between the
// superchips' GPUs, one Slingshot-11 NIC per superchip on a dragonfly.
// Sources: PresetSources("gh200").
func GH200() Spec {
	s := MI300ASS11()
	s.Node = net.NodeSpec{GPUs: 4, Fabric: "switch", Bandwidth: unit.Rate(150e9), Latency: 700 * sim.Nanosecond, CopyEngines: 2, CopyLaunch: 2 * sim.Microsecond, Placement: net.PlaceRails}
	// APU mode (one coherent address space) with NVLink-C2C as its own
	// link: GPU-pool buffers live in each superchip's HBM (the GPU's
	// memory server), host-pool buffers in the Grace's LPDDR5X (the
	// node's host memory server, the four superchips' together); every
	// access from one side to the other's memory crosses the C2C link.
	s.C2C.On = true
	s.CPU.Cores, s.CPU.Freq, s.CPU.DRAMBandwidth = 288, 3.1e9, unit.Rate(4*546e9)
	s.GPU.Mode, s.GPU.CUs, s.GPU.SIMDs, s.GPU.WaveSize, s.GPU.WavesPerSIMD = "apu", 132, 4, 32, 16
	s.GPU.Freq, s.GPU.MemBandwidth = 1.98e9, unit.Rate(4e12)
	s.GPU.LDSPerCU = 228 * unit.KiB
	s.GPU.LSUBytes = hopperLSUBytes
	s.GPU.L2MemorySide = true // an NVIDIA L2 (PresetSources)
	s.L2.Size = 50 * unit.MiB
	return s
}

// GH200CX7 returns preset gh200-cx7: one GH200 superchip and one
// ConnectX-7 200 Gb/s NIC per node, on a fat tree.
func GH200CX7() Spec {
	s := GH200()
	s.Node = oneGPUNode()
	s.CPU.Cores, s.CPU.DRAMBandwidth = 72, unit.Rate(546e9)
	s.Topology = starTopology()
	s.Topology.Kind, s.Topology.LeafSize = "fattree", 32
	s.Switch.Latency = 200 * sim.Nanosecond
	s.Caps = NICCaps{Model: "connectx7", GPUVerbs: true}
	return s
}

// PresentDay lists the presets of machines in service today.
func PresentDay() []string { return []string{"gh200", "gh200-cx7", "h100-cx7", "mi300a-ss11"} }

// PresetSources returns where each value of a present-day preset comes
// from, by parameter name; for the source documents' presets only the
// values whose source differs from the parameter's own tag (the dGPU
// presets' launch costs and HCA pipeline, docPresetSources), nil when none.
func PresetSources(preset string) map[string]Source {
	if m, ok := docPresetSources[preset]; ok {
		return m
	}
	spec := func(ref string) Source { return Source{"SPEC", ref} }
	h100 := "NVIDIA H100 Tensor Core GPU datasheet"
	cx7 := "NVIDIA ConnectX-7 product brief"
	dgx := "NVIDIA DGX H100 system specification"
	mi := "AMD Instinct MI300A data sheet"
	ss := "HPE Slingshot documentation; De Sensi et al., An In-Depth Analysis of the Slingshot Interconnect, SC 2020"
	gh := "NVIDIA GH200 Grace Hopper Superchip datasheet"
	hopperLSU := "NVIDIA CUDA C++ Programming Guide, compute capability 9.0: an SM's L1 and shared memory return 128 bytes per clock (32 banks of 4 bytes)"
	alps := "CSCS Alps hardware documentation"
	common := map[string]Source{
		"pcie.bandwidth":      spec("PCI-SIG PCIe 5.0: 32 GT/s × 16 lanes, 128b/130b, TLP efficiency at 256 B MPS"),
		"soc.nic_attach":      spec("ConnectX-7 and Slingshot-11 Cassini are PCIe Gen5 x16 cards"),
		"gpu.launch":          noSource,
		"gpu.teardown":        noSource,
		"gpu.mem_latency":     noSource,
		"switch.latency":      noSource,
		"node.fabric_latency": noSource,
		"node.copy_engines":   noSource,
		"node.copy_launch":    noSource,
		"nic.cmd_latency":     noSource,
		"nic.verbs_wqe_cost":  noSource,
		"nic.trig_pop":        noSource,
		"link.payload":        spec("InfiniBand / Slingshot maximum transfer unit 4 KiB"),
	}
	out := map[string]Source{}
	switch preset {
	case "h100-cx7":
		out = map[string]Source{
			"node.gpus": spec("HGX H100 8-GPU design, one ConnectX-7 per GPU"), "node.fabric": spec(h100 + ": NVLink 4 through NVSwitch"),
			"node.fabric_bandwidth": spec(h100 + ": 18 NVLink 4 links × 25 GB/s per direction"),
			"link.bandwidth":        spec(cx7 + ": 400 Gb/s per port"),
			"topology.kind":         spec("rail-optimised fat tree of 64-port 400 Gb/s switches (NVIDIA Quantum-2 class)"),
			"topology.rails":        spec("one rail per GPU and NIC"), "topology.leaf_size": spec("64-port switches: 32 down, 32 up"),
			"cpu.cores": spec(dgx + ": 2 × 56 cores"), "cpu.freq": spec(dgx + ": 2.0 GHz base"),
			"cpu.dram_bandwidth": spec("Intel Xeon Platinum 8480C: 8 channels DDR5-4800 per socket"),
			"gpu.cus":            spec(h100 + ": 132 SMs"), "gpu.freq": spec(h100 + ": 1.98 GHz boost"),
			"gpu.mem_bandwidth": spec(h100 + ": 3.35 TB/s HBM3"), "gpu.lds_per_cu": spec(h100 + ": 228 KB shared memory per SM"),
			"gpu_l2.size": spec(h100 + ": 50 MB L2"), "gpu.wave_size": spec("CUDA: 32-thread warps"),
			"gpu.lsu_bytes":  spec(hopperLSU),
			"nic_caps.model": spec(cx7 + ": no triggered operations; GPU-initiated verbs (NVSHMEM IBGDA)"),
		}
	case "mi300a-ss11", "gh200":
		out = map[string]Source{
			"node.gpus":             spec("LLNL El Capitan / Tuolumne node description: 4 APUs, one Cassini NIC each"),
			"node.fabric":           spec(mi + ": Infinity Fabric, fully connected"),
			"node.fabric_bandwidth": noSource,
			"link.bandwidth":        spec(ss + ": 200 Gb/s"), "topology.kind": spec(ss + ": dragonfly, at most 3 switch hops"),
			"topology.radix": spec(ss + ": Rosetta, 64 ports"), "topology.nodes_per_router": spec(ss),
			"topology.routers_per_group": spec(ss), "topology.global_per_router": spec(ss),
			"cpu.cores": spec(mi + ": 24 Zen 4 cores per APU"), "cpu.freq": spec(mi + ": 3.7 GHz boost"),
			"gpu.cus": spec(mi + ": 228 CDNA 3 CUs"), "gpu.mem_bandwidth": spec(mi + ": 5.3 TB/s HBM3, shared by CPU and GPU"),
			"gpu.mode":       spec(mi + ": unified HBM"),
			"gpu.lsu_bytes":  noSource, // the GCN vector L1's 64 B per clock per CU; CDNA 3's is not published in this form
			"nic_caps.model": spec(ss + "; libfabric fi_trigger(3): triggered operations; rocSHMEM install documentation: no GPU-initiated verbs on Cassini"),
		}
		if preset == "gh200" {
			out["node.gpus"] = spec(alps + ": quad GH200 nodes, one Slingshot-11 NIC per superchip")
			out["node.fabric"] = spec(gh + ": NVLink between the superchips' GPUs")
			out["cpu.cores"], out["cpu.freq"] = spec(gh+": 72 Neoverse V2 cores per superchip"), noSource
			out["cpu.dram_bandwidth"] = spec(gh + ": LPDDR5X up to 546 GB/s per superchip, 4 superchips")
			out["c2c.on"], out["c2c.bandwidth"], out["c2c.latency"] = spec(gh+": NVLink-C2C between Grace and Hopper"), spec(gh+": NVLink-C2C 900 GB/s, 450 GB/s per direction"), noSource
			out["gpu.cus"], out["gpu.mem_bandwidth"] = spec(gh+": H100, 132 SMs"), spec(gh+": 4 TB/s HBM3")
			out["gpu.mode"] = spec(gh + ": NVLink-C2C, coherent, one address space")
			out["gpu.lsu_bytes"] = spec(hopperLSU)
		}
	case "gh200-cx7":
		out = map[string]Source{
			"node.gpus": spec(alps + ": variant with one superchip and one ConnectX-7"), "link.bandwidth": spec(cx7 + ": 200 Gb/s"),
			"cpu.cores": spec(gh + ": 72 Neoverse V2 cores"), "cpu.dram_bandwidth": spec(gh + ": LPDDR5X up to 546 GB/s"),
			"c2c.on": spec(gh + ": NVLink-C2C between Grace and Hopper"), "c2c.bandwidth": spec(gh + ": NVLink-C2C 900 GB/s, 450 GB/s per direction"), "c2c.latency": noSource,
			"gpu.cus": spec(gh + ": H100, 132 SMs"), "gpu.mem_bandwidth": spec(gh + ": 4 TB/s HBM3"),
			"gpu.mode": spec(gh + ": NVLink-C2C, coherent"), "nic_caps.model": spec(cx7),
			"gpu.lsu_bytes": spec(hopperLSU),
		}
	default:
		return nil
	}
	if preset == "mi300a-ss11" {
		out["gpu.l2_memory_side"] = Source{"DEFAULT", "false: an AMD GPU; the NVIDIA documents' memory-side L2 is not claimed for it " +
			"(in APU mode the model folds the probe-coherent L2 into memory for word accesses either way)"}
	} else {
		out["gpu.l2_memory_side"] = nvidiaL2
	}
	for k, v := range common {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}
