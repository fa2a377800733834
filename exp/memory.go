package exp

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// The memory model of one simulation, calibrated by measuring the peak
// resident size of allreduce runs (docs/memory.md has the measurements):
// payload-free runs of 64, 256 and 512 nodes grow as about 100 KB per node
// plus 1.6 KB per (node, peer) pair (per-peer MPI, Portals and routing
// state); functional runs hold 2.1–2.3 bytes per byte of a node's payload
// (its buffers, lazily backed, plus the serial reference).
const (
	// memBase is the process without a simulation: runtime, tables,
	// the report (measured ≈22 MB).
	memBase = 32 << 20
	// memPerNode is one node's model state (memory maps, queues, agents).
	memPerNode = 128 << 10
	// memPerPeer is the state one node keeps per peer.
	memPerPeer = 2 << 10
	// memPayloadFactor is bytes of process memory per byte of a node's
	// functional payload.
	memPayloadFactor = 2.3
)

// MemNeed is the estimated peak memory of a run and the parameter that
// decides it.
type MemNeed struct {
	// Param names the deciding parameter as --set takes it.
	Param string
	// Value is that parameter's value, as printed.
	Value string
	// Bytes is the estimated peak resident memory.
	Bytes float64
	// Sims is how many simulations the estimate assumes run at once.
	Sims int
}

// Fits reports whether the need fits in avail bytes.
func (m MemNeed) Fits(avail uint64) bool { return m.Bytes <= float64(avail) }

// Refusal is the one-line error for a need that does not fit in avail
// bytes, naming the parameter and both sizes.
func (m MemNeed) Refusal(avail uint64, limit string) error {
	sims := ""
	if m.Sims > 1 {
		sims = fmt.Sprintf(" (%d simulations at once; run.parallel=1 runs one)", m.Sims)
	}
	return fmt.Errorf("%s = %s: the run needs about %s of memory%s, more than the %s %s",
		m.Param, m.Value, FormatBytes(m.Bytes), sims, FormatBytes(float64(avail)), limit)
}

// FormatBytes prints a byte count with a binary unit (e.g. "79.4GiB").
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1e6 {
		return fmt.Sprintf("%.3g%s", b, units[i])
	}
	return fmt.Sprintf("%.1f%s", b, units[i])
}

// allreduceState returns the allreduce's model state per node and per
// (node, peer) pair under strategy st, fitted to peak RSS of payload-free
// runs (docs/memory.md) and rounded up: the 1024-node 8 MiB ring took CPU
// 123 MB, HDN 83 MB, GDS 752 MB, GPU-TN 853 MB (GDS and GPU-TN: the flag
// lines each node polls, 2(n−1), and their control bytes; before their
// schedules were made as they run, GDS 2.64 GB and GPU-TN 1.66 GB); the
// 16,384-node RHD on the flow model CPU 1.75 GB and HDN 1.35 GB (4.71 GB
// while its reduction work-groups were coroutines, docs/speed.md). GPU-TN's
// flag lines are per (step, slice): 256 B per pair and slice (two 32-byte
// control lines, the rest fitted: 51 MiB peak at 64 nodes with 16
// slices, 251 MB at 256, 2.70 GB at 1024 on two engines, estimated 56
// MiB, 320 MiB and 4.25 GiB; 1 KiB before the NIC kept its waiting registrations as runs,
// the GPU forgot a flag's watch once woken and control lines kept one
// word instead of 64 bytes). The strategies added since, fitted
// to the peak RSS of payload-free 8 MiB runs at 32, 64 and 128 nodes on
// their presets (docs/memory.md, issue 30; TestEstimateCoversStrategies
// checks every family): XTQ and HSA post every round's receive resources
// up front and keep each task's command buffer, its two control lines in
// the receive buffer and its kernel run, 1.5 KiB per pair (XTQ 34, 56,
// 131 MB and 1.49 GB at 64, 128, 256 and 1024 nodes; before the command
// buffers were carved from blocks, 4 KiB: 2.83 GB at 1024); device shmem (GHN_*,
// COMPNET) 2.5 MiB per node for the runtime, its queues and the rings'
// work-groups (95, 130, 185 MB) and 512 B per pair, the flag lines of the
// rings (2(n−1) per ring work-group, one ring at 1024 nodes: GHN_DGPU 848
// MB peak there, 4.6 GB estimated at 2 KiB per pair); GPUrdma 1.25 MiB per node and 1 KiB per
// pair (its CQs sized for a QP to every peer, backed by the page as used, and the rings' flag
// lines: 98, 253 MB and 1.56 GB at 64, 256 and 1024 nodes fit about 62 MB of process, 0.5 MB
// per node and 0.9 KB per pair, with room for the 32-node functional run: 59 MiB; 3 MiB per
// node and 2 KiB per pair before, 5.0 GiB at 1024, now 2.3 GiB);
// GIO 1 MiB per node, 96 KiB per ring and 16 B per (ring, peer)
// connection (below).
// Others keep memPerNode and memPerPeer.
func allreduceState(st string, slices int) (perNode, perPeer float64) {
	switch st {
	case "CPU": // 144 KiB + 192 B: 73.8 MB peak at 256 nodes against 75.5 estimated with 128 KiB + 128 B
		return 144 << 10, 192
	case "HDN", "HDN_OVERLAP": // 160 KiB per node: 42.4 MB peak at 64 nodes against 41.0 with 64 KiB (issue 30's check)
		return 160 << 10, 800
	case "GDS":
		return memPerNode, 1 << 10
	case "GPUTN": // 256 KiB per node: 57.5 MB peak at 64 nodes against 58.7 estimated with 128 KiB
		return 256 << 10, float64(max(1, slices)) * (1 << 8)
	case "XTQ", "HSA":
		return memPerNode, 3 << 9
	case "GHN_DGPU", "GHN_DGPU_HOSTQ", "GHN_APU", "COMPNET":
		return 3 << 19, 1 << 9 // 1.5 MiB: 2.5 MiB estimated 4.4× the 256-node peaks (169–174 MB)
	case "GNN_GPURDMA":
		return 5 << 18, 1 << 10
	case "GNN_GIO": // slices: its contexts, one per ring
		k := float64(max(1, slices))
		return gioPerNode + k*gioPerRing, k * gioPerConn
	}
	return memPerNode, memPerPeer
}

// xtqRHDPacketState is what XTQ's rhd allreduce holds per byte of its
// largest message (half the vector, the first halving step's task) in the
// packet model: a task is one gather put, whose packets the NIC makes
// when it issues it, and they wait in the NIC's and the fabric's queues
// (the packet arrays, the fabric's in-flight records, the links' chains:
// 94, 71 and 46 of the 215 MB of heap in use at the peak of the 8 MiB
// payload-free run on 256 nodes). Fitted to that run (375 MB of heap in
// use) and to 1024 nodes (1.44 GiB peak RSS, 1.41 MiB per node: 0.34 B
// per byte of the 4 MiB message), rounded up. The flow model makes no
// packets.
const xtqRHDPacketState = 0.4

// xtqRHDPerNode is what XTQ's rhd keeps per node beside the ring's
// per-node state and its partners': a kernel registration, signal and
// tagged counts per step. Fitted to the 4,096-node flow-model run, whose
// peak RSS varied from 597 to 661 MiB between two runs of the day (the
// estimate without it: 0.68 GiB), rounded up.
const xtqRHDPerNode = 32 << 10

// rhdOneSidedState is allreduceState for algorithm rhd on the one-sided
// strategies (the hierarchical allreduce's one-sided schedule on one GPU
// per node: 2 log2 n + 2 slots, each put's flag line, the QPs or
// connections to its log2 n partners), fitted to the peak RSS of the 8
// MiB payload-free rhd in the flow model (docs/network.md, "4,096
// nodes"): at 1024 and 4096 nodes GDS 301 MB and 1.14 GB, GPU-TN 122 and
// 415 MB; at 1024 nodes GHN_DGPU 182 MB, GNN_GPURDMA 305 MB (its CQs
// sized for a QP to every rank, backed by the page as used); rounded up,
// 1 KiB per partner. GNN_GIO keeps a templated count for every other
// node (each context's connections to every PE are reserved as one block
// and computed from their index): 460 and 940 MiB at 1024 and 2048 nodes,
// 1.78 GiB at 4096 (693 MiB and 1.89 GiB while each connection's
// reservation, uncached ranges and table entries were stored, about 0.5
// KB per pair; 12.4 GiB estimated at 4096 and refused): the
// ring's per-node and per-connection state with one context (every
// reports true).
func rhdOneSidedState(st string) (perNode, perPeer float64, every bool) {
	switch st {
	case "GPUTN":
		return 128 << 10, 1 << 10, false
	case "GDS":
		return 320 << 10, 1 << 10, false
	case "GNN_GPURDMA":
		return 384 << 10, 1 << 10, false
	case "GNN_GIO":
		return gioPerNode + gioPerRing, gioPerConn, true
	}
	return 256 << 10, 1 << 10, false // GHN_*, COMPNET
}

// GNN_GIO's state: per node its runtime (the templater, the passive CQ,
// the GPU's) and, in the allreduce, per ring its work-group and the
// connections it makes (a CQ and a QP pair of about 10 KiB each, both
// ends); per (context, peer) connection what connect keeps for it: its
// templated count (4 B), two bits of the templater's candidates, and its
// share of the chunk pointers of the tables of made connections and QP
// and CQ numbers, about 6 B of heap, 16 B with the collector's headroom
// (a connection's addresses and numbers are computed from its index, its
// rings mapped uncacheable as one range per PE; 320 B before, when each
// was stored). Connections are made on first use, and the templating of
// the QPs nobody posts to is computed, not stored.
// Fitted to payload-free runs on the gio preset (docs/memory.md): the 8
// MiB allreduce at 16 and 64 nodes (32 and 8 rings) peaked at 72 MiB (the
// test's child) and 108 MB, about 2.8 and 1.2 MB per node; the weak
// Jacobi (128 contexts, one per work-group of the persistent kernel) at
// 32 and 128 nodes at 104 MiB and 846 MB: 1.2 MB per node and 41 KB per
// (node, peer) pair. Before connections were made on first use, 14 MiB
// per node (allreduce) and 2 MiB per pair (Jacobi, refused at 128 nodes).
const (
	gioPerNode = 1 << 20
	gioPerRing = 96 << 10
	gioPerConn = 16
)

// simMem is one simulation of a run: its cluster size, the functional
// payload bytes each node holds, and the parameters that set them.
type simMem struct {
	nodes        float64
	peers        float64 // peers each node keeps state for; 0 = every other node
	perNode      float64 // bytes per node; 0 = memPerNode
	perPeer      float64 // bytes per (node, peer) pair; 0 = memPerPeer
	payload      float64 // bytes per node, before memPayloadFactor
	nodesParam   string
	nodesValue   string
	payloadParam string
	payloadValue string
	// extra is state a parameter grows whatever the functional mode (a
	// sparse solve's matrix rows), named by extraParam = extraValue.
	extra      float64
	extraParam string
	extraValue string
	// qps is the part of perPeer that gnn.qps adds beyond its default
	// (gnnQPsBeyondDefault), for naming it when it decides the estimate.
	qps float64
}

// bytes is the estimated peak of the simulation in a run with the given
// functional mode.
func (s simMem) bytes(functional bool) float64 {
	peers := s.peers
	if peers == 0 {
		peers = s.nodes
	}
	perNode, perPeer := s.perNode, s.perPeer
	if perNode == 0 {
		perNode = memPerNode
	}
	if perPeer == 0 {
		perPeer = memPerPeer
	}
	b := s.nodes*perNode + s.nodes*peers*perPeer + s.extra
	if functional {
		b += s.nodes * s.payload * memPayloadFactor
	}
	return b
}

// EstimateMemory estimates the peak memory of running experiment name on
// cfg, before any work: the largest simulations that may run at once (one
// per worker) plus the process itself. Experiments whose size no parameter
// can grow beyond a few MB need only memBase.
func EstimateMemory(name string, cfg Config) MemNeed {
	sims := simsOf(name, cfg)
	need := MemNeed{Param: "run.parallel", Value: fmt.Sprint(cfg.Run.Parallel), Bytes: memBase, Sims: 1}
	if len(sims) == 0 {
		return need
	}
	if ob := mpiOverflowBytes(cfg); ob > 0 {
		// Every rank sets up MPI with its overflow buffers (a growth no
		// experiment's own parameters name).
		for i := range sims {
			sims[i].perNode = cmp.Or(sims[i].perNode, memPerNode) + ob
		}
	}
	f := cfg.Run.Functional
	slices.SortFunc(sims, func(a, b simMem) int { return cmp.Compare(b.bytes(f), a.bytes(f)) })
	workers := cfg.Run.Parallel
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, len(sims)))
	sum := 0.0
	for _, s := range sims[:workers] {
		sum += s.bytes(f)
	}
	if b := float64(cfg.Run.MemBudget); b > 0 && gated(name) && sum > max(b, sims[0].bytes(f)) {
		// RunPoints starts a point only while it fits in the budget
		// beside the running ones, or alone.
		sum = max(b, sims[0].bytes(f))
		workers = 1
		for workers < len(sims) && sims[0].bytes(f)+sims[workers].bytes(f) <= b {
			workers++
		}
	}
	need.Bytes += sum
	need.Sims = workers
	top := sims[0]
	payload := 0.0 // a payload-free run holds no payload bytes
	if f {
		payload = top.nodes * top.payload * memPayloadFactor
	}
	switch {
	case top.qps > 0 && top.nodes*cmp.Or(top.peers, top.nodes)*top.qps >= top.bytes(f)/2:
		need.Param, need.Value = "gnn.qps", fmt.Sprint(cfg.GNN.QPs)
	case top.nodes*mpiOverflowBytes(cfg) >= top.bytes(f)/2:
		need.Param, need.Value = "mpi.overflow_buffers", fmt.Sprint(cfg.MPI.OverflowBufs)
	case top.extra > 0 && top.extra >= payload && top.extra >= top.bytes(false)-top.extra:
		need.Param, need.Value = top.extraParam, top.extraValue
	case f && payload >= top.bytes(false):
		need.Param, need.Value = top.payloadParam, top.payloadValue
	default:
		need.Param, need.Value = top.nodesParam, top.nodesValue
	}
	return need
}

// allreducePointMemory is the allreduce's Points.Memory: what one point
// holds resident, which run.mem_budget shares out. EstimateMemory's
// payload term (memPayloadFactor, 2.3 bytes a payload byte) bounds the
// address space a run maps, every receive slot included, so that a limit
// it lets through is not hit; the budget is about the pages in use. The
// ring paths that give each receive slot back once it is reduced
// (Memory.ScratchSlots; notSlotConsumer) hold a node's vector and the slots
// in flight: payload × (1 + 2/n), two of the n chunks, beside the model
// state. Fitted to the peak RSS of each point of the main job, one point
// per process on the 2-core machine (docs/speed.md, "The main job's
// memory"): CPU, HDN, GDS 8.6-8.8 MB per node at 32 and 64 nodes (9.6 at
// 16, 12.8 at 2) against 8.8-8.9 estimated (9.6, 16.9), GPU-TN 8.7-9.1
// (9.2 at 64, 32), GHN_APU 9.4-10.6 (11.4-12.1). Other strategies and the
// rhd keep EstimateMemory's.
func allreducePointMemory(c Config) float64 {
	a := c.Allreduce
	if !c.Run.Functional || a.Algorithm != workload.AlgRing || slices.ContainsFunc(a.Strategies, notSlotConsumer) {
		return EstimateMemory("allreduce", c).Bytes - memBase
	}
	sum := 0.0
	for _, s := range simsOf("allreduce", c) {
		payload := s.payload
		s.payload = 0
		sum += s.bytes(true) + s.nodes*payload*(1+2/s.nodes)
	}
	return sum
}

// notSlotConsumer reports whether the ring allreduce of strategy st is
// not one measured to give each receive slot back once reduced
// (allreducePointMemory).
func notSlotConsumer(st string) bool {
	switch st {
	case "CPU", "HDN", "GDS", "GPUTN", "GHN_APU":
		return false
	}
	return true
}

// gated reports whether experiment name runs its points within
// run.mem_budget (its Points has a Memory estimate).
func gated(name string) bool { return name == "allreduce" }

// simsOf lists the simulations a run of experiment name performs, as far
// as parameters can make them large.
func simsOf(name string, cfg Config) []simMem {
	fixed := func(nodes int, param string, payload float64) simMem {
		return simMem{nodes: float64(nodes), payload: payload, nodesParam: param, nodesValue: fmt.Sprint(nodes)}
	}
	var out []simMem
	switch {
	case name == "allreduce":
		a := cfg.Allreduce
		for _, n := range a.Nodes {
			peers := 0.0
			if a.Algorithm == workload.AlgRHD { // a partner per halving and doubling step
				peers = float64(2 * bits.Len(uint(n)))
			}
			for _, st := range a.Strategies {
				w := workload.Allreduce{Size: a.Size, WGs: a.WGs, MaxWGs: cfg.maxSlices(), WGSize: a.WGSize}
				k := w.Slices(n)
				if st == "GNN_GIO" {
					k = w.Rings(n, cfg.GPU.CUs)
				}
				perNode, perPeer := allreduceState(st, k)
				pp := peers
				if st == "XTQ" && a.Algorithm == workload.AlgRHD {
					perNode += xtqRHDPerNode
					if cfg.Network.Model != "flow" {
						perNode += xtqRHDPacketState * float64(a.Size) / 2
					}
				}
				if s, err := strategy.Parse(st); err == nil && a.Algorithm == workload.AlgRHD && workload.RHDOneSided(s) {
					var every bool
					perNode, perPeer, every = rhdOneSidedState(st)
					if every {
						pp = 0 // every other node
					}
				}
				perNode += l2TagsBeyondFit(cfg, st, 4*float64(a.Size)) // the vector through the L2 a few times
				out = append(out, simMem{nodes: float64(n), peers: pp, perNode: perNode, perPeer: perPeer, payload: float64(a.Size),
					nodesParam: "allreduce.nodes", nodesValue: fmt.Sprint(n), payloadParam: "allreduce.size", payloadValue: a.Size.String()})
			}
		}
	case name == "today":
		// The study's points are the present-day workloads' on each
		// preset's own configuration (the tornado's variants scale one
		// knob of the same points): their estimates, not the process
		// alone ("run today" peaked at 7.5 GB).
		for _, preset := range cfg.Today.Presets {
			pc, err := cfg.presetConfig(preset)
			if err != nil {
				continue // Validate names it
			}
			for _, w := range cfg.Today.Workloads {
				if w != "today" {
					out = append(out, simsOf(w, pc)...)
				}
			}
		}
	case name == "allreduce_hier":
		out = append(out, hierSims(cfg)...)
	case name == "halo3d":
		out = append(out, halo3DSims(cfg)...)
	case name == "moe":
		out = append(out, moeSims(cfg)...)
	case name == "pingpong":
		out = append(out, pingPongSims(cfg)...)
	case name == "latency":
		out = append(out, sized(fixed(2, "nodes", 0), "latency.size", cfg.Latency.Size))
	case name == "mlproj":
		out = append(out, fixed(cfg.ML.Nodes, "ml.nodes", 0))
	case name == "accumulate":
		out = append(out, sized(fixed(2, "nodes", 0), "accumulate.max_size", cfg.Accumulate.MaxSize))
	case name == "reduce":
		out = append(out, sized(fixed(cfg.Reduce.Nodes, "reduce.nodes", 0), "reduce.max_size", cfg.Reduce.MaxSize))
	case name == "taskspawn":
		out = append(out, sized(fixed(2, "nodes", 0), "taskspawn.max_size", cfg.TaskSpawn.MaxSize))
	case name == "hostcpu":
		out = append(out, sized(fixed(1, "nodes", 0), "hostcpu.size", cfg.HostCPU.Size))
	case name == "shmemget":
		out = append(out, sized(fixed(2, "nodes", 0), "shmembench.get_max", cfg.ShmemBench.GetMax))
	case strings.HasPrefix(name, "ddt_") && name != "ddt_apps":
		s := sized(fixed(2, "nodes", 0), "ddtbench.size", cfg.DDTBench.Size)
		if f := ddtBytesPerByte(name); f > 0 {
			s.extra, s.extraParam, s.extraValue = f*float64(cfg.DDTBench.Size), "ddtbench.size", cfg.DDTBench.Size.String()
		}
		out = append(out, s)
	case name == "gpurdma":
		out = append(out, sizedInts(fixed(2, "nodes", 0), "gpurdma.sizes", cfg.GPURdma.Sizes))
	case name == "gio":
		out = append(out, sizedInts(fixed(2, "nodes", 0), "giobench.sizes", append([]int{cfg.GIOBench.Large}, cfg.GIOBench.Sizes...)))
	case name == "gpi":
		out = append(out, sizedInts(fixed(2, "nodes", 0), "gpi.throughput_size", []int{cfg.GPI.ThroughputSize}))
	case strings.HasPrefix(name, "jacobi"):
		out = jacobiSims(name, cfg)
	case name == "spts":
		// Each solve holds its matrix, the plan's per-row lists and the
		// nodes' row blocks: 1.1 KB per row measured on kkt at 2 nodes,
		// 1.6 KB at 4 (131,072 rows, GNN_GIO and HDN); 2 KiB rounds up.
		p := cfg.SpTS
		for _, class := range p.Classes {
			rows := p.rowsOf(class)
			for range max(1, len(p.Strategies)) {
				for _, n := range p.Nodes {
					out = append(out, simMem{nodes: float64(n), extra: float64(rows) * sptsBytesPerRow,
						nodesParam: "spts.nodes", nodesValue: fmt.Sprint(n), extraParam: "spts.rows", extraValue: fmt.Sprint(p.Rows)})
				}
			}
		}
	case name == "fft2d":
		// The LogGOPS replay holds every rank's transpose: state per
		// (rank, peer) pair, 1.3 KB measured at P = 1024 (docs/memory.md).
		for _, p := range cfg.DDTFFT.Procs {
			out = append(out, fixed(p, "fft2d.procs", 0))
		}
	}
	return out
}

// ddtBytesPerByte is what a datatype experiment holds per byte of
// ddtbench.size beyond a node payload's, measured as peak RSS on gputn
// (2026-11-28): ddt_vector 286 MB at 1 MiB and 1.09 GB at 4 MiB (255 B
// per byte: every method's buffers and layouts at every block size); the
// sPIN studies 35 B per byte between 1 and 2 MiB (ddt_breakdown 60 → 96
// MB, ddt_hpus 59 → 91, ddt_memory 49 → 85, ddt_dmaqueue 60 → 92,
// ddt_host 62 → 88). Rounded up by about a tenth.
func ddtBytesPerByte(name string) float64 {
	switch name {
	case "ddt_vector":
		return 280
	case "ddt_breakdown", "ddt_hpus", "ddt_memory", "ddt_dmaqueue", "ddt_host":
		return 40
	}
	return 0
}

// pingPongBytesPerByte is a ping-pong's memory per byte of its size,
// functional or payload-free (the buffers are mapped either way): 6.0-7.7
// bytes measured at 64 MiB on gputn (CPU 6.0, HDN, GDS, GPU-TN and
// GNN_GPURDMA 6.7-7.0, GNN_GIO 7.7) and on h100-cx7 with the fabric, up
// to 8.4 for GNN_GIO beside the other tests' children (the collector's
// lag); 10 leaves room.
const pingPongBytesPerByte = 10

// pingPongSims lists the ping-pong's simulations: one per size and
// strategy, two nodes of node.gpus GPUs (two of them active), each holding
// pingPongBytesPerByte × the size.
func pingPongSims(cfg Config) []simMem {
	p := cfg.PingPong
	ranks := 2 * max(1, cfg.Node.GPUs)
	var out []simMem
	for _, size := range doublings(p.MinSize, p.MaxSize) {
		for _, st := range p.Strategies {
			out = append(out, simMem{nodes: float64(ranks), perPeer: memPerPeer + gnnQPsBeyondDefault(cfg, st), qps: gnnQPsBeyondDefault(cfg, st), extra: pingPongBytesPerByte * float64(size),
				nodesParam: "nodes", nodesValue: fmt.Sprint(ranks), extraParam: "pingpong.max_size", extraValue: p.MaxSize.String()})
		}
	}
	return out
}

// mpiOverflowBufBytes is the model state of one MPI overflow buffer of a
// rank (its match-list entry and memory-map record; the buffer itself is
// address space only, whatever mpi.overflow_buffer_size): 3 KiB measured,
// 4,096 per rank on 16 ranks of h100-cx7 peaked 185 MB above the default
// 32 (65,536: 3.0 GB). memPerNode holds the default 32.
const mpiOverflowBufBytes = 3 << 10

// mpiOverflowBytes is the state a rank holds for its overflow buffers
// beyond the default 32.
func mpiOverflowBytes(cfg Config) float64 {
	return float64(max(0, cfg.MPI.OverflowBufs-mpi.DefaultSpec().OverflowBufs)) * mpiOverflowBufBytes
}

// sptsBytesPerRow is a sparse solve's memory per matrix row.
const sptsBytesPerRow = 2 << 10

// sized gives s a payload of b bytes per node set by param.
func sized(s simMem, param string, b unit.Bytes) simMem {
	s.payload, s.payloadParam, s.payloadValue = float64(b), param, b.String()
	return s
}

// sizedInts gives s the largest of sizes (bytes) as its payload.
func sizedInts(s simMem, param string, sizes []int) simMem {
	m := 0
	for _, v := range sizes {
		m = max(m, v)
	}
	s.payload, s.payloadParam, s.payloadValue = float64(m), param, fmt.Sprint(m)
	return s
}

// jacobiSims lists the Jacobi runs: each node holds its points twice (the
// grid and the next iterate) as float64. Points above
// jacobi.verify_max_points run payload-free.
func jacobiSims(name string, cfg Config) []simMem {
	j := cfg.Jacobi
	point := func(nodes, points float64, nodesParam, nodesValue, payloadParam, payloadValue string) simMem {
		payload := 2 * 8 * points
		if points > float64(j.VerifyMax) {
			payload = 0
		}
		return simMem{nodes: nodes, payload: payload, nodesParam: nodesParam, nodesValue: nodesValue,
			payloadParam: payloadParam, payloadValue: payloadValue}
	}
	var out []simMem
	switch name {
	case "jacobi":
		var r, c float64
		if _, err := fmt.Sscanf(j.Procs, "%gx%g", &r, &c); err != nil {
			return nil
		}
		for _, n := range j.Sizes {
			out = append(out, point(r*c, float64(n)*float64(n), "jacobi.procs", j.Procs, "jacobi.sizes", fmt.Sprint(n)))
		}
	case "jacobi1d":
		for _, l := range cfg.Jacobi1D.Log2Elems {
			out = append(out, point(float64(cfg.Jacobi1D.Nodes), math.Ldexp(1, l), "jacobi1d.nodes", fmt.Sprint(cfg.Jacobi1D.Nodes),
				"jacobi1d.log2_elements", fmt.Sprint(l)))
		}
	case "jacobistrong", "jacobiweak":
		s := cfg.JacobiScale
		if name == "jacobiweak" {
			for _, n := range s.WeakNodes {
				w := float64(s.WeakSize)
				out = append(out, point(float64(n), w*w, "jacobiscale.weak_nodes", fmt.Sprint(n), "jacobiscale.weak_size", fmt.Sprint(s.WeakSize)))
			}
			break
		}
		for _, n := range s.Nodes {
			for _, g := range s.Grids {
				out = append(out, point(float64(n), float64(g)*float64(g)/float64(max(1, n)), "jacobiscale.nodes", fmt.Sprint(n),
					"jacobiscale.grids", fmt.Sprint(g)))
			}
		}
	}
	names := j.Strategies
	if name == "jacobistrong" || name == "jacobiweak" {
		names = cfg.JacobiScale.Strategies
	} else if name == "jacobi1d" {
		names = cfg.Jacobi1D.Strategies
	}
	var all []simMem
	for _, p := range out {
		for k := range max(1, len(names)) {
			s := p
			if k < len(names) {
				switch names[k] {
				case "GNN_GIO":
					// GIO connects every context (a work-group of the
					// Jacobi kernel) to every PE (gioPerConn each), up to
					// the resident work-groups, or shmem.gio.qps_per_peer
					// QP sets that the contexts share.
					sets := jacobiContexts(cfg)
					if n := cfg.Shmem.GIO.QPsPerPeer; n > 0 {
						sets = min(sets, n)
					}
					s.perNode, s.perPeer = 2*gioPerNode, float64(sets)*gioPerConn
				case "HDN", "HDN_OVERLAP", "GDS", "GPUTN", "XTQ", "HSA":
					// Kernels, streams and their work-groups per node:
					// 128-node weak runs peaked at 98 MB (gputn) and
					// 179 MB (gio, more compute units) against 80 MiB
					// with 128 KiB per node, about 0.3 and 0.9 MiB each.
					s.perNode = jacobiKernelPerNode
				case "GHN_DGPU", "GHN_DGPU_HOSTQ", "GHN_APU", "COMPNET":
					// The device-shmem runtime's queues and service
					// state per node, a queue per work-group of the
					// Jacobi kernel: 128-node weak runs of GHN_DGPU
					// peaked at 191 MB (gputn) and 515 MB (gio, more
					// compute units: about 3.5 MB per node), which 128
					// KiB per node (80 MiB in all) did not cover.
					s.perNode = jacobiShmemPerNode + l2TagsBeyondFit(cfg, names[k], math.Inf(1))
				case "GNN_GPURDMA":
					// GPI's queues and the verbs runtime per node, and
					// per work-group of the Jacobi kernel: 128-node weak
					// runs peaked at 176 MB (gputn, 48 work-groups) and
					// 255 MB (gio, 128), about 1.4 and 1.9 MB per node,
					// against 80 MiB estimated with 128 KiB per node.
					s.perNode = jacobiVerbsPerNode + float64(jacobiContexts(cfg))*jacobiVerbsPerWG
				}
			}
			all = append(all, s)
		}
	}
	return all
}

// jacobiContexts bounds the work-groups of the persistent Jacobi kernel
// (workload's persistentWGs): jacobi.max_wgs, else twice the CUs, and no
// more than fit on the GPU at once.
func jacobiContexts(cfg Config) int {
	g := cfg.GPU
	n := cfg.Jacobi.MaxWGs
	if n == 0 {
		n = 2 * g.CUs
	}
	if g.WaveSize > 0 && cfg.Jacobi.WGSize > 0 {
		waves := (cfg.Jacobi.WGSize + g.WaveSize - 1) / g.WaveSize
		n = min(n, g.SIMDs*g.WavesPerSIMD/max(1, waves)*g.CUs)
	}
	return max(1, n)
}

// jacobiKernelPerNode is the Jacobi state per node of the strategies
// that run kernels and streams (not CPU, not device shmem or GIO).
const jacobiKernelPerNode = 3 << 19

// jacobiVerbsPerNode and jacobiVerbsPerWG are the Jacobi state of the
// device-verbs strategy (GNN_GPURDMA) per node and per work-group of its
// kernel.
const (
	jacobiVerbsPerNode = 1 << 20
	jacobiVerbsPerWG   = 8 << 10
)

// jacobiShmemPerNode is the Jacobi state per node of the device-shmem
// strategies (GHN_*, COMPNET).
const jacobiShmemPerNode = 9 << 19

// hierPerGPU is the hierarchical allreduce's state per GPU outside
// GNN_GIO, fitted to the 8,192-GPU payload-free run in the flow model
// (2.3 GB peak, about 280 KB per GPU; docs/today.md), rounded up.
const hierPerGPU = 320 << 10

// gioHierPerGPU is GNN_GIO's hierarchical allreduce state per GPU beside
// its gioPerConn per (context, PE): the runtime, the templater's pending
// closed-form writes, the kernel's work-groups and the intra-node puts in
// flight, fitted to the payload-free tree in the flow model on h100-cx7
// (199 MiB at 512 GPUs, 762 MiB at 2,048: about 300–320 KiB per GPU once
// the pairs' share and the process are taken out; docs/memory.md),
// rounded up. 768 KiB while a payload-free intra-node put carried the
// zeros between its control lines (393 MiB and 1.54 GiB).
const gioHierPerGPU = 384 << 10

// hierSims lists the hierarchical allreduce's runs, one per node count
// and strategy, with nodes × node.gpus ranks. GNN_GIO reserves a
// connection of each context to every other PE (docs/gnn.md; at 2,048
// GPUs its tree took 3.6 GB, about 0.86 KB per pair), so its state grows
// with the square of the GPUs; the others keep a few partners per GPU
// (the node's other GPUs, the ring's or tree's neighbours, the rhd's
// log2 n partners).
func hierSims(cfg Config) []simMem {
	a := cfg.AllreduceHier
	g := max(1, cfg.Node.GPUs)
	var out []simMem
	for _, n := range a.Nodes {
		ranks := float64(n * g)
		for _, st := range a.Strategies {
			s := simMem{nodes: ranks, payload: float64(a.Size), perNode: hierPerGPU, perPeer: 1 << 10,
				peers:      float64(g + 2*bits.Len(uint(n)) + 2),
				nodesParam: "allreduce_hier.nodes", nodesValue: fmt.Sprint(n),
				payloadParam: "allreduce_hier.size", payloadValue: a.Size.String()}
			if st == "GNN_GIO" {
				// A connection of each of its comm_wgs contexts to every
				// other PE.
				s.perNode, s.perPeer = gioHierPerGPU, float64(a.CommWGs)*gioPerConn
				s.peers = 0
			}
			s.perNode += l2TagsBeyondFit(cfg, st, 4*float64(a.Size))
			// The intra-node phases send a GPU's vector at once (but the
			// host's, through shared memory, sends only its chunk over the
			// NIC; see hierPacketBytes).
			inFlight, perPacket := float64(a.Size), float64(hierPacketBytes)
			if st == "CPU" && cfg.MPI.SHM {
				inFlight /= float64(g)
			}
			if st == "GNN_GPURDMA" {
				perPacket = hierVerbsPacket
			}
			s.extra, s.extraParam, s.extraValue = packetsInFlight(cfg, perPacket, ranks, inFlight), "allreduce_hier.size", a.Size.String()
			out = append(out, s)
		}
	}
	return out
}
