// Package power is the per-structure power model of the cores that run
// network service threads (the host's helper cores and the GPU's
// command-processor cores), in the manner of McPAT: a core is described by
// its structures (issue width, caches, clock), each structure gets an
// access energy and a leakage from its size at the technology node, and a
// run's energy is the structures' leakage and clock power over the time a
// core is held plus their access energies × the events the simulation
// counted.
//
// The documents fed gem5 statistics into McPAT at 22 nm for the CPU and CP
// cores only and publish no watt values; they do not publish their McPAT
// input either. This package does not run McPAT. Its coefficients are
// [DEFAULT]s, each with its source beside it:
//
//   - SRAM access energy: Horowitz, "Computing's energy problem" (ISSCC
//     2014), 45 nm: a 64-bit read costs 10 pJ from 8 KB, 20 pJ from 32 KB,
//     100 pJ from 1 MB, i.e. ≈ 3.54 pJ × √KiB; scaled to 22 nm by
//     capacitance (22/45) and supply ((0.8 V / 0.9 V)²), a factor 0.39;
//   - per-instruction core energy: the same paper's ≈ 70 pJ of instruction
//     overhead on a 45 nm core, for a 2-wide core, × √(width/2) for the
//     wider rename, wake-up and select of a wider out-of-order core,
//     scaled like the SRAM;
//   - DRAM: 1.3 nJ per 64-bit access (the same paper), 10.4 nJ per 64 B
//     line; PCIe: 2.5 nJ per transaction (≈ 5 pJ/bit over a 64 B TLP);
//   - leakage: 0.3 mW per KiB of SRAM and 80 mW of out-of-order logic for
//     a 2-wide core, × (width/2)^1.5 (issue logic grows faster than the
//     width); clock power 50 mW per GHz for a 2-wide core, × (width/2)^1.5.
//
// The input description of the two cores (Core.Host, Core.CP) is the
// dissertation's Table 5.1: host 8-wide OOO
// x86 at 4 GHz, 64 KB L1I and L1D, a 2 MB L2 shared by a core pair; CP
// 2-wide OOO x86 at 2 GHz, 16 KB L1I, 32 KB L1D, no private L2 (its L2
// accesses go to the GPU L2, 1 MB). Profile derives the static power and
// per-event energies the energy reports use; `gpunetsim params` prints
// them with this model named as their source.
package power
