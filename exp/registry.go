package exp

// experiments returns every registered experiment.
func experiments() []Experiment {
	return []Experiment{
		{Name: "allreduce", Summary: "strong-scaled float32 SUM allreduce (ring) under CPU, HDN, GDS and GPU-TN; time and speedup vs CPU (workloads.md §4.5)", Run: runAllreduce,
			Points: ptr(allreducePoints()), Sizes: Sizes{Default: reportNodes, Quick: quickAllreduce}},
		{Name: "latency", Summary: "GPU-TN latency decomposition on 2 nodes under HDN, GDS and GPU-TN (workloads.md §8)", Run: runLatency, Points: ptr(latencyPoints())},
		{Name: "matrix", Summary: "every workload's small instance on every strategy that runs it: implementation, time, verified, speedup vs the workload's baseline; not-applicable cells with their reason", Run: runMatrix,
			Points: ptr(matrixPoints())},
		{Name: "taskspawn", Summary: "remote task spawn on 2 nodes under CPU, HSA and XTQ: end-to-end time over a size sweep and the per-phase breakdown (workloads.md §1)", Run: runTaskSpawn, Points: ptr(taskSpawnPoints())},
		{Name: "strategies", Summary: "qualitative characteristic table of the strategies (overview.md §5)", Run: runStrategies},
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
