package workload

import (
	"fmt"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// BenchmarkAllreduce64 runs the largest point: an 8 MiB float32
// allreduce on 64 nodes in functional mode (real bytes, verified), per
// strategy. It reports simulated events per wall second and wall seconds
// per run.
func BenchmarkAllreduce64(b *testing.B) { benchAllreduce(b, 64, true) }

// BenchmarkAllreduce64Auto is BenchmarkAllreduce64 as the CLI runs one
// such point by default (run.partitions = 0, run.parallel = 1 or a single
// point): split over the engines AutoPartitions picks for the machine's
// cores (2 on the 2-core reference machine), with the same simulated
// results. It reports the engines besides the rates.
func BenchmarkAllreduce64Auto(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		b.Run(string(s), func(b *testing.B) {
			k := AutoPartitions(cluster.GPUTN(), 64, true, s, runtime.GOMAXPROCS(0))
			var events uint64
			cpu0 := cpuSeconds(b)
			for range b.N {
				c, err := cluster.NewPartitioned(1, cluster.GPUTN(), 64, k, true)
				if k == 1 {
					c, err = cluster.New(sim.New(1), cluster.GPUTN(), 64, true)
				}
				if err != nil {
					b.Fatal(err)
				}
				a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8, Algorithm: AlgRing}
				r, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
				if err != nil || !r.Verified {
					b.Fatalf("%v verified=%v", err, r.Verified)
				}
				events += c.Events()
				c.Close()
			}
			reportRates(b, events, cpuSeconds(b)-cpu0)
			b.ReportMetric(float64(k), "engines")
		})
	}
}

// BenchmarkAllreduce64PayloadFree is BenchmarkAllreduce64 without
// payload bytes (timing only), to profile the event path alone.
func BenchmarkAllreduce64PayloadFree(b *testing.B) { benchAllreduce(b, 64, false) }

// BenchmarkAllreduce256 is the 8 MiB allreduce on 256 nodes payload-free
// (timing only), per strategy.
func BenchmarkAllreduce256(b *testing.B) { benchAllreduce(b, 256, false) }

// BenchmarkAllreduce1024PayloadFree is the scale point: the 8 MiB
// allreduce on 1024 nodes at packet level, payload-free, per strategy (run
// it with -benchtime 1x), with GPU-TN's default slices as the CLI runs it
// (one work-group per step at this size; 16 would be 16 times its puts
// and flags). Besides the event rate it reports the peaks of heap and
// stacks in use, also per node; the peak resident size is /usr/bin/time
// of the CLI run (docs/network.md).
func BenchmarkAllreduce1024PayloadFree(b *testing.B) {
	const n = 1024
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN} {
		b.Run(string(s), func(b *testing.B) {
			p := startPeaks()
			benchAllreduceRunsWGs(b, cluster.GPUTN(), n, false, AlgRing, s, 0)
			p.report(b)
			b.ReportMetric(float64(p.heapUse+p.stackBytes)/n/1e3, "peak-heap+stack-KB/node")
		})
	}
}

// BenchmarkAllreduceRHDFlow is the 8 MiB allreduce with recursive
// halving-doubling in the flow network model, payload-free, on CPU and
// HDN; the point is 16,384 nodes (-bench RHDFlow/16384 -benchtime
// 1x), the smaller ones show how the cost grows. Besides the event rate
// it reports the peaks of goroutines, goroutine stacks and heap in use,
// sampled every 10 ms of wall time while the runs go (the memory of a
// large run is where coroutines per agent show).
func BenchmarkAllreduceRHDFlow(b *testing.B) {
	hw := cluster.GPUTN()
	hw.Network.Model = net.ModelFlow
	for _, n := range []int{1024, 2048, 4096, 16384} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN} {
				b.Run(string(s), func(b *testing.B) {
					p := startPeaks()
					benchAllreduceRuns(b, hw, n, false, AlgRHD, s)
					p.report(b)
				})
			}
		})
	}
}

// BenchmarkAllreduceGPUTNRHD is what brings GPU-TN's 8 MiB allreduce at
// 1,024 nodes under a minute on two cores (issue 30, item 4): the ring's
// 16 slices make 2·1,023·16 steps of about 21 modelled events each per
// node (706 M events), the recursive halving-doubling 2·10 per slice.
// Payload-free, one engine, at 1,024 nodes in the packet model and 4,096
// in the flow model, with 1 work-group (the rhd form's default) and 16
// (the chapter's slices); e.g. -bench 'GPUTNRHD/packet-1024/wgs16$'
// -benchtime 1x. It reports the peak heap and stacks in use besides the
// event rate; run the 4,096-node points one at a time (about 3 GB with 16
// slices).
func BenchmarkAllreduceGPUTNRHD(b *testing.B) {
	for _, pt := range []struct {
		name, model string
		n           int
	}{{"packet-1024", net.ModelPacket, 1024}, {"flow-4096", net.ModelFlow, 4096}} {
		for _, wgs := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/wgs%d", pt.name, wgs), func(b *testing.B) {
				hw := cluster.GPUTN()
				hw.Network.Model = pt.model
				p := startPeaks()
				benchAllreduceRunsWGs(b, hw, pt.n, false, AlgRHD, strategy.GPUTN, wgs)
				p.report(b)
			})
		}
	}
}

// BenchmarkAllreduceGPUTNRing is the issue-30 goal run of GPU-TN: the
// documents' ring with 16 slices (one triggered put per step and slice),
// 8 MiB payload-free, on two engines as the CLI runs it with
// run.partitions=2, at 64 nodes with 512 KiB (the 1,024-node run's 512 B
// slices, seconds) and at 1,024 nodes with 8 MiB (the goal: a minute on
// two idle cores; minutes, about 2.7 GB: run it alone, -benchtime 1x
// -timeout 0). Besides the event rate it reports the events per (node,
// step, slice) unit — 21.1 since GPU loads' sample points run no event
// for polls (docs/speed.md) — the CPU-seconds per run and the peak heap.
func BenchmarkAllreduceGPUTNRing(b *testing.B) {
	for _, pt := range []struct {
		n    int
		size unit.Bytes
	}{{64, 512 * unit.KiB}, {1024, 8 * unit.MiB}} {
		b.Run(fmt.Sprintf("%d-%s", pt.n, pt.size), func(b *testing.B) {
			var events uint64
			p := startPeaks()
			cpu0 := cpuSeconds(b)
			for range b.N {
				c, err := cluster.NewPartitioned(1, cluster.GPUTN(), pt.n, 2, false)
				if err != nil {
					b.Fatal(err)
				}
				a := Allreduce{Size: pt.size, WGs: 16, WGSize: 256, CPUThreads: 8}
				if _, err := a.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
					b.Fatal(err)
				}
				events += c.Events()
				c.Close()
			}
			cpu := cpuSeconds(b) - cpu0
			reportRates(b, events, cpu)
			b.ReportMetric(cpu/float64(b.N), "cpu-s/run")
			units := float64(pt.n) * float64(2*(pt.n-1)) * 16
			b.ReportMetric(float64(events)/float64(b.N)/units, "events/unit")
			p.report(b)
		})
	}
}

// BenchmarkAllreduceGPUTNRingWindow runs the GPU-TN ring of the 1,024-node
// goal (8 MiB, 16 slices, payload-free) on one engine for a window of
// simulated time, 20 to 80 us (17,978,369 events, after the set-up), and
// reports the CPU-seconds of that window: the 1,024-node per-event cost in
// about ten CPU-seconds, not the whole run's five minutes. On the shared
// machine two binaries compare best run side by side, one process each
// with GOMAXPROCS=1 (-benchtime 1x), several pairs (docs/speed.md,
// "GPU-TN's ring at 1,024 nodes, fifteenth session").
func BenchmarkAllreduceGPUTNRingWindow(b *testing.B) {
	const n, from, to = 1024, 20 * sim.Microsecond, 80 * sim.Microsecond
	var cpu float64
	var events uint64
	for range b.N {
		e := sim.New(1)
		c, err := cluster.New(e, cluster.GPUTN(), n, false)
		if err != nil {
			b.Fatal(err)
		}
		var cpu0 float64
		var ev0 uint64
		e.At(from, func() { cpu0, ev0 = cpuSeconds(b), c.Events() })
		e.At(to, e.Stop)
		a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
		if _, err := a.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
			b.Fatal(err)
		}
		if e.Now() != to {
			b.Fatalf("stopped at %v, want %v", e.Now(), to)
		}
		cpu += cpuSeconds(b) - cpu0
		events += c.Events() - ev0
		c.Close()
	}
	b.ReportMetric(cpu/float64(b.N), "window-cpu-s")
	b.ReportMetric(float64(events)/float64(b.N), "window-events")
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
}

// peaks samples the goroutine count and the stack and heap in use until
// report.
type peaks struct {
	stop                chan struct{}
	done                chan struct{}
	goroutines          int
	stackBytes, heapUse uint64
}

func startPeaks() *peaks {
	p := &peaks{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peaks) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.goroutines = max(p.goroutines, runtime.NumGoroutine())
	p.stackBytes = max(p.stackBytes, ms.StackInuse)
	p.heapUse = max(p.heapUse, ms.HeapInuse)
}

// report stops the sampling and reports the peaks.
func (p *peaks) report(b *testing.B) {
	close(p.stop)
	<-p.done
	b.ReportMetric(float64(p.goroutines), "peak-goroutines")
	b.ReportMetric(float64(p.stackBytes)/1e6, "peak-stack-MB")
	b.ReportMetric(float64(p.heapUse)/1e6, "peak-heap-MB")
}

func benchAllreduce(b *testing.B, nodes int, functional bool) {
	benchAllreduceOn(b, cluster.GPUTN(), nodes, functional, AlgRing,
		[]strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GPUTN})
}

func benchAllreduceOn(b *testing.B, hw cluster.Spec, nodes int, functional bool, alg string, strats []strategy.Strategy) {
	for _, s := range strats {
		b.Run(string(s), func(b *testing.B) { benchAllreduceRuns(b, hw, nodes, functional, alg, s) })
	}
}

// benchAllreduceRuns runs the allreduce b.N times on strategy s and
// reports the event rates.
func benchAllreduceRuns(b *testing.B, hw cluster.Spec, nodes int, functional bool, alg string, s strategy.Strategy) {
	benchAllreduceRunsWGs(b, hw, nodes, functional, alg, s, 16)
}

// benchAllreduceRunsWGs is benchAllreduceRuns with wgs GPU-TN slices (0:
// the default rule, Allreduce.Slices).
func benchAllreduceRunsWGs(b *testing.B, hw cluster.Spec, nodes int, functional bool, alg string, s strategy.Strategy, wgs int) {
	var events uint64
	cpu0 := cpuSeconds(b)
	for range b.N {
		e := sim.New(1)
		c, err := cluster.New(e, hw, nodes, functional)
		if err != nil {
			b.Fatal(err)
		}
		a := Allreduce{Size: 8 * unit.MiB, WGs: wgs, WGSize: 256, CPUThreads: 8, Algorithm: alg}
		r, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil || r.Verified != functional {
			b.Fatalf("%v verified=%v", err, r.Verified)
		}
		events += e.Events()
		e.Close()
	}
	reportRates(b, events, cpuSeconds(b)-cpu0)
}

// reportRates reports events per wall and CPU second, events and wall
// seconds per run.
func reportRates(b *testing.B, events uint64, cpu float64) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
}

// cpuSeconds is the process's user plus system CPU time so far. On the
// shared 2-core machine wall time depends on the other jobs; CPU time much
// less (it still includes the garbage collector's work on the other core).
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkAllreduceCheck64 times what functional checking adds to
// BenchmarkAllreduce64 (8 MiB, 64 nodes, 16 slices): generating every
// node's input, the serial reference and the verification of every node's
// result, on the same layout and fresh memories (so first-touch page faults
// are included, as in the real run). Compare its s/run with
// BenchmarkAllreduce64's.
func BenchmarkAllreduceCheck64(b *testing.B) {
	// fresh: memories as the run gets them, so the first touch of 512 MiB
	// of input pages is in the time (a kernel cost of the simulated memory,
	// which a functional run pays whatever checks it); touched: the pages
	// already faulted in (outside the time), so only the checking work is.
	for _, touched := range []bool{false, true} {
		name := "fresh"
		if touched {
			name = "touched"
		}
		b.Run(name, func(b *testing.B) { benchCheck(b, touched) })
	}
}

func benchCheck(b *testing.B, touched bool) {
	const n = 64
	l := newRingLayout(int(8*unit.MiB/4), n, 16)
	for range b.N {
		ms := make([]*mem.Memory, n)
		bases := make([]mem.Addr, n)
		b.StopTimer()
		for r := range n {
			ms[r] = mem.New("m", true)
			bases[r] = ms[r].Alloc(mem.GPU, l.totalSize, "allreduce")
			if touched {
				clear(ms[r].Bytes(bases[r], int(l.totalSize)))
			}
		}
		b.StartTimer()
		for r := range n {
			// Node 0's input in every memory (the same copies as each
			// node's own), so that it can stand in for every node's
			// result below.
			l.fill(ms[r], bases[r], 0)
			l.markFlags(ms[r], bases[r], r)
		}
		if l.reference() == nil {
			b.Fatal("no reference")
		}
		// verifyAll against node 0's input does the same full comparison,
		// on the same cores, as against the sum.
		if err := l.verifyAll(ms, bases, newPattern(func(j int) float32 { return inputValue(0, j) })); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
}

// BenchmarkLookaheadWindows measures what a conservative parallel engine
// could gain on the 64-node 8 MiB allreduce (payload-free): events per
// window of the lookahead (link latency + switch latency, 100 ns in preset
// gputn), and the speedup bound for two balanced partitions that
// synchronise once per non-empty window at a barrier cost of 0.5 µs, with
// the measured sequential cost per event (docs/parallel.md).
func BenchmarkLookaheadWindows(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.GPUTN} {
		b.Run(string(s), func(b *testing.B) {
			for range b.N {
				e := sim.New(1)
				hw := cluster.GPUTN()
				c, err := cluster.New(e, hw, 64, false)
				if err != nil {
					b.Fatal(err)
				}
				w := e.CountWindows(hw.Link.Latency + hw.Switch.Latency)
				a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
				if _, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
					b.Fatal(err)
				}
				perEvent := b.Elapsed().Seconds() / float64(e.Events()) // seconds, this run alone (b.N = 1)
				const barrier = 0.5e-6
				var nonEmpty, small int
				var seq, par float64
				for _, n := range w.Counts {
					if n == 0 {
						continue
					}
					nonEmpty++
					if n < 16 {
						small++
					}
					seq += float64(n) * perEvent
					par += float64(n)*perEvent/2 + barrier
				}
				b.ReportMetric(float64(e.Events())/float64(nonEmpty), "events/window")
				b.ReportMetric(float64(small)/float64(nonEmpty), "windows<16ev")
				b.ReportMetric(seq/par, "speedup-bound")
				b.ReportMetric(perEvent*1e9, "ns/event")
				e.Close()
			}
		})
	}
}

// BenchmarkAllreduceGPUTNRingWindowParts is BenchmarkAllreduceGPUTNRingWindow
// on k engines (cluster.NewPartitioned) run on GOMAXPROCS threads: the wall
// and CPU seconds of the window 20 to 80 us of the 1,024-node ring. With
// more engines than threads each thread runs its engines one after the
// other in every window (sim.Group.Run), each engine's nodes' state small
// enough to stay in the core's caches through its window.
func BenchmarkAllreduceGPUTNRingWindowParts(b *testing.B) {
	for _, k := range []int{1, 2, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("p%d", k), func(b *testing.B) { benchRingWindowParts(b, 1024, k, 20*sim.Microsecond, 80*sim.Microsecond) })
	}
}

// BenchmarkAllreduceGPUTNRingWindowParts256 is the window 20 to 120 us of
// the 256-node ring (8 MiB, 16 slices, payload-free; about 4.76 M events
// in 1,000 windows of the 100 ns lookahead) on k engines: where more
// engines than the state needs cost more per event. Run with GOMAXPROCS=1
// (one thread runs every engine, no barrier waits) and the k side by side;
// the difference in window-cpu-s between two k over the difference in
// part-windows is the cost of one engine's window (docs/speed.md, "The
// engines' windows (eighteenth session)").
func BenchmarkAllreduceGPUTNRingWindowParts256(b *testing.B) {
	for _, k := range []int{2, 32, 128} {
		b.Run(fmt.Sprintf("p%d", k), func(b *testing.B) { benchRingWindowParts(b, 256, k, 20*sim.Microsecond, 120*sim.Microsecond) })
	}
}

// benchRingWindowParts runs the GPU-TN ring of n nodes on k engines and
// reports the CPU and wall seconds, events and engine windows (windows
// times k) between from and to simulated.
func benchRingWindowParts(b *testing.B, n, k int, from, to sim.Time) {
	var cpu, wall float64
	var events, windows uint64
	for range b.N {
		c, err := cluster.NewPartitioned(1, cluster.GPUTN(), n, k, false)
		if err != nil {
			b.Fatal(err)
		}
		e := c.Group.Engine(0)
		var cpu0 float64
		var wall0 time.Time
		var ev0, w0 uint64
		e.At(from, func() { cpu0, wall0, ev0, w0 = cpuSeconds(b), time.Now(), c.Events(), c.Group.Windows() })
		e.At(to, e.Stop)
		a := Allreduce{Size: 8 * unit.MiB, WGs: 16, WGSize: 256, CPUThreads: 8}
		if _, err := a.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
			b.Fatal(err)
		}
		cpu += cpuSeconds(b) - cpu0
		wall += time.Since(wall0).Seconds()
		events += c.Events() - ev0
		windows += c.Group.Windows() - w0
		c.Close()
	}
	b.ReportMetric(cpu/float64(b.N), "window-cpu-s")
	b.ReportMetric(wall/float64(b.N), "window-wall-s")
	b.ReportMetric(float64(events)/float64(b.N), "window-events")
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	b.ReportMetric(cpu/float64(events)*1e9, "ns/event")
	b.ReportMetric(float64(windows*uint64(k))/float64(b.N), "part-windows")
}
