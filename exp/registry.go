package exp

// experiments returns every registered experiment.
func experiments() []Experiment {
	return []Experiment{
		{Name: "allreduce", Summary: "strong-scaled float32 SUM allreduce (ring) under CPU, HDN, GDS and GPU-TN; time and speedup vs CPU (workloads.md §4.5)", Run: runAllreduce},
		{Name: "latency", Summary: "GPU-TN latency decomposition on 2 nodes under HDN, GDS and GPU-TN (workloads.md §8)", Run: runLatency},
		{Name: "strategies", Summary: "qualitative characteristic table of the strategies (overview.md §5)", Run: runStrategies},
	}
}
