package strategy

import (
	"fmt"
	"sync"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/model/verbs"
)

// Strategy is who drives the network: the name of a registered Def.
type Strategy string

// The strategies of the dissertation that are registered. Registry holds the
// full definition of each.
const (
	CPU   Strategy = "CPU"
	HDN   Strategy = "HDN"
	GDS   Strategy = "GDS"
	GPUTN Strategy = "GPUTN"
	// HDNOverlap is HDN with kernels overlapping the host's MPI calls where
	// the algorithm allows (the dissertation).
	HDNOverlap Strategy = "HDN_OVERLAP"
	XTQ        Strategy = "XTQ"
	HSA        Strategy = "HSA"
)

// Info is a row of the qualitative characteristic table (the dissertation).
type Info struct {
	Strategy       Strategy
	Aliases        string
	KernelBoundary string
	GPUTriggered   string
	GPUOverhead    string
	CPUOverhead    string
	Summary        string
}

// All returns the characteristic table of the registered strategies.
func All() []Info {
	var out []Info
	for _, d := range Registry() {
		out = append(out, d.Info)
	}
	return out
}

// Parse returns the registered strategy named s (see Lookup).
func Parse(s string) (Strategy, error) {
	d, err := Lookup(s)
	return d.Strategy, err
}

// Node is one node's programming-model surface under a strategy. Workloads
// use it and never reach into the hardware. The kernel-boundary family's
// handles are fields, nil unless Def.Caps has the capability that names
// them; the other families' handles (device-API backends, task queues,
// NIC handlers) are reached with Get.
type Node struct {
	Strategy Strategy
	Def      Def // the strategy's registry entry (capabilities, preset)
	Rank     int
	Size     int
	Host     *cpu.Thread    // the application's host thread
	Mem      *mem.Memory    // node memory (allocate buffers here)
	Pool     mem.Pool       // where the workload's data lives (host for CPU, GPU otherwise)
	MPI      *mpi.Comm      // CPU, HDN
	Stream   *stream.Stream // HDN, GDS, GPUTN (kernel launches)
	RDMA     *rdma.Endpoint // CPU, GDS, GPUTN
	TN       *gputn.Host    // GPUTN
	GPU      gpu.Spec       // device limits for sizing kernels
	Threads  int            // host cores available for CPU compute
	SW       cost.Spec      // software cost model, for workload-level paths

	caps []any // further capability values (Provide, Get)
}

// Config is what Setup needs besides the cluster.
type Config struct {
	SW  cost.Spec
	MPI mpi.Spec
	// DDT holds the datatype-offload costs of the sPIN strategies (zero:
	// their defaults).
	DDT spinmodel.Costs
	// GNN holds the GPUrdma knobs (zero: their defaults).
	GNN verbs.Spec
	// Shmem holds the device runtime knobs (zero: shmem.DefaultSpec()).
	Shmem shmem.Spec
}

// World is what the node setups of one run share: the cluster, the
// configuration, and run-scoped values (a symmetric heap's layout, a
// table every node registers into) created once by the first node that
// asks.
type World struct {
	Cluster *cluster.Cluster
	Config  Config
	// mu guards shared: on a partitioned cluster the nodes of different
	// partitions run their setups at once, on their engines' goroutines.
	mu     sync.Mutex
	shared map[string]any
}

// NewWorld returns the shared state of one run on c.
func NewWorld(c *cluster.Cluster, cfg Config) *World {
	return &World{Cluster: c, Config: cfg, shared: map[string]any{}}
}

// Shared returns the run-scoped value under key, made by mk on first use.
// mk must not depend on which node asks first (on a partitioned cluster
// that is whichever partition gets there), and a value used by nodes of
// several partitions must be safe for it (each node touching only its
// own part, as shmem.Team's slots).
func (w *World) Shared(key string, mk func() any) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	v, ok := w.shared[key]
	if !ok {
		v = mk()
		w.shared[key] = v
	}
	return v
}

func (w *World) hw(n *Node) *cluster.Node { return w.Cluster.Nodes[n.Rank] }

// Setup builds the programming-model state of node i for strategy s on host
// thread t (call it from t's body, at the start of the run: it costs the
// host the setup software paths).
func Setup(s Strategy, w *World, i int, t *cpu.Thread) (*Node, error) {
	d, err := Lookup(string(s))
	if err != nil {
		return nil, err
	}
	c := w.Cluster
	if d.Caps.Has(NICHandlers) && c.Spec.Network.Model == net.ModelFlow {
		return nil, fmt.Errorf("strategy %s runs packet handlers on the NIC: it needs network.model = packet (the flow model carries whole messages)", d.Strategy)
	}
	hw := c.Nodes[i]
	n := &Node{Strategy: d.Strategy, Def: d, Rank: i, Size: len(c.Nodes), Host: t, Mem: hw.Mem, Pool: mem.GPU,
		GPU: hw.GPU.Spec(), Threads: hw.CPU.Spec().Cores, SW: w.Config.SW}
	if c.Spec.C2C.ArraysInHost() && !d.heapInGPU() {
		// c2c.arrays = host: the workload's buffers are host memory
		// (malloc'd) beyond NVLink-C2C, and so is its GPU's kernel array
		// traffic.
		n.Pool = mem.Host
		hw.GPU.UseHostArrays()
	}
	if err := d.Setup(n, w); err != nil {
		return nil, fmt.Errorf("%s setup on node %d: %w", d.Strategy, i, err)
	}
	return n, nil
}

// heapInGPU reports whether the strategy's workloads keep their data in
// a runtime's symmetric heap or registered segments, which are GPU memory
// whatever c2c.arrays says (NVSHMEM's heap is cudaMalloc'd).
func (d Def) heapInGPU() bool {
	return d.Caps.Has(DeviceShmem) || d.Caps.Has(DeviceVerbs) || d.Strategy == GNNGIO
}

// Provide adds capability value v (a model's handle, e.g. a device-API
// backend) to the node; Get finds it by type.
func (n *Node) Provide(v any) { n.caps = append(n.caps, v) }

// Get returns the node's capability value of type T (the first provided
// value assignable to T), or false when the strategy provides none.
func Get[T any](n *Node) (T, bool) {
	for _, v := range n.caps {
		if t, ok := v.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// Group is the set of host threads of one run, one per node.
type Group struct {
	Nodes []*Node
	World *World
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
	g := &Group{Nodes: make([]*Node, len(c.Nodes)), errs: make([]error, len(c.Nodes)), World: NewWorld(c, cfg)}
	for i, hw := range c.Nodes {
		hw.CPU.Spawn("app", func(t *cpu.Thread) {
			n, err := Setup(s, g.World, i, t)
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
