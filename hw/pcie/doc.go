// Package pcie models one PCIe attachment (a GPU or NIC to the root complex)
// with the LogGP parameters of the dissertation: latency L, issue overhead o,
// gap g and per-byte time G, per direction, each direction a FIFO byte
// server. TLP, data-link and physical layers are not modelled.
//
// Transactions are computed at call time (they are issued in simulated time
// order), so the methods return completion times rather than scheduling
// events; callers sleep or schedule until then.
package pcie
