package cluster

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cp"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/hw/peer"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Node is one machine of the cluster.
type Node struct {
	ID   int
	Name string // "node[3]"
	Mem  *mem.Memory
	DRAM *mem.Server
	CPU  *cpu.CPU
	GPU  *gpu.GPU
	NIC  *nic.NIC
	PCIe *pcie.Link // the NIC's attachment: PCIe, or on an APU the coherent system directory (soc.nic_attach)
	// GPULink is the GPU's attachment: its stores to host memory and its
	// MMIO writes to the NIC start here (GPU-native networking).
	GPULink *pcie.Link
	// C2C is the chip-to-chip link between the CPU and the GPU
	// (NVLink-C2C, c2c.on): the GPU's memory on one side, the
	// host memory and the NIC's root complex on the other; GPULink is
	// then this link. nil elsewhere.
	C2C *pcie.Link
	CP  *cp.CP // the GPU's command-processor cores (service threads)
	// Peer is the GPU's access to the other GPUs of its node (their
	// memory by loads, stores, atomics and copy engines); nil with one
	// GPU per node.
	Peer *peer.Port
}

// Cluster is the whole machine.
type Cluster struct {
	Spec Spec
	// Engine runs the simulation; in a partitioned cluster (NewPartitioned)
	// it is partition 0's, and Run, Events and Close drive the Group.
	Engine *sim.Engine
	Fabric *net.Fabric
	Nodes  []*Node
	// Group is the partitioned engine (NewPartitioned), nil for one
	// engine; Part[i] is node i's partition.
	Group *sim.Group
	Part  []int
	// Slots places the ranks of a run on fewer GPUs than whole nodes
	// (node.placement): rank i sits on GPU slot Slots[i] (GPU slot mod
	// node.gpus of node slot / node.gpus); nil when rank i is slot i.
	Slots []int
	// noCheck turns the end-of-run invariant check off (SetCheckInvariants).
	noCheck bool
}

// Slot returns the GPU slot of rank i: its node is Slot(i) / node.gpus.
func (c *Cluster) Slot(i int) int {
	if c.Slots != nil {
		return c.Slots[i]
	}
	return i
}

// NodeOf returns the machine node rank i sits on.
func (c *Cluster) NodeOf(i int) int { return c.Slot(i) / max(1, c.Spec.Node.GPUs) }

// New builds n nodes from spec on engine e. With functional false the
// memories carry no payload bytes (timing is unchanged). n GPUs that are
// not whole nodes of node.gpus are placed on the GPUs of whole nodes by
// node.placement (net.NodeSpec.Slots): the other GPUs hold no rank.
func New(e *sim.Engine, spec Spec, n int, functional bool) (*Cluster, error) {
	c, err := newFabric(e, spec, n)
	if err != nil {
		return nil, err
	}
	c.buildNodes(functional, func(int) *sim.Engine { return e }, func(int) *net.Fabric { return c.Fabric })
	e.AddEndCheck(c.Invariants)
	return c, nil
}

// newFabric validates spec and builds the cluster's fabric on e.
func newFabric(e *sim.Engine, spec Spec, n int) (*Cluster, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("cluster: %d nodes: need at least 1", n)
	}
	slots, total := spec.Node.Slots(n)
	fab, err := net.New(e, total, spec.Link, spec.Switch, spec.Topology)
	if err != nil {
		return nil, err
	}
	if err := fab.UseNodeFabric(spec.Node); err != nil {
		return nil, err
	}
	if slots != nil {
		if err := fab.Place(slots); err != nil {
			return nil, err
		}
	}
	if spec.Network.Model == net.ModelFlow {
		fab.UseFlows()
		if spec.Network.FlowBundle == net.BundleAggregate {
			fab.AggregateBundles()
		}
		fab.SetFlowInterval(spec.Network.FlowInterval)
	}
	return &Cluster{Spec: spec, Engine: e, Fabric: fab, Slots: slots}, nil
}

// buildNodes builds the nodes, node i on engine engineOf(i) attached to
// fabric fabricOf(i).
func (c *Cluster) buildNodes(functional bool, engineOf func(int) *sim.Engine, fabricOf func(int) *net.Fabric) {
	spec := c.Spec
	flows := spec.Network.Model == net.ModelFlow
	gpus := max(1, spec.Node.GPUs)
	cpuSpec := spec.CPU
	// A node of several GPUs gives each GPU's rank an equal share of its
	// host cores; the host DRAM is one server the ranks contend for.
	cpuSpec.Cores = max(1, cpuSpec.Cores/gpus)
	var dram *mem.Server
	for i := range c.Fabric.Endpoints() {
		e, fab := engineOf(i), fabricOf(i)
		name := fmt.Sprintf("node[%d]", i)
		slot := c.Slot(i)
		if gpus > 1 {
			name = fmt.Sprintf("node[%d].gpu[%d]", slot/gpus, slot%gpus)
		}
		m := mem.New(name+".mem", functional)
		if i == 0 || c.NodeOf(i) != c.NodeOf(i-1) || spec.C2C.On {
			// On a superchip node each superchip's CPU has its own memory
			// (the Grace's LPDDR5X, cpu.dram_bandwidth per superchip).
			dram = mem.NewServer(float64(spec.CPU.DRAMBandwidth))
		}
		gdram := dram
		if spec.GPU.Mode == "dgpu" || spec.C2C.On {
			// A dGPU's memory, or a superchip's HBM beyond NVLink-C2C: the
			// GPU's own memory server; the host's is the CPU's memory.
			gdram = mem.NewServer(float64(spec.GPU.MemBandwidth))
		}
		link := pcie.New(spec.PCIe)
		if spec.SoC.NICAttach == pcie.AttachDirectory {
			link = pcie.NewOnChip(spec.PCIe, spec.SoC, spec.CPU.DRAMLatency, spec.CPU.DRAMBandwidth)
		}
		gpuLink := pcie.New(spec.PCIe)
		var c2c *pcie.Link
		if spec.C2C.On {
			// The GPU's path to host memory is the C2C link: its stores
			// and loads of host memory, and the runtimes' explicit
			// GPU-to-host transfers that ride GPULink, cross it.
			c2c = pcie.NewC2C(spec.C2C)
			gpuLink = c2c
		}
		nd := &Node{ID: i, Name: name, Mem: m, DRAM: dram, PCIe: link, GPULink: gpuLink, C2C: c2c,
			CPU: cpu.New(e, name+".cpu", cpuSpec, m, dram),
			GPU: gpu.New(e, name+".gpu", spec.GPU, m, gdram),
			NIC: nic.New(e, i, name+".nic", spec.NIC, m, link, fab, spec.Link.Payload),
		}
		nd.GPU.UseL2(spec.L2)
		if spec.GPU.Mode == "apu" && spec.CPU.Cache.L3Path > 0 {
			// The documents' APU: CPU, GPU and NIC share one coherent
			// system directory, where the host's L3 sits (its path,
			// cpu.cache.l3_path, is the directory's lookup). The GPU's
			// misses and its packet processor's DMA pay the lookup
			// (soc.dir_latency) before memory, as the NIC's coherent
			// accesses and the host's misses do.
			nd.GPU.UseDirectory(spec.SoC.DirLatency)
		}
		if c2c != nil {
			nd.GPU.UseC2C(c2c, dram) // c2c.arrays: strategy.Setup
			nd.CPU.UseC2C(c2c)
			nd.NIC.UseC2C(c2c)
		}
		if link.OnChip() {
			// The host's AQL doorbell is an on-chip MMIO store on an APU
			// node, like its doorbell to the NIC (soc.mmio_latency).
			nd.GPU.SetHostDoorbell(spec.SoC.MMIOLatency)
		}
		nd.CP = cp.New(e, name+".cp", spec.CP, nd.GPU, spec.CPU.StallCPI())
		if flows {
			nd.NIC.UseFlows()
		}
		fab.Attach(i, nd.NIC)
		c.Nodes = append(c.Nodes, nd)
	}
	if gpus > 1 {
		memOf := func(i int) *mem.Memory { return c.Nodes[i].Mem }
		for i, nd := range c.Nodes {
			nd.Peer = peer.New(engineOf(i), fabricOf(i), i, memOf, spec.Node)
		}
	}
}

// SetCheckInvariants turns the end-of-run invariant check (Invariants,
// on by default) on or off.
func (c *Cluster) SetCheckInvariants(on bool) { c.noCheck = !on }

// Invariants checks the conservation and protocol invariants the hardware
// models promise, whenever the engine ends a run with nothing left to do
// (sim.Engine.AddEndCheck): the fabric's links, every NIC's counters,
// messages, DMA, event queues, counting events and trigger resources, and
// every GPU's AQL queues. Blocked processes at that point are a
// sim.DeadlockError, reported before this check. It reads counters only.
func (c *Cluster) Invariants(now sim.Time) []sim.Violation {
	if c.noCheck {
		return nil
	}
	out := c.Fabric.Invariants(now)
	for _, nd := range c.Nodes {
		out = append(out, nd.NIC.Invariants(now)...)
		out = append(out, nd.GPU.Invariants(now)...)
		if nd.DRAM != nil {
			out = append(out, nd.DRAM.Invariants(nd.Name+".dram", now)...)
		}
		if nd.PCIe != nil {
			out = append(out, nd.PCIe.Invariants(nd.Name+".pcie", now)...)
		}
		if nd.GPULink != nil && nd.GPULink != nd.PCIe {
			out = append(out, nd.GPULink.Invariants(nd.Name+".gpu_link", now)...)
		}
		if nd.CP != nil {
			out = append(out, nd.CP.Invariants(now)...)
		}
	}
	return out
}
