package exp

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/workload"
)

// haloState returns the halo exchange's state per GPU and per neighbour
// under strategy st, fitted to the peak RSS of payload-free runs of 6 and
// 26 neighbours with 64 KiB faces at 16 to 1,024 GPUs on each strategy's
// preset and on h100-cx7 and mi300a-ss11 (docs/memory.md, "Halo exchange
// and MoE"), rounded up. The per-GPU part is the node model (host, GPU,
// NIC, their agents) and the strategy's runtime; the per-neighbour part
// the connections, queues, registered triggered puts and flag lines of
// one direction. HDN's per-GPU part covers the 8,192-GPU runs of
// docs/today.md (3.4 GB at 6 neighbours on h100-cx7, about 415 KB per
// GPU: the larger fat tree). GNN_GIO is not here: its contexts reserve
// a connection to every PE (gioHaloState).
func haloState(st string) (perGPU, perNeighbour float64) {
	switch st {
	case "CPU":
		return 256 << 10, 4 << 10
	case "HDN", "HDN_OVERLAP":
		return 512 << 10, 4 << 10
	case "GDS":
		return 448 << 10, 8 << 10
	case "GPUTN":
		return 256 << 10, 16 << 10
	case "HSA":
		return 512 << 10, 4 << 10
	case "GHN_DGPU", "GHN_DGPU_HOSTQ", "GHN_APU", "COMPNET":
		return 1 << 20, 16 << 10
	case "GNN_GPURDMA":
		return 256 << 10, 32 << 10
	}
	return memPerNode, memPerPeer
}

// gnnQPBytes is one device-verbs RC QP of a GPU to a peer beyond the
// default gnn.qps (its queues, doorbell record and the templater's state):
// 5.7 KB measured in the halo exchange and 6.9 KB in the MoE all-to-all
// on h100-cx7 (EP 16 at gnn.qps = 1,024 peaked at 1.73 GB); 8 KiB rounds
// up.
const gnnQPBytes = 8 << 10

// gnnQPsBeyondDefault is the state per (GPU, peer) of the QPs that
// gnn.qps asks of GNN_GPURDMA beyond its default, whose state the fitted
// per-peer terms hold; 0 for other strategies.
func gnnQPsBeyondDefault(cfg Config, st string) float64 {
	if st != "GNN_GPURDMA" {
		return 0
	}
	def := verbs.DefaultSpec().QPs
	return float64(max(0, cfg.GNN.QPs-def)) * gnnQPBytes
}

// gioSets is how many QP sets a GNN_GIO PE keeps to every other PE for
// contexts work-groups: one per context, or shmem.gio.qps_per_peer shared
// by them.
func gioSets(cfg Config, contexts int) int {
	sets := max(1, contexts)
	if n := cfg.Shmem.GIO.QPsPerPeer; n > 0 {
		sets = min(sets, n)
	}
	return sets
}

// halo3DSims lists the halo exchange's runs: one per stencil, node count,
// face and strategy, with nodes × node.gpus ranks. A functional run holds
// each rank's send and receive regions (double-buffered by the one-sided
// implementations: 4 regions counted for all).
func halo3DSims(cfg Config) []simMem {
	h := cfg.Halo3D
	g := max(1, cfg.Node.GPUs)
	var out []simMem
	for _, nb := range h.Neighbours {
		for _, n := range h.Nodes {
			ranks := n * g
			hw := workload.Halo3D{Face: h.MaxFace, Neighbours: nb}
			payloadParam, payloadValue := "halo3d.max_face", h.MaxFace.String()
			if h.Scaling == "strong" {
				dm := workload.Dims3(ranks)
				for k := range 3 {
					hw.Local[k] = (h.Domain + dm[k] - 1) / dm[k]
				}
				payloadParam, payloadValue = "halo3d.domain", fmt.Sprint(h.Domain)
			}
			payload := 4 * float64(hw.RegionBytes())
			for _, st := range h.Strategies {
				s := simMem{nodes: float64(ranks), peers: float64(min(nb, ranks-1)), payload: payload,
					nodesParam: "halo3d.nodes", nodesValue: fmt.Sprint(n), payloadParam: payloadParam, payloadValue: payloadValue}
				s.perNode, s.perPeer = haloState(st)
				s.perNode += l2TagsBeyondFit(cfg, st, payload*l2HaloShare) // the regions' lines the exchange touches
				s.extra, s.extraParam, s.extraValue = packetsInFlight(cfg, haloPacketCost(st), float64(ranks), float64(hw.RegionBytes())), payloadParam, payloadValue
				s.qps = gnnQPsBeyondDefault(cfg, st)
				s.perPeer += s.qps
				if st == "GNN_GIO" {
					// The persistent kernel's work-groups are its contexts.
					w := min(nb, cfg.GPU.CUs)
					if h.CommWGs > 0 {
						w = h.CommWGs
					}
					s.perNode, s.perPeer, s.peers = gioHaloPerGPU+float64(w)*gioHaloPerWG, float64(gioSets(cfg, w))*gioHaloPerConn, 0
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// Packets in flight: in the packet model a message is split into
// link.payload packets as it is sent, and every packet of the exchange's
// messages holds its packet and events (payload-free too) until it has
// landed, so large messages cost memory in proportion to their bytes
// (the per-GPU fits above are at 64 KiB faces, where this is small). Peak
// RSS over packets sent (2026-11-27, payload-free, 4 KiB packets): the
// 6-neighbour halo on two nodes, 1 MiB against 16 MiB faces, 300–530 B
// per packet on h100-cx7, gh200-cx7 and mi300a-ss11 for every strategy but
// GNN_GIO, 780–990 B for GNN_GIO (1.3 KB with halo3d.iters = 2) until its
// payload-free NIC reads through the PPB stopped carrying a buffer
// (8f66cc0): since then 430–480 B on h100-cx7 at 16 MiB faces (peak
// 186–205 MiB, 2026-11-28), and GNN_GIO keeps 1 KiB to cover a second
// iteration's packets (the ratio was 1.4 before); the
// hierarchical allreduce of 256 MiB on two nodes 195–250 B per packet of
// the vector (GDS, HDN, GPU-TN; GNN_GIO 330 B), GNN_GPURDMA 420 B. Without
// this a 16 MiB-face halo on two nodes (1.34 GB for GNN_GIO) was
// estimated at 51 MiB and a strong-scaling halo of halo3d.domain = 65536
// grew past 2.5 GB in 20 s against 56 MiB estimated.
const (
	haloPacketBytes    = 640
	haloGIOPacketBytes = 1024
	hierPacketBytes    = 384
	hierVerbsPacket    = 512 // GNN_GPURDMA
)

// haloPacketCost is the memory a packet in flight of the halo exchange
// holds under strategy st.
func haloPacketCost(st string) float64 {
	if st == "GNN_GIO" {
		return haloGIOPacketBytes
	}
	return haloPacketBytes
}

// packetsInFlight is the memory of the packets of ranks GPUs sending
// bytes each at once, perPacket bytes a packet: none in the flow model (a
// message is one flow).
func packetsInFlight(cfg Config, perPacket, ranks, bytes float64) float64 {
	if cfg.Network.Model == "flow" || cfg.Link.Payload <= 0 {
		return 0
	}
	return ranks * math.Ceil(bytes/float64(cfg.Link.Payload)) * perPacket
}

// moeState returns the MoE layer's state per GPU, per entry a GPU sends
// (tokens × the experts each token sends to: moeBytes's K) and per (GPU,
// peer) pair under strategy st on nodes of gpus GPUs: every GPU sends to
// every other, so the pair term is the all-to-all's (connections, QPs,
// per-pair slots and flags). Fitted to the peak RSS of payload-free
// low-latency runs (packet model) and throughput runs (flow model) at EP
// 16 to 64 on each strategy's preset, h100-cx7 and mi300a-ss11
// (docs/memory.md, "Halo exchange and MoE"), rounded up. In the packet
// model the packets and events of every entry in flight dominate: in
// low-latency mode about a twelfth of the bytes the GPU's buffers hold
// (4.0–5.4 MB per GPU at 128 tokens, where the buffers hold 49 MB), which
// moeSims counts as an eighth of the buffers; in throughput mode about 2
// KB per entry with one GPU per node (67 MB per GPU at EP 8, 32,768
// entries of 7.4 KB), 0.6–0.9 KB on h100-cx7 at EP 16 and 32, which
// moeSims counts as a third of the entry's bytes; in the flow model a flow per message, the device-shmem
// runtimes' put descriptors and queue entries (7–9 MB per GPU at 4,096
// tokens × 8 entries), and GDS's peer copies to the node's other GPUs,
// whose entries' headers and flags travel as real bytes (about 140 B per
// entry and peer GPU of the node: 31 and 16 MB per GPU at EP 32 and 64 on
// h100-cx7, 5.8 MB at EP 64 on mi300a-ss11, none with one GPU per node).
// GPUrdma keeps a QP, its CQ and the rings' slots per peer (about 25–38 KB
// per pair from EP 16 to 128), and in the flow model each low-latency
// entry's write carries its bytes (6.7 MB per GPU at EP 64 on h100-cx7,
// 1,024 entries of 7.4 KB): entryBytes per entry there.
func moeState(st string, flow bool, gpus int, entryBytes float64) (perGPU, perEntry, perPeer float64) {
	perGPU, perPeer = 256<<10, 4<<10
	switch st {
	case "GHN_DGPU", "GHN_DGPU_HOSTQ", "GHN_APU", "COMPNET":
		perGPU = 1 << 20
		if flow { // 230–420 B per entry measured
			perEntry = 768
		}
	case "GDS":
		if flow {
			perEntry = 32 + 192*float64(max(0, gpus-1))
		}
	case "GNN_GPURDMA":
		perPeer = 32 << 10
		if flow {
			perEntry = max(32, entryBytes)
		}
	case "GNN_GIO": // its contexts' state is added by moeSims
		if flow { // 140 B per entry at EP 16 on gio, 190 B at EP 32 on h100-cx7 when stopped at 300 s;
			// its low-latency entries are RDMA writes as GPUrdma's (not measured in the flow model)
			perEntry = max(384, entryBytes)
		}
	default:
		if flow {
			perEntry = 32
		}
	}
	return perGPU, perEntry, perPeer
}

// moeSims lists the MoE runs: one per mode, EP count and strategy. A
// point runs functionally when its buffers (all GPUs) fit in
// moe.verify_max; each GPU then holds its share. Every GPU keeps its
// tokens' routing (expert and weight, and the entry index of a functional
// run: 12 B per token and choice: its expert and weight, and a functional
// run's entry index).
func moeSims(cfg Config) []simMem {
	m := cfg.MoE
	flow := cfg.Network.Model == net.ModelFlow
	var out []simMem
	for _, mode := range m.Modes {
		for _, ep := range m.EP {
			buf := float64(m.moeBytes(ep, mode)) / float64(max(1, ep)) // per GPU
			entries := float64(m.tokens(mode)) * float64(m.entriesPerToken(ep, mode))
			entryBytes := 0.0 // a low-latency entry: FP8 activations, scales and header
			if mode == workload.MoELowLatency {
				entryBytes = float64(m.Hidden + m.Hidden/32 + 24)
			}
			payload := 0.0
			if m.moeBytes(ep, mode) <= m.VerifyMax {
				payload = buf
			}
			for _, st := range m.Strategies {
				perGPU, perEntry, perPeer := moeState(st, flow, cfg.Node.GPUs, entryBytes)
				// GNN_GIO's NIC reads GPU memory through its PPB, and a
				// payload-free packet read there without control words
				// carries no buffer (the empty payload at its end:
				// nic.Packet.DataAt); those with an entry's header line
				// still carry one. The 16-GPU low-latency run on gio
				// peaked at 89.5 MiB when every packet carried a buffer,
				// 59.5 MiB since; half the term is kept.
				// GHN_DGPU's low-latency packets likewise hold less since
				// its NIC recycles each put's message records once the ack
				// is back (hw/nic): on compnet payload-free it peaked at
				// 38.8, 58.6 and 97.3 MB at EP 16, 32 and 64 (46.9, 70.0
				// and 130.0 MB before); half the term is kept for it too.
				// GHN_APU, GHN_DGPU_HOSTQ and COMPNET peaked where they did
				// (84–87, 157–168 and 266–314 MB): their helpers' and
				// CP's queue state, not the packets, sets their peak.
				halfPackets := (st == "GNN_GIO" || st == "GHN_DGPU") && !cfg.Run.Functional
				if !flow {
					if mode == workload.MoELowLatency && halfPackets {
						perGPU += buf / 16
					} else if mode == workload.MoELowLatency {
						perGPU += buf / 8
					} else { // an entry's packets: a third of its bytes
						perGPU += entries * float64(m.Hidden+m.Hidden/32+16+4*m.TopK) / 3
					}
				}
				perGPU += entries*perEntry + l2TagsBeyondFit(cfg, st, buf)
				if st == "GNN_GIO" {
					// Its contexts' QPs to every peer, the templater's
					// slots of each (64 of 64 B) and what connect reserves.
					perGPU += gioPerNode + float64(m.CommWGs)*gioPerWG
					perPeer = float64(gioSets(cfg, m.CommWGs)) * gioMoEPerSet
				}
				qps := gnnQPsBeyondDefault(cfg, st)
				perPeer += qps
				out = append(out, simMem{nodes: float64(ep), peers: float64(max(1, ep-1)), perNode: perGPU, perPeer: perPeer, qps: qps, payload: payload,
					extra:      float64(ep) * float64(m.tokens(mode)) * float64(m.TopK) * 12,
					extraParam: "moe.ep", extraValue: fmt.Sprint(ep),
					nodesParam: "moe.ep", nodesValue: fmt.Sprint(ep), payloadParam: "moe.verify_max", payloadValue: m.VerifyMax.String()})
			}
		}
	}
	return out
}

// gioMoEPerSet is GNN_GIO's state per QP set and peer in the MoE: the QP
// pair and CQ made on first use, the templater's 64 slots of each QP
// (64 B WQEs), what connect reserves. The low-latency runs on gio (24 sets
// per peer) grew by 137 KB per GPU and peer from EP 16 to 32, about 5.7
// KB per set; rounded up.
const gioMoEPerSet = 8 << 10

// GNN_GIO's state in the halo exchange since its per-PE arrays follow use
// (docs/memory.md, "What follows use in payload-free runs"): per GPU
// (the node model and the runtime), per context (a work-group: its
// connections' QPs, CQs and memory regions, their slots' shadows, its
// queue and context) and per QP set and other PE (the chunk tables of its
// connections and templated counts, the templater's bits: about 1.3 B with
// template_at_init, 5.3 B without, where every count is written). Fitted
// to the payload-free weak runs with 64 KiB faces on h100-cx7 (2 shared
// sets): 26 neighbours 1.31, 1.27, 1.35, 1.40 MB per GPU at 512, 1,024,
// 2,048, 8,192 GPUs, 6 neighbours 0.466 MB at 8,192 (3.82 GB): 47 KB per
// context and 0.19 MB per GPU, rounded up; the estimate then bounds the
// 8,192-GPU peaks by 1.2× (26) and 1.5× (6), where 1 MiB + 32 KiB per
// context and 16 B per set and PE (gioPerNode, gioPerWG, gioPerConn, still
// the MoE's and the allreduce's) were 1.5× and 3.2×.
const (
	gioHaloPerGPU  = 256 << 10
	gioHaloPerWG   = 48 << 10
	gioHaloPerConn = 8
)

// gioPerWG is GNN_GIO's state per context (a work-group of the persistent
// kernel: its queue, its share of the templater's and the CQ's state) in
// the halo exchange and MoE, fitted beside gioPerNode: the 26-neighbour
// halo on 256 GPUs of h100-cx7 (26 contexts, 2 QP sets per peer) peaked at
// 1.14 MB per GPU.
const gioPerWG = 32 << 10

// l2Streamers are the strategies whose GPUs stream their data through the
// L2 tag model (the device-shmem puts' loads and stores). A GPU's tag
// array is made in blocks of 64 sets as lines of them are first filled,
// each block holding the ways its sets use (hw/gpu, L2: one way of each
// set at first, doubled when a fill finds them all valid), 16 bytes a way
// (its key and state): a streamed line costs about one way, up to two
// after a doubling, and the whole array (16 bytes per 64-byte line of
// gpu_l2.size) bounds it. The other strategies' GPUs touch few lines or
// none.
var l2Streamers = map[string]bool{"GHN_DGPU": true, "GHN_DGPU_HOSTQ": true, "GHN_APU": true, "COMPNET": true}

// l2TagsBeyondFit is the L2 tag state per GPU of strategy st, streaming
// about streamed bytes through its L2, beyond that of the 1 MiB L2 of the
// presets the per-strategy constants were fitted on (compnet, gputn): 0
// but for the l2Streamers.
func l2TagsBeyondFit(cfg Config, st string, streamed float64) float64 {
	if !l2Streamers[st] {
		return 0
	}
	tags := func(size float64) float64 { return size / mem.LineSize * l2TagBytesPerLine }
	return max(0, min(tags(float64(cfg.L2.Size)), l2TagsPerStreamedByte*streamed)-tags(1<<20))
}

const (
	// l2TagBytesPerLine is the L2 tag model's state per way (hw/gpu:
	// the way's key, 8 B, and its l2line, 8 B).
	l2TagBytesPerLine = 16
	// l2TagsPerStreamedByte is the tag state per byte a GPU streams
	// through its L2: two ways (a block doubled) of 16 B per 64-byte
	// line.
	l2TagsPerStreamedByte = 2 * l2TagBytesPerLine / float64(mem.LineSize)
	// l2HaloShare is the share of the halo exchange's four regions per
	// GPU whose lines the exchange passes through the L2 tag model, by
	// the tag state measured (2026-11-28, blocks holding the ways in
	// use, payload-free, 64 KiB faces, 26 neighbours): 49 KB per GPU on
	// 512 GPUs of mi300a-ss11 (GHN_APU) and 72 KB on 64 GPUs of h100-cx7
	// (GHN_DGPU), for 1.6 MB of regions: 0.10-0.15 of
	// l2TagsPerStreamedByte's; rounded up.
	l2HaloShare = 0.25
)
