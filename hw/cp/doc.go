// Package cp models the programmable cores of a GPU's command processor
// (the dissertation): small x86 cores (preset compnet: 2-wide OOO,
// 2 cores at 2 GHz) that sit behind the GPU L2 with the compute units and
// run software threads, such as the ComP-Net service threads and the
// OpenSHMEM/Portals library (the dissertation's ComP-Net chapter).
//
// A Thread charges its software paths as instructions / (IPC × f)
// (the dissertation) on its core, time-sliced with the other threads
// of the core (package sched, quantum cp.quantum). Its memory accesses go
// through a private, non-coherent L1 D-cache (cp.l1_lines, FIFO eviction):
// a line once filled returns its cached bytes until the thread issues an
// acquire marker at device scope (Acquire), exactly like a CU's L1 — a
// consumer that skips the marker reads stale data. An L1 miss is an
// access to the shared GPU L2 (gpu.CPReadLine: hit or miss measured by
// the L2 tag model, LOCKED lines unlocked by the first CP access); stores
// write through the L1 into the L2 (device scope). Lock-prefixed RMWs
// bypass the L1 and lock their L2 line (gpu.CPRMW). System-scope markers
// write back the GPU L2's dirty lines (release) or invalidate its
// NIC-shared lines (acquire).
//
// The thread counts what the energy model needs (the dissertation):
// instructions, L1 accesses, L2 accesses and memory accesses.
//
// Not modelled: the CP's instruction cache, its kernel-management work
// (the GPU's dispatcher process in package gpu does that at no cost to
// these cores), branch prediction and OOO overlap beyond the IPC.
package cp
