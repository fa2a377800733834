// Package cpu models the host CPU of a node (the dissertation): host
// threads as blocking agents whose runtime software costs
// instructions / (IPC × f) (the dissertation), streaming compute bound
// by memory-level parallelism, and polling of memory words.
//
// # Streaming compute
//
// Thread.Compute runs an OpenMP-style region: the bytes are split over a
// team of threads, one per core at most. Under cpu.compute_model = mlp (the
// default) a core streaming through memory keeps at most
// Spec.Outstanding() cache misses in flight (cpu.l1d_misses, plus
// cpu.prefetch_depth when cpu.prefetch is on, capped by cpu.l2_misses), so
// by Little's law it moves outstanding × cpu.line_size bytes per loaded
// memory latency, and never more than its issue bound
// cpu.stream_bytes_per_cycle × f. Every slice of a region also reserves its
// bytes at the node's DRAM server (hw/mem.Server), which the GPU shares in
// APU mode: when the cores together (or the GPU beside them) ask for more
// than cpu.dram_bandwidth, the server's queue sets the pace and the loaded
// latency grows, which Stats records. With one core on the gputn preset
// that is 4 × 64 B / 80 ns = 3.2 GB/s, a twentieth of the issue bound;
// eight cores reach 25.6 GB/s; with the prefetcher on, 20 misses per core,
// about seven cores saturate DDR4-2133's 136.5 GB/s.
//
// Thread.ComputeOn is Compute over named address ranges: the share of the
// bytes the host's caches still hold streams at the latency of the level
// holding it (L1D per core, an L2 per cpu.cache.l2_cores cores — the
// documents' CorePair — and the L3 plus a path to it), the rest from DRAM
// as above. The CPU remembers the ranges its computations touched; any
// write by another agent (hw/mem's Touch: NIC DMA, GPU stores) drops the
// lines it wrote, so data a NIC just delivered is read from DRAM, while a
// vector the host copied or reduced a moment ago is not (resident.go).
//
// cpu.compute_model = flat keeps the earlier model (each core streams at
// cpu.stream_bytes_per_cycle, the region capped by the DRAM server) for
// comparison only.
//
// # Cores as a shared resource
//
// A thread runs on one core of its CPU and competes for it with the other
// threads placed there. The API for host threads (application threads,
// OpenMP team threads, GHN service threads):
//
//   - CPU.Spawn(name, body) lets the scheduler place the thread on the core
//     with the fewest live threads (the lowest index among equals: a node's
//     first thread gets core 0). CPU.SpawnOn(k, name, body) pins it to core
//     k and refuses a k outside [0, cpu.cores). Threads never migrate.
//   - Thread.Instr, Sleep, SleepUntil, Load and the streaming of Compute
//     keep the core busy (instructions, stalls); Thread.Wait, WaitUntil,
//     WaitWord and Join spin on the core (a polling loop: the core stays
//     busy, as the literature's GHN service threads and MPI progress do);
//     Thread.Block and BlockWord wait off the core and pay cpu.wake_latency
//     when woken.
//   - Threads sharing a core take turns round robin: a thread runs at most
//     cpu.time_slice while another waits, and putting a different thread's
//     context on a core costs cpu.context_switch of core time (an OpenMP
//     team thread of the same slot resumes free, as a thread pool does).
//     A polling thread is taken off its core at its slice end whenever a
//     thread waits; a busy one yields at its slice end.
//   - CPU.CoreStats reports per core the busy time (running, polling or
//     switching), the polling part and the switches: the per-core
//     utilisation the experiments print and that energy (the dissertation)
//     charges.
//
// OpenMP team threads run as step processes (sim.Engine.SpawnSteps,
// team.go): their body (acquire the core, stream the share, give the core
// up) is a state machine over the Try forms of the scheduler's blocking
// operations (tryAcquire, tryRun, tryStream), which the blocking forms
// loop over, so both share one implementation and schedule the same
// events. Team-thread objects, names and step processes are reused from
// region to region. A model layer can run a stretch of a host thread's
// work as steps too (steps.go: Begin* and Try forms of Instr, Sleep, Wait,
// Block and Compute, run in the thread's own process lent by its coroutine
// with sim.Proc.RunSteps: model/mpi's progress loop); the blocking forms
// are their reference (TestWaitStepsMatchCoroutine in model/nbc).
//
// Calls made on the embedded sim.Proc directly (a device access such as a
// NIC doorbell that takes a *sim.Proc) keep the core without yielding at a
// slice end; they are short. When every thread of a core only polls,
// their slices are not simulated until one of them has something to see:
// it then gets the core at the holder's next slice boundary.
//
// # Polling
//
// Caches are not simulated line by line: a poll of an unchanged word costs
// a cache hit, and the first poll after a writer changed it costs a DRAM
// access (the writer's store or DMA invalidated the line). Polling loops are
// not simulated iteration by iteration: the thread sleeps until the word is
// written and then pays the miss, which is the time the next poll would see
// the change, up to one hit's latency.
//
// # Agent dispatch
//
// A CPU agent queue (agent.go; the dissertation's XTQ chapter) is an HSA-style
// user-mode queue of 64-byte agent-dispatch packets in host memory with a
// doorbell signal. Its own host thread polls the doorbell (WaitWord: the
// poll that sees the producer's write misses), reads the packet (a
// miss), frees the slot, calls the function the packet's pointer names
// (LoadFunction) with the four embedded arguments on that thread, and
// decrements the completion signal by a locked read-modify-write. The
// call adds no fixed overhead of its own; the function charges its work.
//
// # Cache walks
//
// Walk (cache.go) executes one core's stream of loads and stores address
// by address through its cache hierarchy (cpu.cache.*: set-associative
// LRU L1D, L2 and L3, write-back, write-allocate), for work whose cost is
// its memory behaviour at real addresses: the host's datatype pack and
// unpack. A line missing in L1 takes a fill buffer (cpu.l1d_misses), one
// missing in L2 also an L2 miss slot (cpu.l2_misses) and comes from L3 or
// from DRAM through the node's DRAM server; the L2 stream prefetcher
// (cpu.prefetch, cpu.prefetch_depth) runs ahead within a 4 KiB page on
// free slots. The core issues at cpu.cache.issue_width with its load and
// store ports, and waits only for load- and store-buffer entries, so its
// stall cycles come from the misses in flight. Walk reports the line
// touches each level served and the bytes filled and written back.
//
// Left out: thread migration and load balancing between cores, priorities,
// CFS's wake-up preemption, hyper-threading, cache capacity and reuse in
// Compute (a region always streams from DRAM, even when its data would fit
// the L2 or L3; Walk models them), the L3's mostly-exclusive policy, NUMA,
// and frequency scaling.
package cpu
