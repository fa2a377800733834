// Package strategy names the networking strategies (the dissertation) and
// composes hardware and programming models into the node setups they run
// on: which agents exist on a node (a host thread, a GPU stream, MPI, the
// GPU-TN host API, one-sided endpoints, device-API backends) and how they
// are wired.
//
// Registry is the one list of strategies. Each Def declares the
// programming-model capabilities (Cap) it provides; workloads are written
// against capabilities, never strategy names (design-families.md), so a
// new strategy runs every workload whose needs it meets.
package strategy
