// Package net models the cluster network (the dissertation): full-duplex links
// that serialise packets at their bandwidth (payload plus a per-packet
// header), switches with a fixed latency and one FIFO server per output port
// (store and forward at packet granularity), and two topologies: a star
// around one switch and a two-level fat tree (leaf and spine switches).
//
// The network moves opaque Packets between endpoints; what a packet means is
// the NIC's business. It never blocks: each hop is a callback event.
// Partition (partition.go) splits a packet-model fabric over the engines
// of a sim.Group: each output port is served by one partition, and a
// packet moves to another partition's port with its arrival time at that
// switch, at least a link and a switch latency ahead (docs/parallel.md).
//
// Not modelled: credit-based flow control (buffers are unbounded), bit errors.
package net
