// Package shmem is the device-side OpenSHMEM API of the intra-kernel
// strategies (the dissertation's ComP-Net chapter; the dissertation) with
// interchangeable backends: GPU work-groups call the network in the middle
// of a kernel, and a backend carries the calls to the NIC.
//
// # Usage
//
// Host side (one application thread per PE, cpnet_init / ghn_init):
//
//	rt := shmem.NewRuntime(kind, node, spec, team) // strategy setup does this
//	dev, err := rt.Init(numQueues)                 // one queue per concurrent work-group
//	buf, err := dev.Malloc(n)                      // collective symmetric allocation, GPU memory
//	err = dev.Cooperative(kernel)                  // the cooperative-launch rule
//	… launch the kernel, wait for it …
//	report := dev.Finalize()                       // stop the service threads; time, counts, energy
//
// Device side, in a kernel body (every call is a work-group collective):
//
//	ctx, err := dev.CtxCreate(wg)
//	ctx.PutmemNBI(dst, src, n, pe); ctx.Quiet()
//	v, err := ctx.WaitUntil(flag, 8, shmem.CmpEQ, 1)
//	ctx.Destroy()
//
// The calls are Putmem/PutmemNBI, Getmem/GetmemNBI, P, G, AtomicAdd,
// AtomicFetchAdd, AtomicSwap, AtomicCompareSwap (32 and 64 bit), Fence,
// Quiet (this context only), WaitUntil (EQ, NE, GT, GE, LT, LE) and
// Barrier (the work-groups of one index across all PEs). A bad PE,
// length, non-symmetric address or unaligned atomic is an error wrapping
// ErrPE, ErrLength, ErrSymmetric or ErrAlign that names the work-group.
//
// # The backend seam
//
// Ctx validates arguments and turns each call into a Request (op, PE,
// length, addresses, inline value) handed to the Channel its Backend
// opened for the work-group. The seam is two small interfaces (backend.go):
//
//	Backend: Expose(idx, base, size) · Open(wg, queue) Channel · Stop() Report
//	Channel: Submit(*Request) error · Close()
//
// Submit runs in the work-group's process and returns when the request is
// accepted, or for a blocking request when it completed. A new backend
// (GIO's templated work requests, say) implements these two and a Kind
// in Runtime.Init; the conformance suite model/shmem/shmemtest then runs
// against it unchanged.
//
// # Backends
//
//   - Ideal: operations apply at once in the target's memory, at no cost;
//     the reference the suite is tested with.
//   - GHNDGPU: per-work-group rings in GPU memory; host helper threads
//     poll them with PCIe reads over the GPU's link (every poll pays the
//     round trip), read a posted entry's fields with one uncached load
//     each, one round trip after another (x86 UC loads are neither
//     speculated nor overlapped), and write status back with PCIe posted
//     writes; the
//     producer publishes at system scope (dGPU: the L2 is written back).
//   - GHNHostQ: rings in host memory; the work-group writes entries with
//     PCIe posted writes and polls status with PCIe reads; the helpers
//     poll their coherent caches.
//   - GHNAPU: rings in coherent shared memory (APU mode); helpers poll
//     their caches (an unchanged line hits, a changed one misses to DRAM).
//   - CompNetCP: rings in GPU memory; service threads on the CP cores
//     (hw/cp) issue a device-scope acquire and poll through the GPU L2,
//     whose tag model (hw/gpu l2.go) decides hit or miss; with
//     spec.LLCLocking the producer's stores are store_locked.
//
// The queued backends share one protocol (queue.go, service.go): the
// producer steps of the queue protocol (reserve with a stale local read index, fill,
// release, post, completion poll over [localReadIdx, writeIdx) with an
// acquire after each pass; a slot still POSTED from the previous lap
// counts as full) and the consumer loop (owned queues visited
// round-robin, every poll paid; blocking entries converted to
// non-blocking and kept on a pending list; the shared read index
// published past them; after quiet_rounds rounds the pending contexts'
// CTs are read and their entries completed). Entries carry a sequence
// number in the reserved bytes so a consumer never re-serves a pending
// entry of an earlier lap. Underneath, the service threads run OpenSHMEM
// over Portals as the dissertation (Portals 4) (portals.go): one PT, an ME per symmetric
// allocation, a CT per context, a library mutex taken with a
// lock-prefixed RMW (on the CP: an L2 LOCKED line).
//
// Service threads are time-sliced on their cores: CP threads beyond
// cp.cores by hw/sched (cp.quantum); GHN helper threads are pinned to host
// cores 1…shmem.host_cores and share them through hw/cpu's scheduler
// (cpu.time_slice), their idle polling a spinning wait. Each thread counts
// instructions, L1, L2, DRAM and PCIe events; Finalize turns them and the
// thread's alive time into energy (the dissertation, EnergySpec).
//
// # Simplifications ([DEFAULT] resolutions)
//
//   - A context's quiet in the service thread reads the context's CT and
//     does not block: contexts still in flight stay pending, so no
//     work-group stalls on another's traffic and the thread keeps
//     serving (the ComP-Net design's skip-the-quiet optimization taken as the rule).
//   - Fence is posted as a blocking entry and completed like a quiet.
//   - Pollers sleep through stretches in which every poll would read the
//     same value (coherent-cache helper threads, the work-group's
//     completion polls); the skipped polls of helper threads are counted
//     for energy. PCIe and CP polls are simulated one by one.
//   - A CP thread waiting in a doorbell is not preempted at its quantum
//     end; context switches on the CP cost nothing.
//   - No intra-node short-circuit: every operation goes through the
//     NIC, even to the own PE.
package shmem
