// Package workload holds the experiments' programs, written once per
// strategy against the programming-model APIs of strategy.Node (MPI,
// streams, GDS stream operations, GPU-TN triggers, one-sided puts) and the
// device API of kernels. Every workload fills its inputs deterministically,
// runs, and in functional mode checks its output against a serial
// reference.
package workload
