package exp

// experiments returns every registered experiment.
func experiments() []Experiment {
	return []Experiment{
		{Name: "allreduce", Summary: "strong-scaled float32 SUM allreduce (ring) under CPU, HDN, GDS and GPU-TN; time and speedup vs CPU (workloads.md §4.5)", Run: runAllreduce,
			Points: ptr(allreducePoints()), Sizes: Sizes{Default: reportNodes, Quick: quickAllreduce}},
		{Name: "latency", Summary: "GPU-TN latency decomposition on 2 nodes under HDN, GDS and GPU-TN (workloads.md §8)", Run: runLatency, Points: ptr(latencyPoints())},
		{Name: "jacobi", Summary: "Jacobi 2-D one-iteration local N×N sweep on a 2-D process grid, speedup vs HDN (workloads.md §6.2)", Run: jacobiRun("nxn"),
			Points: ptr(jacobiPoints("nxn"))},
		{Name: "jacobi1d", Summary: "Jacobi 1-D decomposition: points-per-node sweep on 8 nodes (workloads.md §6.1)", Run: jacobiRun("1d"),
			Points: ptr(jacobiPoints("1d"))},
		{Name: "jacobistrong", Summary: "Jacobi strong scaling over fixed global grids with the comp/launch/comm breakdown (workloads.md §6.3)", Run: jacobiRun("strong"),
			Points: ptr(jacobiPoints("strong"))},
		{Name: "jacobiweak", Summary: "Jacobi weak scaling, fixed points per node, runtime normalized to HDN (workloads.md §6.3)", Run: jacobiRun("weak"),
			Points: ptr(jacobiPoints("weak"))},
		{Name: "mlproj", Summary: "machine-learning (CNTK) projection: per-call Allreduce ratios from simulated allreduces, projected runtime and speedup per strategy (workloads.md §7)", Run: runML,
			Points: ptr(mlPoints())},
		{Name: "matrix", Summary: "every workload's small instance on every strategy that runs it: implementation, time, verified, speedup vs the workload's baseline; not-applicable cells with their reason", Run: runMatrix,
			Points: ptr(matrixPoints())},
		{Name: "accumulate", Summary: "MPI Accumulate in passive-target epochs on 2 nodes under CPU, HSA and XTQ: time per epoch over a size sweep or an NWChem-like size mix (workloads.md §2)", Run: runAccumulate, Points: ptr(accumulatePoints())},
		{Name: "reduce", Summary: "MPI Reduce with a zero-length resource-ready sync under CPU, HSA and XTQ: completion at the root over a size sweep (workloads.md §3)", Run: runReduce, Points: ptr(reducePoints())},
		{Name: "taskspawn", Summary: "remote task spawn on 2 nodes under CPU, HSA and XTQ: end-to-end time over a size sweep and the per-phase breakdown (workloads.md §1)", Run: runTaskSpawn, Points: ptr(taskSpawnPoints())},
		{Name: "ddt_vector", Summary: "sPIN vector unpack throughput vs block size, every datatype method (workloads.md §11.1)", Run: runDDTVector, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ddt_breakdown", Summary: "sPIN payload-handler time split into init/setup/processing vs γ (workloads.md §11.2)", Run: runDDTBreakdown, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ddt_hpus", Summary: "sPIN throughput vs number of HPUs at γ = 1 (workloads.md §11.3)", Run: runDDTHPUs, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ddt_memory", Summary: "sPIN NIC memory occupancy by component vs block size and HPUs (workloads.md §11.4)", Run: runDDTMemory, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ddt_dmaqueue", Summary: "sPIN DMA write FIFO maximum vs γ and occupancy over time (workloads.md §11.5)", Run: runDDTDMAQueue, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ddt_apps", Summary: "application datatypes: speedup over host unpack, bytes to the NIC, memory traffic, checkpoint amortization (workloads.md §11.6–11.8)", Run: runDDTApps, Sizes: Sizes{Quick: quickDDT}},
		{Name: "fft2d", Summary: "FFT2D strong scaling: unpack costs from the sPIN NIC, a GOAL schedule replayed by LogGOPS, host unpack vs RW-CP (workloads.md §11.12)", Run: runFFT2D, Sizes: Sizes{Quick: quickFFT2D}},
		{Name: "ddt_put", Summary: "1-byte put latency with and without a sPIN context (workloads.md §11.9)", Run: runDDTPut, Sizes: Sizes{Quick: quickDDT}},
		{Name: "ghnqueue", Summary: "GHN queue placement and helper scalability: mean service time vs queues per host thread, GHN_DGPU vs GHN_DGPU_HOSTQ (workloads.md §5.1–5.2)",
			Run: runShmemPoints(ghnqueuePoints()), Points: ptr(ghnqueuePoints())},
		{Name: "shmemget", Summary: "single work-group get latency vs payload, one service thread, GHN_DGPU, GHN_APU, COMPNET (workloads.md §5.3)",
			Run: runShmemPoints(shmemgetPoints()), Points: ptr(shmemgetPoints())},
		{Name: "shmemload", Summary: "480 WGs × 64 work-items, 1-byte puts: completion time and service-thread energy vs service threads (workloads.md §5.4)",
			Run: runShmemPoints(shmemloadPoints()), Points: ptr(shmemloadPoints())},
		{Name: "cpl2", Summary: "L2 hit rate of ComP-Net CP accesses vs streaming work-groups, LLC locking off and on (workloads.md §5.5)",
			Run: runShmemPoints(cpl2Points()), Points: ptr(cpl2Points())},
		{Name: "gpurdma", Summary: "GPUrdma single-thread bandwidth and latency vs size for the naive path and each optimisation, the naive per-step breakdown, and QP/CQ placement (workloads.md §9.1, §9.3)", Run: runGPURdma,
			Sizes: Sizes{Default: defaultGPURdmaSize, Quick: quickGPURdmaSize}},
		{Name: "gpurdma_multiqp", Summary: "GPUrdma multi-QP message rate: QP per warp, QP per threadblock (collaborative), host-driven (workloads.md §9.2)", Run: runGPURdmaMultiQP,
			Sizes: Sizes{Default: defaultMultiQPSize, Quick: quickMultiQPSize}},
		{Name: "gio", Summary: "GIO put latency vs size against CPU, HDN (empty kernels) and GHN_DGPU, and vs issuing work-groups (workloads.md §10.1)", Run: runGIOBench,
			Sizes: Sizes{Quick: quickGIOBench}},
		{Name: "gpi", Summary: "GPU-side GPI: latency ping-pong, 180 MB throughput ping-pong (basic, overlapped) and the matrix-vector stream vs CPU-driven GPI (workloads.md §9.4–9.6)", Run: runGPI,
			Sizes: Sizes{Default: defaultGPISize, Quick: quickGPISize}},
		{Name: "hostcpu", Summary: "host streaming rate vs OpenMP threads: memory-level parallelism (Little's law) saturating at DRAM, prefetcher, flat rate, a polling helper on a team core (hardware.md §10)", Run: runHostCPU},
		{Name: "strategies", Summary: "qualitative characteristic table of the strategies (overview.md §5)", Run: runStrategies},
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
