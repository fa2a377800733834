package net

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// NodeSpec describes nodes of several GPUs (or APUs), each with its own
// NIC, joined inside the node by a GPU fabric. Network endpoint e is GPU
// e mod GPUs of node e / GPUs; two endpoints of one node exchange packets
// over the node's fabric instead of the network. GPUs = 1 is the source
// documents' node: no fabric, every pair on the network.
type NodeSpec struct {
	GPUs      int       `toml:"gpus" doc:"GPUs (or APUs) per node, each with its own NIC on rail g: endpoint e is GPU e mod gpus of node e / gpus" src:"DEFAULT"`
	Fabric    string    `toml:"fabric" doc:"intra-node GPU fabric: switch (NVLink through NVSwitch: one link per GPU to a switch) or mesh (Infinity Fabric: a direct link between every pair of GPUs)" src:"DEFAULT"`
	Bandwidth unit.Rate `toml:"fabric_bandwidth" doc:"per direction: a GPU's links to the switch together (switch) or one GPU-to-GPU link (mesh)" src:"DEFAULT"`
	Latency   sim.Time  `toml:"fabric_latency" doc:"one crossing of the intra-node fabric beyond serialisation (links and the switch together)" src:"DEFAULT"`
	// CopyEngines and CopyLaunch describe each GPU's DMA copy engines,
	// which move a peer copy (cudaMemcpyPeerAsync, hipMemcpyPeerAsync)
	// over the fabric without the GPU's cores or the NIC.
	CopyEngines int      `toml:"copy_engines" doc:"DMA copy engines per GPU that serve peer copies, each one copy at a time in FIFO order" src:"DEFAULT"`
	CopyLaunch  sim.Time `toml:"copy_launch" doc:"from a copy command reaching a free copy engine to its first write on the fabric (command fetch, address translation)" src:"DEFAULT"`
	// Placement places the ranks of a run on fewer GPUs than whole nodes
	// (a two-GPU experiment on nodes of 8): a user's choice, not hardware.
	Placement string `toml:"placement" doc:"a run on fewer GPUs than whole nodes (n not a multiple of gpus, e.g. the 2-GPU experiments): rails = rank r on GPU 0 of node r, every pair over the NICs (inter-node); fabric = ranks fill a node's GPUs first, rank r on GPU r mod gpus of node r / gpus (pairs of one node over the GPU fabric); the node's other GPUs hold no rank (idle). Runs of whole nodes use every GPU" src:"RUN"`
}

// The values of NodeSpec.Placement.
const (
	PlaceRails  = "rails"
	PlaceFabric = "fabric"
)

// Slots returns the GPU slots of n ranks on nodes of s.GPUs under
// s.Placement (empty: rails), and the slots of the whole nodes that hold
// them: n itself when n is whole nodes (rank e on slot e, nil).
func (s NodeSpec) Slots(n int) (slots []int, total int) {
	g := max(1, s.GPUs)
	if n%g == 0 {
		return nil, n
	}
	slots = make([]int, n)
	for r := range slots {
		slots[r] = r
		if s.Placement != PlaceFabric {
			slots[r] = r * g
		}
	}
	return slots, (slots[n-1]/g + 1) * g
}

// Validate reports every invalid field.
func (s NodeSpec) Validate() error {
	var errs []error
	if s.GPUs < 1 || s.GPUs > 64 {
		errs = append(errs, fmt.Errorf("node.gpus = %d: must be in [1, 64]", s.GPUs))
	}
	switch s.Fabric {
	case "switch", "mesh":
	default:
		errs = append(errs, fmt.Errorf("node.fabric = %q: must be switch or mesh", s.Fabric))
	}
	if s.GPUs > 1 && s.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("node.fabric_bandwidth = %v: must be > 0 with node.gpus > 1", s.Bandwidth))
	}
	if s.Latency < 0 || s.Latency > sim.Millisecond {
		errs = append(errs, fmt.Errorf("node.fabric_latency = %v: must be in [0, 1ms]", s.Latency))
	}
	if s.CopyEngines < 1 || s.CopyEngines > 64 {
		errs = append(errs, fmt.Errorf("node.copy_engines = %d: must be in [1, 64]", s.CopyEngines))
	}
	if s.Placement != "" && s.Placement != PlaceRails && s.Placement != PlaceFabric {
		errs = append(errs, fmt.Errorf("node.placement = %q: must be rails or fabric", s.Placement))
	}
	if s.CopyLaunch < 0 || s.CopyLaunch > sim.Millisecond {
		errs = append(errs, fmt.Errorf("node.copy_launch = %v: must be in [0, 1ms]", s.CopyLaunch))
	}
	return errors.Join(errs...)
}

// nodeFabric is the intra-node tier: the ports of every node's GPU fabric.
type nodeFabric struct {
	spec    NodeSpec
	perByte float64
	up, dn  []*port   // switch: endpoint → its node's switch, and back
	mesh    [][]*port // mesh: endpoint → GPU g of its node
}

// UseNodeFabric joins the GPUs of each node (endpoints e / spec.GPUs) by
// their intra-node fabric. Call it before the first Send; with one GPU per
// node it changes nothing.
func (f *Fabric) UseNodeFabric(spec NodeSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if spec.GPUs == 1 {
		return nil
	}
	if n := len(f.ends); n%spec.GPUs != 0 {
		return fmt.Errorf("node.gpus = %d: %d GPUs are not whole nodes", spec.GPUs, n)
	}
	if f.topo.Kind == "railfattree" && f.topo.Rails != spec.GPUs {
		return fmt.Errorf("topology.rails = %d: must equal node.gpus = %d (one NIC per GPU, NIC g on rail g)", f.topo.Rails, spec.GPUs)
	}
	nf := &nodeFabric{spec: spec, perByte: spec.Bandwidth.PerByte()}
	for e := range f.ends {
		node, g := e/spec.GPUs, e%spec.GPUs
		name := fmt.Sprintf("node[%d].gpu[%d].fabric", node, g)
		if spec.Fabric == "switch" {
			nf.up = append(nf.up, &port{name: name + ".up", capacity: 1 / nf.perByte})
			nf.dn = append(nf.dn, &port{name: name + ".down", capacity: 1 / nf.perByte})
			continue
		}
		links := make([]*port, spec.GPUs)
		for peer := range spec.GPUs {
			if peer != g {
				links[peer] = &port{name: fmt.Sprintf("%s.to[%d]", name, peer), capacity: 1 / nf.perByte}
			}
		}
		nf.mesh = append(nf.mesh, links)
	}
	f.node = nf
	return nil
}

// sameNode reports whether endpoints a and b are GPUs of one node.
func (nf *nodeFabric) sameNode(a, b int) bool { return a/nf.spec.GPUs == b/nf.spec.GPUs }

// route returns the intra-node ports from src to dst, GPUs of one node.
func (nf *nodeFabric) route(src, dst int) (route [maxHops]*port, hops int) {
	if nf.spec.Fabric == "switch" {
		route[0], route[1] = nf.up[src], nf.dn[dst]
		return route, 2
	}
	route[0] = nf.mesh[src][dst%nf.spec.GPUs]
	return route, 1
}

// serialization returns the fabric's wire time of a packet: the payload
// and the network's per-packet header at the fabric's rate.
func (nf *nodeFabric) serialization(f *Fabric, payload unit.Bytes) sim.Duration {
	return sim.FromPicoseconds(float64(payload+f.link.Header) * nf.perByte)
}

// latency returns what a packet on an intra-node route adds after
// serialising on hop h: the fabric's latency once, at the last
// hop of a mesh and at the switch of a switched fabric.
func (nf *nodeFabric) latency(h int) sim.Duration {
	if h == 0 {
		return nf.spec.Latency
	}
	return 0
}

func (nf *nodeFabric) ports() []*port {
	all := append(append([]*port(nil), nf.up...), nf.dn...)
	for _, l := range nf.mesh {
		for _, pt := range l {
			if pt != nil {
				all = append(all, pt)
			}
		}
	}
	return all
}

// Local is a packet of a GPU's peer access — its work-groups' loads,
// stores and atomics to another GPU of its node, or its copy engines'
// DMA — rather than a NIC's: the node's fabric carries it (sharing the
// links, and their contention, with NIC-issued intra-node traffic) and
// calls Arrive at the destination instead of handing it to the NIC.
type Local interface {
	Packet
	Arrive()
}

// sendLocal carries a peer-access packet over the node's GPU fabric
// between slots src and dst. A route that leaves the node is the
// caller's bug: peer access needs both GPUs in one node (SameNode).
func (f *Fabric) sendLocal(p Packet, src, dst int) {
	if f.node == nil || src == dst || !f.node.sameNode(src, dst) {
		panic(fmt.Sprintf("net: peer-access packet from endpoint %d to %d: not GPUs of one node", src, dst))
	}
	f.localSent.add(p)
	f.sendIntra(p, src, dst)
}

// SameNode reports whether endpoints a and b are different GPUs of one
// node, joined by its GPU fabric (never with one GPU per node).
func (f *Fabric) SameNode(a, b int) bool {
	return f.node != nil && a != b && f.node.sameNode(f.at(a), f.at(b))
}

// FlowModel reports whether the fabric runs the flow model (a message is
// one flow, not packets).
func (f *Fabric) FlowModel() bool { return f.fl != nil }

// PacketPayload returns the largest packet payload (link.payload): the
// unit a packet-model sender splits a message into.
func (f *Fabric) PacketPayload() unit.Bytes { return f.link.Payload }
