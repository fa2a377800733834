// Package unit parses and prints the physical quantities of gpunetsim's
// configuration: sizes in bytes ("2KiB", "8MiB", "64B"), bit rates
// ("100Gbps", "28GB/s"), and durations (delegated to sim.ParseDuration). It
// is the one place where unit strings are interpreted.
//
// Spec: the quantities of the dissertation's tables (every [DOC]/[DEFAULT]
// value carries its unit; simulated time itself is sim.Time, the dissertation).
// Left out: unit arithmetic beyond what the models need.
package unit
