package params

import (
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// The source documents, as the references name them.
const (
	diss    = "the dissertation"
	xtqCh   = diss + ", XTQ chapter"
	compCh  = diss + ", ComP-Net chapter"
	tnCh    = diss + ", GPU-TN chapter"
	compnet = "the ComP-Net paper (PACT'18)"
	ddtPap  = "the sPIN datatypes paper"
	rdmaPap = "the GPUrdma paper"
	gioSl   = "the GIO slides"
)

// fieldRefs is where each DOC parameter's value comes from, on the
// documents' presets, when the field carries no ref tag of its own: the
// document and the place in it. A value a preset's documents do not state
// is DEFAULT on that preset (documentSources). TestDocTagsHaveReferences
// fails on a DOC parameter without one.
var fieldRefs = map[string]string{
	"accumulate.cpu_threads": xtqCh + " §4.3.1: the CPU baselines use the application thread for message progress and active message execution",
	"reduce.cpu_threads":     xtqCh + " §4.3.1: the CPU baselines use the application thread for message progress and active message execution",
	"shmem.peer_access":      "NVSHMEM Best Practices Guide, Device APIs on Peer-to-Peer Transport: P2P transfers move data with the GPU's SMs over NVLink; ROC_SHMEM documentation: intra-node IPC transport",
	"link.bandwidth":         "dissertation Tables 4.1, 5.1, 6.1: 100 Gbps",
	"switch.latency":         "dissertation Tables 4.1, 5.1, 6.1: 100 ns",
	"topology.kind":          "dissertation Tables 4.1, 5.1, 6.1: star, single switch",
	"soc.nic_attach":         diss + " §3.1: the APU's NIC sits on the coherent system directory; " + compnet + " §5.1: the NIC reaches the queues over PCIe",
	"pcie.p2p_read_penalty":  rdmaPap + ": the PLX PEX8747 switch shows no read/write asymmetry (1); Intel switches read at about half rate (0.5)",
	"cpu.cores":              "dissertation Table 6.1: 8 cores",
	"cpu.freq":               "dissertation Table 6.1: 4 GHz",
	"cpu.width":              "dissertation Table 6.1: 8-wide OOO",
	"gpu.mode":               "dissertation Table 6.1: APU-style node",
	"gpu.cus":                "dissertation Table 6.1: 24 CUs",
	"gpu.simds_per_cu":       "dissertation Table 6.1: 4 SIMD-16 engines per CU",
	"gpu.waves_per_simd":     diss + " §5.4.2 and " + compnet + " §5.2: 480 work-groups of one wavefront saturate the 12-CU GPU, 10 per SIMD (the tables' 40 per SIMD read as per CU)",
	"gpu.wave_size":          "dissertation Tables 4.1, 5.1: 64-lane wavefronts (GCN3)",
	"gpu.freq":               "dissertation Table 6.1: GCN3 at 1.5 GHz",
	"gpu.launch":             "dissertation Table 6.1: 1.5 µs launch",
	"gpu.teardown":           "dissertation Table 6.1: 1.5 µs teardown",
	"gpu.l1_lines":           "dissertation Table 6.1: 32 kB V-cache per CU",
	"gpu.l1_cycles":          "dissertation Table 6.1: V-cache 12 cycles",
	"gpu.l2_cycles":          "dissertation Table 6.1: GPU L2 100 cycles",
	"gpu_l2.size":            "dissertation Table 6.1: 1 MB GPU L2",
	"gpu_l2.ways":            "dissertation Table 6.1: 16-way GPU L2",
	"nic.cmd_size":           compnet + " §5.1: one 64 B command packet per network operation",
	"nic.trig_max_entries":   tnCh + " (§6.1.3): at most 16 simultaneously active trigger entries",
	"nic.trig_lookup":        tnCh + ": 16 entries, so a fully associative tag match",
	"nic.xtq_full_policy":    xtqCh + ": a task that finds its queue full is dropped and reported by an event, with no retry",
	"nic.xtq_table_size":     xtqCh + ": 64 kernel/function registrations were enough for every code studied",
	"nic.xtq_tables":         xtqCh + ": the prototype holds the lookup tables on the NIC",
	"cp.cores":               "dissertation Table 5.1: CP of 2 cores",
	"cp.freq":                "dissertation Table 5.1: CP at 2 GHz",
	"cp.width":               "dissertation Table 5.1: 2-wide OOO x86 CP",
	"cp.l1_lines":            "dissertation Table 5.1: CP D-cache 32 kB",
	"cp.l1_cycles":           "dissertation Table 5.1: CP D-cache 4 cycles",

	"spin.hpus":                   ddtPap + ": 32 HPUs per NIC unless an experiment states otherwise",
	"spin.hpu_freq":               ddtPap + ": ARM Cortex-A15-class HPUs at 800 MHz",
	"spin.mem_bandwidth":          ddtPap + ": NIC memory 50 GiB/s",
	"spin.mem_latency_cycles":     ddtPap + ": NIC memory latency k = 1 cycle",
	"spin.mem_channels":           ddtPap + ": NIC memory channels = 2 × HPUs",
	"spin.iovec_entries":          ddtPap + ": the Portals iovec baseline holds v = 32 entries",
	"spin.iovec_fetch":            ddtPap + ": 500 ns PCIe read to fetch the next iovec entries",
	"spin.hpu_model":              ddtPap + ": ARM cores in the SST + gem5 set-up (PULP is the hardware design's option)",
	"spin.pulp.clusters":          ddtPap + ", PULP design: 4 clusters",
	"spin.pulp.cores":             ddtPap + ", PULP design: 8 RISC-V cores per cluster",
	"spin.pulp.l1_banks":          ddtPap + ", PULP design: 16 L1 banks per cluster",
	"spin.pulp.l1_bank_size":      ddtPap + ", PULP design: 64 KiB L1 banks",
	"spin.pulp.l1_latency_cycles": ddtPap + ", PULP design: 1-cycle L1",
	"spin.pulp.l2_banks":          ddtPap + ", PULP design: 2 L2 banks",
	"spin.pulp.l2_bank_size":      ddtPap + ", PULP design: 4 MiB L2 banks",
	"spin.pulp.l2_width":          ddtPap + ", PULP design: 256-bit L2 ports",
	"spin.pulp.dma_width":         ddtPap + ", PULP design: 64 bit/cycle cluster DMA",
	"spin.pulp.port_width":        ddtPap + ", PULP design: 256-bit network input and PCIe output ports",

	"allreduce.size":                  tnCh + ": 8 MB single-precision SUM allreduce",
	"allreduce.strategies":            tnCh + ": CPU, HDN, GDS, GHN (its APU runtime) and GPU-TN",
	"latency.size":                    tnCh + ": the initiator kernel copies one 64 B cache line",
	"latency.strategies":              tnCh + ": the latency decomposition of HDN, GDS and GPU-TN",
	"shmem.queue_entries":             compnet + ": 64 request-queue entries of 64 B per work-group",
	"shmem.gio.shader_l2_maintenance": gioSl + ": L2 maintenance operations in shaders are the slides' recommendation; the GPU they measured has none",
	"shmem.gio.qps_per_peer":          gioSl + ": each context (work-group queue) owns an RC QP and a CQ to every other PE",
	"taskspawn.min_size":              xtqCh + ": the active message payload sweep starts at 64 B",
	"taskspawn.strategies":            xtqCh + ": CPU, HSA and XTQ",
	"taskspawn.kernel_index":          xtqCh + ": the target registers kernel, queue and signal at index 42",
	"taskspawn.queue_index":           xtqCh + ": the target registers kernel, queue and signal at index 42",
	"taskspawn.cpu_tasks":             xtqCh + ": XTQ tasks may also be host functions on the CPU agent queue",
	"ddt.checkpoint_size":             ddtPap + ": checkpoint size C = 612 B",
	"ddt.epsilon":                     ddtPap + ": ε = 0.2 in the evaluation",
	"ddt.host_model":                  ddtPap + ": host unpack measured with MPITypes on an Intel i7-4770 (the simulated host core runs it)",
	"ddtbench.size":                   ddtPap + ": 4 MiB vector messages",
	"ddtbench.gammas":                 ddtPap + ": γ = 1, 2, 4, 8, 16 blocks per packet",
	"ddtbench.hpus_stated":            ddtPap + ": its Fig 8, 12, 13b and 14 run 16 HPUs",
	"ddtbench.methods":                ddtPap + ": host, Portals iovec and the four sPIN strategies",
	"ddtpulp.bw_blocks":               ddtPap + ", PULP bandwidth test: block sizes",
	"ddtpulp.size":                    ddtPap + ", PULP microkernels: 1 MiB vector message",
	"ddtpulp.run":                     ddtPap + ", PULP microkernels: packets statically assigned to cores",
	"accumulate.strategies":           xtqCh + ": CPU, HSA and XTQ",
	"reduce.nodes":                    xtqCh + ": the Reduce runs on 2 nodes",
	"reduce.strategies":               xtqCh + ": CPU, HSA and XTQ",
	"jacobi.strategies":               tnCh + ": Jacobi under CPU, HDN, GHN, GDS and GPU-TN",
	"jacobi.baseline":                 tnCh + ": Jacobi speedups against HDN",
	"jacobi.iters":                    diss + ": the Jacobi figures report one iteration",
	"jacobi1d.nodes":                  compCh + ": the 1-D Jacobi on 8 nodes",
	"jacobi1d.strategies":             compCh + ": CPU, HDN, GHN_DGPU, GHN_APU and COMPNET",
	"jacobi1d.baseline":               compCh + ": speedups against GHN_DGPU",
	"jacobiscale.nodes":               gioSl + ": 1, 2 and 4 nodes",
	"jacobiscale.weak_size":           gioSl + ": weak scaling with 2K × 2K elements per GPU",
	"jacobiscale.weak_nodes":          gioSl + ": weak scaling on 1 to 4 nodes",
	"jacobiscale.strategies":          gioSl + ": CPU, Inter-K, Inter-K-Overlap, IKN and GIO",
	"fft2d.n":                         ddtPap + ": 2-D FFT of a 20480 × 20480 matrix",
	"fft2d.split_at":                  ddtPap + ": the compute/communication split at P = 64",
	"shmembench.queue_strategies":     compCh + ": queue in GPU memory (GHN_DGPU) or host memory (GHN_DGPU_HOSTQ)",
	"shmembench.get_strategies":       compCh + ": get latency of GHN_DGPU, COMPNET and GHN_APU",
	"shmembench.load_strategies":      compCh + ": the fully loaded GPU under GHN_DGPU, GHN_APU and COMPNET",
	"shmembench.load_wgs":             compCh + ": 480 work-groups fully occupy the 12-CU GPU",
	"shmembench.load_wg_size":         compCh + ": work-groups of 64 work-items",
	"shmembench.load_bytes":           compCh + ": 1-byte transfers",
	"gnn.qp_loc":                      rdmaPap + ": QP buffers in GPU memory in the optimised configuration",
	"gnn.cq_loc":                      rdmaPap + ": CQ buffers in GPU memory in the optimised configuration",
	"gnn.qp_depth":                    rdmaPap + ": one QP holds 1024 outstanding WQEs",
	"gnn.wqe_reuse":                   rdmaPap + ": the naive path first; WQE reuse is its first optimisation",
	"gnn.pipeline":                    rdmaPap + ": the naive path first; pipelining is its second optimisation",
	"gnn.batch_doorbell":              rdmaPap + ": the naive path first; fewer doorbells is its third optimisation",
	"gnn.qp_per":                      rdmaPap + ": multi-QP posting with a QP per warp",
	"gnn.warps":                       rdmaPap + ": 30 warps posting in parallel",
	"gnn.p2p_write_reorder":           rdmaPap + ": NIC writes into GPU memory may land out of order under load (off: the ordered case)",
	"gpurdma.msgs":                    rdmaPap + ": one GPU thread fills one QP with RDMA writes",
	"gpurdma.variants":                rdmaPap + ": the naive path and its three optimisations, cumulative",
	"gpurdma.multi_sizes":             rdmaPap + ": multi-QP message sizes from 2 B to 1 KB",
	"gpurdma.multi_modes":             rdmaPap + ": QP per warp, QP per threadblock, and host-driven posting",
	"gpi.throughput_size":             rdmaPap + ": the 180 MB throughput ping-pong",
	"gpi.queues":                      rdmaPap + ": GPI queues, one per worker thread block",
	"gpi.matvec_batches":              rdmaPap + ": matrix-vector stream batches of 60 to 1920 KB",
	"gpi.blocks":                      rdmaPap + ": matrix-vector worker thread blocks",
	"gpi.threads":                     rdmaPap + ": matrix-vector threads per block",
	"giobench.strategies":             gioSl + ": GIO against CPU, Inter-K-Empty and IKN",
	"spts.classes":                    gioSl + ": WikiTalk, ASIC_320ks, nlpkkt160, road_usa and road_central",
	"spts.nodes":                      gioSl + ": strong scaling on 2, 3 and 4 nodes",
	"spts.strategies":                 gioSl + ": GIO against IKN alone",
	"ml.nodes":                        diss + ": the CNTK projections are for 8 nodes",
	"ml.strategies":                   tnCh + ": the CNTK projection of CPU, HDN, GDS, GHN and GPU-TN",
	"ml.profile":                      diss + ": the CNTK table was profiled with CPU allreduce",
	"ml.baseline":                     tnCh + ": projected speedups against the CPU allreduce",
}

// documentSources refines the parameters' tags per documents' preset: a
// value the preset's own documents state (DOC with its place), and a value
// they do not (DEFAULT with the reason it has this value) where the tag
// would otherwise claim DOC. Presets built from gputn inherit its values;
// the documents of gpurdma, gio, spin and pulp state only a few of them.
func documentSources(preset string) map[string]cluster.Source {
	doc := func(ref string) cluster.Source { return cluster.Source{Tag: "DOC", Ref: ref} }
	def := func(ref string) cluster.Source { return cluster.Source{Tag: "DEFAULT", Ref: ref} }
	out := map[string]cluster.Source{}
	// inherit marks names whose value on this preset is gputn's (Table
	// 6.1), which the preset's documents do not state.
	inherit := func(why string, names ...string) {
		for _, n := range names {
			out[n] = def(why)
		}
	}
	gpuFields := []string{"gpu.mode", "gpu.cus", "gpu.simds_per_cu", "gpu.waves_per_simd", "gpu.wave_size", "gpu.freq", "gpu.launch", "gpu.teardown",
		"gpu.l1_lines", "gpu.l1_cycles", "gpu.l2_cycles", "gpu_l2.size", "gpu_l2.ways"}
	hostFields := []string{"cpu.cores", "cpu.freq", "cpu.width"}
	netFields := []string{"switch.latency", "topology.kind"}
	cpFields := []string{"cp.cores", "cp.freq", "cp.width", "cp.l1_lines", "cp.l1_cycles"}
	switch preset {
	case "gputn":
		inherit("the dissertation's Table 6.1 does not describe the CP; Table 5.1's CP", cpFields...)
	case "xtq":
		out["cpu.cores"], out["cpu.freq"], out["cpu.width"] = doc("dissertation Table 4.1: 8 cores"), doc("dissertation Table 4.1: 3 GHz"), doc("dissertation Table 4.1: 4-wide OOO")
		out["gpu.freq"], out["gpu.cus"], out["gpu.mode"] = doc("dissertation Table 4.1: GCN3 at 1 GHz"), doc("dissertation Table 4.1: 24 CUs"), doc("dissertation Table 4.1: APU")
		out["gpu.launch"] = doc(xtqCh + ": the forward-looking launch model, no fixed overhead (HSA's kernels too: both go through the same CP)")
		out["gpu.teardown"] = doc(xtqCh + ": teardown is only the work-group drain and the completion signal")
		out["gpu.l1_lines"], out["gpu.l1_cycles"], out["gpu.l2_cycles"] = doc("dissertation Table 4.1: V-cache 32 kB, 12 cycles"), doc("dissertation Table 4.1: V-cache 12 cycles"), doc("dissertation Table 4.1: GPU L2 100 cycles")
		out["gpu_l2.size"], out["gpu_l2.ways"] = doc("dissertation Table 4.1: 1 MB GPU L2"), doc("dissertation Table 4.1: 16-way")
		inherit("the dissertation's Table 4.1 does not describe the CP; Table 5.1's CP", cpFields...)
	case "compnet", "compnet_paper":
		t := "dissertation Table 5.1"
		if preset == "compnet_paper" {
			t = compnet + " Table 1"
		}
		out["cpu.cores"], out["cpu.freq"], out["cpu.width"] = doc(t+": 16 cores"), doc(t+": 4 GHz"), doc(t+": 8-wide OOO")
		out["gpu.freq"], out["gpu.cus"] = doc(t+": GCN3 at 1.5 GHz"), doc(t+": 12 CUs")
		out["gpu.mode"] = doc(compCh + ": HDN, GHN_DGPU and COMPNET run with dGPU memory over PCIe (GHN_APU sets APU mode itself)")
		out["gpu.launch"] = def(compCh + " and " + compnet + " give no kernel latencies; the GPU-TN chapter's 1.5 µs is used")
		out["gpu.teardown"] = def(compCh + " and " + compnet + " give no kernel latencies; the GPU-TN chapter's 1.5 µs is used")
		out["gpu.l1_lines"], out["gpu.l1_cycles"], out["gpu.l2_cycles"] = doc(t+": V-cache 32 kB"), doc(t+": V-cache 12 cycles"), doc(t+": GPU L2 100 cycles")
		if preset == "compnet_paper" {
			out["gpu.l1_lines"], out["gpu.l2_cycles"] = doc(t+": V-cache 16 kB"), doc(t+": GPU L2 150 cycles")
		}
		out["gpu_l2.size"], out["gpu_l2.ways"] = doc(t+": 1 MB GPU L2"), doc(t+": 16-way")
		for _, n := range cpFields {
			out[n] = doc("dissertation Table 5.1: CP of 2 cores, 2-wide OOO x86 at 2 GHz, 32 kB D-cache of 4 cycles")
		}
	case "gpurdma":
		out["soc.nic_attach"] = doc(rdmaPap + ": a Connect-IB HCA on PCIe behind a PLX switch")
		out["link.bandwidth"] = doc(rdmaPap + ": Connect-IB on FDR InfiniBand, 56 Gb/s")
		out["gpu.mode"], out["gpu.cus"], out["gpu.wave_size"] = doc(rdmaPap+": a discrete NVIDIA K40c"), doc(rdmaPap+": K40c, 15 SMs"), doc(rdmaPap+": 32-thread warps")
		out["gpu.freq"] = def("NVIDIA K40c data sheet: 745 MHz base clock; the paper gives none")
		out["gpu.simds_per_cu"] = def("NVIDIA Kepler: 4 warp schedulers per SM; the paper gives none")
		out["gpu.waves_per_simd"] = def("NVIDIA Kepler: 64 resident warps per SM over 4 schedulers; the paper gives none")
		out["gpu.l1_lines"] = def("NVIDIA Kepler: 16 kB L1 per SM in the 48 kB shared-memory split; the paper gives none")
		// gpu.launch and gpu.teardown: external measurements (cluster.PresetSources).
		inherit("not stated by "+rdmaPap+"; the dissertation's Table 6.1 value", "gpu.l1_cycles", "gpu.l2_cycles", "gpu_l2.size", "gpu_l2.ways")
		inherit("not stated by "+rdmaPap+"; the dissertation's Table 6.1 host", hostFields...)
		inherit("not stated by "+rdmaPap+"; the dissertation's star with 100 ns switches", netFields...)
		inherit("no CP in "+rdmaPap+"'s set-up; Table 5.1's CP, unused by GPUrdma", cpFields...)
	case "gio":
		out["soc.nic_attach"] = doc(gioSl + ": a discrete InfiniBand NIC on PCIe")
		out["link.bandwidth"] = doc(gioSl + ": 56 Gb/s InfiniBand")
		out["gpu.mode"] = doc(gioSl + ": a discrete AMD Radeon MI-25 with HBM")
		out["gpu.cus"], out["gpu.freq"] = def("MI-25 data sheet: 64 CUs; the slides give none"), def("MI-25 data sheet: 1.5 GHz; the slides give none")
		out["gpu.simds_per_cu"], out["gpu.wave_size"] = def("GCN: 4 SIMD-16 per CU; the slides give none"), def("GCN: 64-lane wavefronts; the slides give none")
		out["gpu.waves_per_simd"] = def("GCN: 10 wavefronts per SIMD; the slides give none")
		out["gpu_l2.size"] = def("MI-25 data sheet: 4 MB L2; the slides give none")
		// gpu.launch and gpu.teardown: external measurements (cluster.PresetSources).
		inherit("not stated by "+gioSl+"; the dissertation's Table 6.1 value", "gpu.l1_lines", "gpu.l1_cycles", "gpu.l2_cycles", "gpu_l2.ways")
		inherit("not stated by "+gioSl+" (an x86 server CPU); the dissertation's Table 6.1 host", hostFields...)
		inherit("not stated by "+gioSl+"; the dissertation's star with 100 ns switches", netFields...)
		inherit("no CP in "+gioSl+"' set-up; Table 5.1's CP, unused by GIO", cpFields...)
	case "spin", "pulp":
		out["soc.nic_attach"] = doc(ddtPap + ": the host–NIC interface is PCIe Gen4 x32")
		out["link.bandwidth"] = doc(ddtPap + ": a 200 Gb/s Slingshot-class NIC")
		out["cpu.cores"], out["cpu.freq"] = doc(ddtPap+": host unpack measured on an Intel i7-4770 (4 cores)"), doc(ddtPap+": Intel i7-4770 at 3.4 GHz")
		out["cpu.width"] = def("not stated by " + ddtPap + "; the dissertation's Table 6.1 host")
		inherit("no GPU in "+ddtPap+"'s set-up; the dissertation's Table 6.1 GPU, unused by the datatype studies", gpuFields...)
		inherit("not stated by "+ddtPap+" (an SST network); the dissertation's star with 100 ns switches", netFields...)
		inherit("no CP in "+ddtPap+"'s set-up; Table 5.1's CP, unused", cpFields...)
		if preset == "pulp" {
			out["spin.hpus"] = doc(ddtPap + ", PULP design: 4 clusters × 8 cores = 32 HPUs")
			out["spin.hpu_freq"] = doc(ddtPap + ", PULP design: 1 GHz")
		}
	default:
		if slices.Contains(cluster.PresentDay(), preset) {
			out["shmem.gio.qps_per_peer"] = cluster.Source{Tag: "SPEC", Ref: nvshmemRCPerPE}
			return out
		}
		return nil
	}
	// The instruction cache (SQC) a work-group's first instruction is
	// fetched through (gpu.icache_cus, gpu.icache_cycles).
	switch preset {
	case "gputn", "xtq", "compnet", "compnet_paper":
		t := map[string]string{"gputn": "dissertation Table 6.1", "xtq": "dissertation Table 4.1", "compnet": "dissertation Table 5.1", "compnet_paper": compnet + " Table 1"}[preset]
		out["gpu.icache_cus"] = doc(t + ": I-cache per 4 CUs (the SQC); the documents' simulator fetches each wavefront's instructions through it (gem5 GCN3, src/gpu-compute/fetch_unit.cc)")
		out["gpu.icache_cycles"] = doc("dissertation Tables 4.1, 5.1, 6.1: I-cache 12 cycles")
	default:
		out["gpu.icache_cus"] = def("instruction fetch not modelled: the preset's documents give no instruction cache")
		out["gpu.icache_cycles"] = def("unused (gpu.icache_cus = 0); the dissertation's 12 cycles")
	}
	return out
}

// nvshmemRCPerPE is the source of the present-day presets' GIO QPs per
// peer: GPU-initiated verbs on today's machines are NVSHMEM IBGDA's.
const nvshmemRCPerPE = "NVSHMEM documentation, Environment Variables: NVSHMEM_IBGDA_NUM_RC_PER_PE, 2 RC QPs per peer PE (the releases whose GPU-initiated transport uses RC QPs by default), assigned to CTAs round-robin (NVSHMEM_IBGDA_RC_MAP_BY = cta)"
