// Package cluster assembles nodes and the network from a Spec: per node a
// memory (real bytes or payload-free), a memory server shared by CPU and
// GPU, the host CPU, the GPU with its command processor, a PCIe attachment
// and a Portals NIC, all joined by the fabric. It is the only place that
// knows how the hardware components connect. NewPartitioned builds the
// same cluster split over the engines of a sim.Group, contiguous ranges of
// whole leaf switches, for one simulation on several cores
// (docs/parallel.md).
//
// Nodes of several GPUs (node.gpus) give each GPU its own NIC and a peer
// port on the node's GPU fabric; on presets with a chip-to-chip link
// (c2c.on: GH200's NVLink-C2C) each GPU's memory and its CPU's host memory
// are two memories joined by that link, which the GPU's, the CPU's and
// the NIC's cross-side accesses share.
//
// Sources: the dissertation (the node and the presets gputn, xtq, compnet,
// compnet_paper), the GPUrdma paper and the GIO slides (gpurdma, gio), the
// SC'19 sPIN paper (spin, pulp); present-day presets from their vendors'
// datasheets (PresetSources).
package cluster
