// Package cpu models the host CPU of a node (hardware.md §1.1, §10): host
// threads as blocking agents whose runtime software costs
// instructions / (IPC × f) (gpu-networking.md §6), streaming compute bound
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
// cpu.compute_model = flat keeps the earlier model (each core streams at
// cpu.stream_bytes_per_cycle, the region capped by the DRAM server) for
// comparison only.
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
// Left out: cache capacity and reuse (a region always streams from DRAM,
// even when its data would fit the L2 or L3), the L3's mostly-exclusive
// policy, NUMA, and frequency scaling.
package cpu
