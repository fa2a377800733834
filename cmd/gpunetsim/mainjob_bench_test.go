package main

import (
	"io"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// BenchmarkMainJob runs the main job (gpunetsim with no arguments: the
// functional 2–64-node allreduce sweep) as the binary does, under its
// soft memory limit, and reports gc-%: the garbage collector's share of
// the CPU time the Go runtime accounts (runtime/metrics
// /cpu/classes/gc/total over /cpu/classes/total less idle; issue 30's
// goal: under 10 %). Peak memory is the process's: run it with
// /usr/bin/time -v and -benchtime 1x.
func BenchmarkMainJob(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(defaultMemLimit))
	dir := b.TempDir()
	gc0, busy0 := gcCPU()
	for range b.N {
		if rc := run([]string{"--out-dir", dir}, io.Discard, io.Discard); rc != 0 {
			b.Fatalf("exit code %d", rc)
		}
	}
	gc1, busy1 := gcCPU()
	if busy1 > busy0 {
		b.ReportMetric(100*(gc1-gc0)/(busy1-busy0), "gc-%")
	}
}

// gcCPU returns the CPU seconds the runtime accounts to the garbage
// collector and to everything but idle Ps, so far.
func gcCPU() (gc, busy float64) {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64() - s[2].Value.Float64()
}
