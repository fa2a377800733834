//go:build unix

package main

import (
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkMainJob runs the main job (gpunetsim with no arguments: the
// functional 2–64-node allreduce sweep) as the binary does, under its
// soft memory limit, and reports gc-%: the garbage collector's share of
// the CPU time the Go runtime accounts (runtime/metrics
// /cpu/classes/gc/total over /cpu/classes/total less idle; issue 30's
// goal: under 10 %), the process's user and system CPU seconds per run
// (cpu-s: against ns/op, how well the sweep uses the cores; issue 30
// wants the wall time near the CPU time over the cores) and its peak
// resident size (peak-MB, the kernel's VmHWM: the test binary's own
// included; run -benchtime 1x, one benchmark per process, for the job's
// peak; issue 30's goal: under 1 GB) and its minor page faults per run
// (faults).
func BenchmarkMainJob(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(defaultMemLimit))
	dir := b.TempDir()
	gc0, busy0 := gcCPU()
	cpu0, flt0 := processCPU(), minorFaults()
	for range b.N {
		if rc := run([]string{"--out-dir", dir}, io.Discard, io.Discard); rc != 0 {
			b.Fatalf("exit code %d", rc)
		}
	}
	gc1, busy1 := gcCPU()
	if busy1 > busy0 {
		b.ReportMetric(100*(gc1-gc0)/(busy1-busy0), "gc-%")
	}
	b.ReportMetric((processCPU()-cpu0)/float64(b.N), "cpu-s")
	b.ReportMetric(float64(minorFaults()-flt0)/float64(b.N), "faults")
	if mb, ok := peakRSSMB(); ok {
		b.ReportMetric(mb, "peak-MB")
	}
}

// processCPU returns the process's user and system CPU seconds so far.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// minorFaults returns the process's minor page faults so far: each a
// page of node memory (or heap) touched for the first time, the part of
// the job's system time that a sweep's recycled node memories save; it
// varies less with the machine's load than the CPU seconds do.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// peakRSSMB returns the process's peak resident size in MB (10^6 bytes),
// from /proc/self/status (Linux only).
func peakRSSMB() (float64, bool) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	_, after, ok := strings.Cut(string(st), "VmHWM:")
	if !ok {
		return 0, false
	}
	kb, err := strconv.Atoi(strings.Fields(after + " x")[0])
	if err != nil {
		return 0, false
	}
	return float64(kb) * 1024 / 1e6, true
}

// gcCPU returns the CPU seconds the runtime accounts to the garbage
// collector and to everything but idle Ps, so far.
func gcCPU() (gc, busy float64) {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64() - s[2].Value.Float64()
}
