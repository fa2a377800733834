package exp

import "testing"

// BenchmarkMatrix runs the default matrix experiment (every workload's
// small instance on every strategy, functional) and reports wall seconds
// per run; the bar is under a minute on 2 cores.
func BenchmarkMatrix(b *testing.B) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Run.Parallel = 2
	for range b.N {
		if _, err := runMatrix(cfg, Env{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
}
