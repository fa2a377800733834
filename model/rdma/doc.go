// Package rdma is the one-sided host API over the Portals NIC used by the
// GDS and GPU-TN runtimes and by workloads that put into exposed memory:
// expose a region as a persistent ME (remote offsets address it, like an
// OpenSHMEM symmetric heap), and post puts now or deferred (GDS: built and
// posted by the CPU, activated later by the GPU's CP).
//
// Spec: the dissertation (Portals 4) (Portals puts, MEs, counters) as the runtimes of
// the dissertation's GPU-TN chapter use them. Left out: gets and atomics through this
// API (workloads use the NIC directly for those).
package rdma
