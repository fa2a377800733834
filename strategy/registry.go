package strategy

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/stream"
)

// Cap is a set of programming-model capabilities (design-families.md): what
// a workload can program against on a node. A strategy provides a set; a
// workload implementation needs one.
type Cap uint32

// The capabilities. Each names the model package a workload calls.
const (
	// TwoSided: MPI send/recv and nonblocking collectives on the host
	// (model/mpi, model/nbc; Node.MPI).
	TwoSided Cap = 1 << iota
	// HostCompute: the host's threads do the computing; there is no GPU in
	// the strategy (Node.Threads, cpu.Thread.Compute).
	HostCompute
	// Stream: a GPU stream on the host (kernel launch, wait, GDS stream
	// operations; model/stream; Node.Stream).
	Stream
	// StreamTriggered: the CP rings pre-posted NIC commands and waits on
	// values between kernels (GDS; Node.Stream with Node.RDMA).
	StreamTriggered
	// OneSided: host one-sided puts into exposed regions, pre-postable
	// (model/rdma; Node.RDMA).
	OneSided
	// Triggers: GPU-TN triggered operations registered by the host and
	// fired by a GPU store (model/gputn; Node.TN).
	Triggers
	// Overlap: kernels may run while the host drives MPI (HDN_OVERLAP).
	Overlap
	// DeviceShmem: the OpenSHMEM-style device API for work-groups
	// (model/shmem), served by a backend (GHN, ComP-Net, GIO).
	DeviceShmem
	// DeviceVerbs: GPU threads post verbs work requests and poll CQs, with
	// the GPI subset on top (GPUrdma).
	DeviceVerbs
	// RemoteTasks: remote kernel launch by message (XTQ, HSA).
	RemoteTasks
	// NICHandlers: sPIN packet handlers on the NIC.
	NICHandlers
	// NICTasks: the NIC itself turns an arriving task into a GPU dispatch,
	// one-sided, no target CPU on the path (XTQ). HSA's remote tasks need
	// the target CPU and its two-sided messaging, so its Accumulate,
	// Reduce and Allreduce run the CPU's MPI path with each reduction a
	// GPU kernel (the dissertation's §4.3.1, §4.3.3).
	NICTasks
)

var capNames = []string{"two-sided", "host-compute", "stream", "stream-triggered", "one-sided", "triggers",
	"overlap", "device-shmem", "device-verbs", "remote-tasks", "nic-handlers", "nic-tasks"}

// Has reports whether c contains every capability of need.
func (c Cap) Has(need Cap) bool { return c&need == need }

// String lists the capabilities joined by "+".
func (c Cap) String() string {
	var parts []string
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Def is one strategy of the registry: its name, its row of the
// characteristic table, the capabilities it provides, the hardware it runs
// on, and the setup that wires hardware to those capabilities.
type Def struct {
	Info
	// Caps is what a workload may program against under this strategy.
	Caps Cap
	// Preset is the hardware preset the documents use for it
	// (the dissertation).
	Preset string
	// GPUMode, when set ("apu" or "dgpu"), is the memory mode the strategy
	// runs in whatever the preset's (the dissertation: GHN_APU is APU mode).
	GPUMode string
	// Setup fills node n's capabilities from its hardware. It runs in the
	// application host thread at the start of the run and costs the host
	// the setup software paths.
	Setup func(n *Node, w *World) error
}

// Adjust returns the hardware spec a run of this strategy uses: spec with
// the strategy's memory mode applied.
func (d Def) Adjust(spec cluster.Spec) cluster.Spec {
	if d.GPUMode != "" {
		spec.GPU.Mode = d.GPUMode
	}
	return spec
}

// Registry returns every strategy, in the order of the characteristic
// table. It is the single list the experiments, the matrix and the CLI
// read.
func Registry() []Def {
	return append([]Def{
		{Info: Info{CPU, "CPU", "n/a", "n/a", "n/a", "Everything", "no GPU: host threads compute and drive MPI"},
			Caps: TwoSided | HostCompute, Preset: "gputn", Setup: setupCPU},
		{Info: Info{HDN, "HDN, Inter-Kernel, Inter-K", "Yes", "No", "–", "Network stack", "GPU kernels; the host does MPI at kernel boundaries"},
			Caps: TwoSided | Stream, Preset: "gputn", Setup: setupHDN},
		// HDN_OVERLAP is HDN's node (MPI and a stream) with one more
		// capability: a workload may leave an independent kernel running
		// while the host drives MPI. Workloads without independent work
		// (the ring allreduce) run their kernel-boundary implementation.
		{Info: Info{HDNOverlap, "Inter-K-Overlap (GIO)", "Yes", "No", "–", "Network stack", "HDN, with an independent kernel running while the host does MPI"},
			Caps: TwoSided | Stream | Overlap, Preset: "gputn", Setup: setupHDN},
		{Info: Info{GDS, "GDS", "Yes", "Yes", "Network trigger", "Partial network stack", "CPU pre-posts puts; the GPU's CP rings them after each kernel"},
			Caps: Stream | StreamTriggered | OneSided, Preset: "gputn", Setup: setupGDS},
		{Info: Info{GPUTN, "GPU-TN", "No", "Yes", "Network trigger", "Partial network stack", "CPU registers triggered puts; the kernel fires them with a store"},
			Caps: Stream | OneSided | Triggers, Preset: "gputn", Setup: setupGPUTN},
		{Info: Info{XTQ, "XTQ", "Yes (optimised)", "No", "–", "Network stack (initiator only)", "the initiator's put carries an AQL packet; the target NIC enqueues it into the GPU queue, no target CPU"},
			Caps: RemoteTasks | NICTasks, Preset: "xtq", Setup: setupXTQ},
		{Info: Info{HSA, "HSA", "Yes", "No", "–", "Network stack both sides + target task enqueue", "two-sided send; the target CPU builds the AQL packet and enqueues it"},
			Caps: TwoSided | Stream | RemoteTasks, Preset: "xtq", Setup: setupHSA},
	}, append(append(spinDefs(), gnnDefs()...), shmemDefs()...)...)
}

// Lookup returns the registered strategy named s (case-insensitive; "-"
// and "_" ignored, so "GPU-TN" and "gputn" both name GPUTN).
func Lookup(s string) (Def, error) {
	norm := normalize(s)
	var names []string
	for _, d := range Registry() {
		if normalize(string(d.Strategy)) == norm {
			return d, nil
		}
		names = append(names, string(d.Strategy))
	}
	return Def{}, fmt.Errorf("unknown strategy %q: must be one of %s", s, strings.Join(names, ", "))
}

// normalize upper-cases s and drops its '-' and '_' (a Replacer built per
// call was 47 MB of garbage per 64-node allreduce benchmark: the
// configuration checks look every strategy up many times).
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
}

func setupCPU(n *Node, w *World) (err error) {
	n.Pool = mem.Host
	n.MPI, err = mpi.Init(n.Host, w.hw(n).NIC, n.Rank, n.Size, w.Config.MPI, w.Config.SW)
	if err == nil {
		useSHM(n, w)
	}
	// The thin RDMA layer under the CPU active message of the XTQ
	// chapter's remote task spawn (RdmaPostBuffer and puts, not MPI).
	n.RDMA = rdma.New(n.Host, w.hw(n).NIC, w.Config.SW)
	return err
}

func setupHDN(n *Node, w *World) (err error) {
	hw := w.hw(n)
	n.MPI, err = mpi.Init(n.Host, hw.NIC, n.Rank, n.Size, w.Config.MPI, w.Config.SW)
	n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
	if err != nil {
		return err
	}
	useGPUAwareMPI(n, w)
	return nil
}

// useGPUAwareMPI gives a GPU-aware MPI its paths inside a node of several
// GPUs: rendezvous messages between GPU buffers by a copy engine
// (mpi.ipc) and every message through shared memory (mpi.shm, useSHM).
// Only nodes of several GPUs have peers.
func useGPUAwareMPI(n *Node, w *World) {
	if hw := w.hw(n); hw.Peer != nil {
		n.MPI.UseIPC(hw.Peer, nodeIPC(n, w))
	}
	useSHM(n, w)
}

// useSHM gives the rank's MPI the intra-node shared-memory path
// (mpi.shm) on nodes of several GPUs, with its node's registry of ranks
// and exposed buffers (the one mpi.ipc uses).
func useSHM(n *Node, w *World) {
	if hw := w.hw(n); hw.Peer != nil {
		n.MPI.UseSHM(hw.Peer, nodeIPC(n, w))
	}
}

// nodeIPC is the registry of n's node: the ranks of one node share it,
// and only they (a partitioned run keeps a node's GPUs on one engine, so
// no two engines touch one registry).
func nodeIPC(n *Node, w *World) *mpi.IPC {
	node := w.Cluster.NodeOf(n.Rank)
	return w.Shared(fmt.Sprintf("mpi.ipc/node[%d]", node), func() any { return mpi.NewIPC() }).(*mpi.IPC)
}

func setupGDS(n *Node, w *World) error {
	hw := w.hw(n)
	n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
	n.Stream.UsePeer(hw.Peer) // cudaMemcpyPeerAsync to GPUs of the same node
	n.RDMA = rdma.New(n.Host, hw.NIC, w.Config.SW)
	return nil
}

func setupGPUTN(n *Node, w *World) error {
	hw := w.hw(n)
	n.Stream = stream.New(n.Host, hw.GPU, hw.NIC, w.Config.SW)
	n.RDMA = rdma.New(n.Host, hw.NIC, w.Config.SW)
	n.TN = gputn.NewHost(n.Host, hw.NIC, w.Config.SW)
	return nil
}
