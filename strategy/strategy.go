// Package strategy names the networking strategies (overview.md §3) and
// composes hardware and programming models into the node setups they run
// on: which agents exist on a node (a host thread, a GPU stream, MPI, the
// GPU-TN host API, one-sided endpoints) and how they are wired.
package strategy

import (
	"fmt"
	"strings"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/stream"
)

// Strategy is who drives the network.
type Strategy string

// Strategies implemented so far.
const (
	CPU   Strategy = "CPU"
	HDN   Strategy = "HDN"
	GDS   Strategy = "GDS"
	GPUTN Strategy = "GPUTN"
)

// Info is a row of the qualitative characteristic table (overview.md §5).
type Info struct {
	Strategy       Strategy
	Aliases        string
	KernelBoundary string
	GPUTriggered   string
	GPUOverhead    string
	CPUOverhead    string
	Summary        string
}

var infos = []Info{
	{CPU, "CPU", "n/a", "n/a", "n/a", "Everything", "no GPU: host threads compute and drive MPI"},
	{HDN, "HDN, Inter-Kernel, Inter-K", "Yes", "No", "–", "Network stack", "GPU kernels; the host does MPI at kernel boundaries"},
	{GDS, "GDS", "Yes", "Yes", "Network trigger", "Partial network stack", "CPU pre-posts puts; the GPU's CP rings them after each kernel"},
	{GPUTN, "GPU-TN", "No", "Yes", "Network trigger", "Partial network stack", "CPU registers triggered puts; the kernel fires them with a store"},
}

// All returns the characteristic table of the implemented strategies.
func All() []Info { return append([]Info(nil), infos...) }

// Parse returns the strategy named s (case-insensitive; "GPU-TN" accepted).
func Parse(s string) (Strategy, error) {
	norm := strings.ReplaceAll(strings.ToUpper(s), "-", "")
	var names []string
	for _, in := range infos {
		if string(in.Strategy) == norm {
			return in.Strategy, nil
		}
		names = append(names, string(in.Strategy))
	}
	return "", fmt.Errorf("unknown strategy %q: must be one of %s", s, strings.Join(names, ", "))
}

// Node is one node's programming-model surface under a strategy. Workloads
// use it and never reach into the hardware. Fields a strategy does not use
// are nil.
type Node struct {
	Strategy Strategy
	Rank     int
	Size     int
	Host     *cpu.Thread    // the application's host thread
	Mem      *mem.Memory    // node memory (allocate buffers here)
	Pool     mem.Pool       // where the workload's data lives (host for CPU, GPU otherwise)
	MPI      *mpi.Comm      // CPU, HDN
	Stream   *stream.Stream // HDN, GDS, GPUTN (kernel launches)
	RDMA     *rdma.Endpoint // GDS, GPUTN
	TN       *gputn.Host    // GPUTN
	GPU      gpu.Spec       // device limits for sizing kernels
	Threads  int            // host cores available for CPU compute
	SW       cost.Spec      // software cost model, for workload-level paths
}

// Config is what Setup needs besides the cluster.
type Config struct {
	SW  cost.Spec
	MPI mpi.Spec
}

// Setup builds the programming-model state of node i for strategy s on host
// thread t (call it from t's body, at the start of the run: it costs the
// host the setup software paths).
func Setup(s Strategy, c *cluster.Cluster, i int, t *cpu.Thread, cfg Config) (*Node, error) {
	hw := c.Nodes[i]
	n := &Node{Strategy: s, Rank: i, Size: len(c.Nodes), Host: t, Mem: hw.Mem, Pool: mem.GPU,
		GPU: hw.GPU.Spec(), Threads: hw.CPU.Spec().Cores, SW: cfg.SW}
	var err error
	switch s {
	case CPU:
		n.Pool = mem.Host
		n.MPI, err = mpi.Init(t, hw.NIC, i, n.Size, cfg.MPI, cfg.SW)
	case HDN:
		n.MPI, err = mpi.Init(t, hw.NIC, i, n.Size, cfg.MPI, cfg.SW)
		n.Stream = stream.New(t, hw.GPU, hw.NIC, cfg.SW)
	case GDS:
		n.Stream = stream.New(t, hw.GPU, hw.NIC, cfg.SW)
		n.RDMA = rdma.New(t, hw.NIC, cfg.SW)
	case GPUTN:
		n.Stream = stream.New(t, hw.GPU, hw.NIC, cfg.SW)
		n.RDMA = rdma.New(t, hw.NIC, cfg.SW)
		n.TN = gputn.NewHost(t, hw.NIC, cfg.SW)
	default:
		return nil, fmt.Errorf("strategy %q has no node setup", s)
	}
	return n, err
}

// Group is the set of host threads of one run, one per node.
type Group struct {
	Nodes []*Node
	errs  []error
}

// Err returns the first error a node body or setup reported.
func (g *Group) Err() error {
	for _, err := range g.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Spawn starts one application host thread per node of c. Each sets up
// strategy s and runs body. Errors are collected for Group.Err after the
// engine ran.
func Spawn(c *cluster.Cluster, s Strategy, cfg Config, body func(n *Node) error) *Group {
	g := &Group{Nodes: make([]*Node, len(c.Nodes)), errs: make([]error, len(c.Nodes))}
	for i, hw := range c.Nodes {
		hw.CPU.Spawn("app", func(t *cpu.Thread) {
			n, err := Setup(s, c, i, t, cfg)
			if err != nil {
				g.errs[i] = err
				return
			}
			g.Nodes[i] = n
			g.errs[i] = body(n)
		})
	}
	return g
}
