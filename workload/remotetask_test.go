package workload

import (
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The remote-task allreduce (XTQ, HSA) verifies on odd and even node
// counts, functional and payload-free runs time the same, and XTQ beats
// HSA, whose target CPUs enqueue every reduction kernel.
func TestRemoteTaskAllreduce(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.XTQ, strategy.HSA} {
		for _, n := range []int{2, 3, 5, 8} {
			res, _ := runAllreduceOn(t, cluster.XTQ(), s, n, 64*unit.KiB+12, true)
			if !res.Verified || res.Time <= 0 {
				t.Errorf("%s n=%d: verified=%v time=%v", s, n, res.Verified, res.Time)
			}
		}
		fun, ev1 := runAllreduceOn(t, cluster.XTQ(), s, 4, 64*unit.KiB, true)
		free, ev2 := runAllreduceOn(t, cluster.XTQ(), s, 4, 64*unit.KiB, false)
		if fun.Time != free.Time || ev1 != ev2 {
			t.Errorf("%s: functional %v (%d events) vs payload-free %v (%d events)", s, fun.Time, ev1, free.Time, ev2)
		}
	}
}

// A CPU task spawn (XTQ, HSA) verifies, its phases tile the end-to-end
// time, the function runs on the CPU agent, and XTQ's enqueue involves no
// target CPU: its dispatch phase is the agent thread's doorbell poll and
// packet read. Non-remote-task strategies refuse the option.
func TestCPUTaskSpawnBreakdown(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.HSA, strategy.XTQ} {
		c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := TaskSpawn{Size: 4 * unit.KiB, WGSize: 256, CPUTask: true}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil || !r.Verified || r.Agent != "CPU agent" {
			t.Fatalf("%s: %v verified=%v agent=%q", s, err, r.Verified, r.Agent)
		}
		prev, phases := sim.Time(0), []string{}
		for _, p := range r.Phases {
			if p.Start != prev || p.End <= p.Start {
				t.Errorf("%s: phase %s [%v, %v] does not follow %v", s, p.Phase, p.Start, p.End, prev)
			}
			prev = p.End
			phases = append(phases, p.Phase)
		}
		want := []string{PhasePost, PhaseTransfer, PhaseEnqueue, PhaseDispatch, PhaseExecute, PhaseCompletion}
		if strings.Join(phases, ",") != strings.Join(want, ",") || prev != r.EndToEnd {
			t.Errorf("%s: phases %v ending at %v, want %v ending at %v", s, phases, prev, want, r.EndToEnd)
		}
	}
	c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (TaskSpawn{Size: 64, WGSize: 64, CPUTask: true}).Run(c, strategy.CPU, xtqCfg); err == nil {
		t.Error("a CPU task under the CPU strategy was accepted")
	}
}

func TestTaskSpawnBreakdown(t *testing.T) {
	for _, size := range []unit.Bytes{64, 4 * unit.KiB} {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.HSA, strategy.XTQ} {
			c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := TaskSpawn{Size: size, WGSize: 256}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			if err != nil || !r.Verified {
				t.Fatalf("%s %v: %v verified=%v", s, size, err, r.Verified)
			}
			prev := sim.Time(0)
			for _, p := range r.Phases {
				if p.Start != prev || p.End < p.Start {
					t.Errorf("%s %v: phase %s [%v, %v] does not follow %v", s, size, p.Phase, p.Start, p.End, prev)
				}
				prev = p.End
			}
			if prev != r.EndToEnd {
				t.Errorf("%s: phases end at %v, end-to-end %v", s, prev, r.EndToEnd)
			}
		}
	}
}

func BenchmarkAllreduce64Remote(b *testing.B) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HSA, strategy.XTQ} {
		b.Run(string(s), func(b *testing.B) {
			for b.Loop() {
				c, err := cluster.New(sim.New(1), cluster.XTQ(), 64, true)
				if err != nil {
					b.Fatal(err)
				}
				a := Allreduce{Size: 4 * unit.MiB, WGSize: 256, CPUThreads: 8}
				if _, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(c.Engine.Events()), "events")
				c.Engine.Close()
			}
		})
	}
}

var remoteStrategies = []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.HSA, strategy.XTQ}

func xtqCluster(t testing.TB, n int, functional bool) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(sim.New(1), cluster.XTQ(), n, functional)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var xtqCfg = strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}

// Several accumulates per epoch, overlapping (stride 0, 1/2 size) or not,
// equal the serial reference on every strategy; sizes cycle through
// eager and rendezvous.
func TestAccumulateEqualsSerialReference(t *testing.T) {
	for _, s := range remoteStrategies {
		for _, stride := range []unit.Bytes{0, 2 * unit.KiB, 4 * unit.KiB} {
			a := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB, 8, 40 * unit.KiB}, PerEpoch: 3, Epochs: 4, Stride: stride, WGSize: 256, CPUThreads: 8}
			r, err := a.Run(xtqCluster(t, 2, true), s, xtqCfg)
			if err != nil || !r.Verified || r.PerEpoch <= 0 {
				t.Errorf("%s stride %v: %+v %v", s, stride, r, err)
			}
		}
	}
}

func TestAccumulateOutsideWindowIsRefused(t *testing.T) {
	for _, s := range remoteStrategies {
		a := Accumulate{Sizes: []unit.Bytes{512}, PerEpoch: 3, Epochs: 1, Stride: 512, Window: 1024, WGSize: 64, CPUThreads: 1}
		_, err := a.Run(xtqCluster(t, 2, true), s, xtqCfg)
		if err == nil || !strings.Contains(err.Error(), "512 bytes at displacement 1024 lie outside the 1024-byte window") {
			t.Errorf("%s: %v, want the out-of-window accumulate named", s, err)
		}
	}
}

func TestReduceOnOddAndEvenNodeCounts(t *testing.T) {
	for _, s := range remoteStrategies {
		for _, n := range []int{2, 3, 5} {
			r, err := Reduce{Size: 24*unit.KiB + 8, WGSize: 256, CPUThreads: 8}.Run(xtqCluster(t, n, true), s, xtqCfg)
			if err != nil || !r.Verified || r.Time <= 0 {
				t.Errorf("%s n=%d: %+v %v", s, n, r, err)
			}
		}
	}
}

// HSA's Accumulate, Reduce and Allreduce run the CPU's MPI two-sided path,
// each reduction a GPU kernel (the dissertation's §4.3.1, §4.3.3): their
// times follow the MPI protocol knobs (the matching path's cost, the
// long-message protocol), while XTQ's one-sided puts ignore them.
func TestHSAFollowsMPIProtocolKnobs(t *testing.T) {
	slowMatch := xtqCfg
	slowMatch.SW.MPIMatch *= 4
	smallEager := xtqCfg
	smallEager.MPI.LongProtocol = mpi.LongRndv // the 4 KiB accumulates (above the 2 KiB eager limit) wait for the header round trip
	acc := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB}, PerEpoch: 2, Epochs: 2, Stride: 4 * unit.KiB, WGSize: 256, CPUThreads: 1}
	red := Reduce{Size: 4 * unit.KiB, WGSize: 256, CPUThreads: 1}
	for _, tc := range []struct {
		name string
		run  func(s strategy.Strategy, cfg strategy.Config) (sim.Time, string, error)
	}{
		{"accumulate", func(s strategy.Strategy, cfg strategy.Config) (sim.Time, string, error) {
			r, err := acc.Run(xtqCluster(t, 2, true), s, cfg)
			return r.Time, r.Impl, err
		}},
		{"reduce", func(s strategy.Strategy, cfg strategy.Config) (sim.Time, string, error) {
			r, err := red.Run(xtqCluster(t, 3, true), s, cfg)
			return r.Time, r.Impl, err
		}},
	} {
		base, impl, err := tc.run(strategy.HSA, xtqCfg)
		if err != nil || impl == "remote-tasks" {
			t.Fatalf("%s HSA: impl %s, %v: want the two-sided MPI path", tc.name, impl, err)
		}
		for _, k := range []struct {
			name string
			cfg  strategy.Config
		}{{"sw.mpi_match ×4", slowMatch}, {"mpi.long_protocol = rndv", smallEager}} {
			got, _, err := tc.run(strategy.HSA, k.cfg)
			if err != nil || got <= base {
				t.Errorf("%s HSA with %s: %v (base %v), %v: want slower", tc.name, k.name, got, base, err)
			}
		}
		x0, _, err0 := tc.run(strategy.XTQ, xtqCfg)
		x1, _, err1 := tc.run(strategy.XTQ, smallEager)
		if err0 != nil || err1 != nil || x0 != x1 {
			t.Errorf("%s XTQ: %v vs %v with mpi.long_protocol = rndv (%v %v): want the one-sided path unaffected", tc.name, x0, x1, err0, err1)
		}
	}
}

// The remote task spawn runs on the thin RDMA layer (no MPI matching on
// either side, the XTQ chapter's microbenchmark): raising sw.mpi_match
// moves none of CPU, HSA, XTQ. HSA's message carries the arguments and the
// payload, XTQ's also the 64 B packet, so XTQ's transfer is not shorter.
func TestTaskSpawnOnRDMALayer(t *testing.T) {
	run := func(s strategy.Strategy, cfg strategy.Config) TaskSpawnResult {
		r, err := TaskSpawn{Size: 64, WGSize: 256}.Run(xtqCluster(t, 2, true), s, cfg)
		if err != nil || !r.Verified {
			t.Fatalf("%s: %v", s, err)
		}
		return r
	}
	slow := xtqCfg
	slow.SW.MPIMatch *= 10
	phase := func(r TaskSpawnResult, name string) sim.Time {
		for _, p := range r.Phases {
			if p.Phase == name {
				return p.End - p.Start
			}
		}
		t.Fatalf("no phase %s", name)
		return 0
	}
	res := map[strategy.Strategy]TaskSpawnResult{}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HSA, strategy.XTQ} {
		res[s] = run(s, xtqCfg)
		if got := run(s, slow).EndToEnd; got != res[s].EndToEnd {
			t.Errorf("%s: %v with sw.mpi_match ×10, %v without: the microbenchmark must not take the MPI path", s, got, res[s].EndToEnd)
		}
	}
	if x, h := phase(res[strategy.XTQ], PhaseTransfer), phase(res[strategy.HSA], PhaseTransfer); x < h {
		t.Errorf("XTQ transfer %v < HSA transfer %v: XTQ's message carries 64 B more", x, h)
	}
}

// The resource-ready sync runs once by default (every round's resources
// posted up front) and before every XtqPut round as the option: both give
// the serial sum, and the per-round sync costs time on every step.
func TestXTQAllreduceSyncOnceOrPerRound(t *testing.T) {
	run := func(perRound bool) AllreduceResult {
		a := Allreduce{Size: 64 * unit.KiB, WGSize: 256, CPUThreads: 8, SyncPerRound: perRound}
		r, err := a.Run(xtqCluster(t, 4, true), strategy.XTQ, xtqCfg)
		if err != nil || !r.Verified {
			t.Fatalf("sync per round %v: %v verified=%v", perRound, err, r.Verified)
		}
		return r
	}
	once, each := run(false), run(true)
	if once.Time >= each.Time {
		t.Errorf("one sync %v, a sync per round %v: want the per-round syncs to cost time", once.Time, each.Time)
	}
}

// GPU-TN's allreduce kernel has 16 work-groups at every node count and
// size unless set, never more than the trigger entries or resident
// work-groups allow.
func TestGPUTNSlicesDefault(t *testing.T) {
	for _, tc := range []struct {
		a    Allreduce
		n    int
		want int
	}{
		{Allreduce{Size: 64}, 2, 16},
		{Allreduce{Size: 8 * unit.MiB}, 64, 16},
		{Allreduce{Size: 256 * unit.MiB, MaxWGs: 8}, 2, 8},
		{Allreduce{Size: 4 * unit.KiB, WGs: 4}, 8, 4},
	} {
		if got := tc.a.Slices(tc.n); got != tc.want {
			t.Errorf("%+v on %d nodes: %d slices, want %d", tc.a, tc.n, got, tc.want)
		}
	}
}

// The kernel-boundary allreduce's per-step reduction is Baidu's 32
// work-groups at every chunk size, tiny ones included.
func TestBaiduReductionKernelShape(t *testing.T) {
	a := Allreduce{Size: 64, WGSize: 256, CPUThreads: 1}
	for _, nb := range []uint64{8, 64 * 1024, 64 << 20} {
		if got := a.kernelWGs(nil, nb); got != 32 {
			t.Errorf("%d-byte chunk: %d work-groups, want 32", nb, got)
		}
	}
	for _, n := range []int{2, 3} {
		r, err := a.Run(xtqCluster(t, n, true), strategy.HSA, xtqCfg)
		if err != nil || !r.Verified {
			t.Errorf("HSA allreduce of 64 B on %d nodes: %v verified=%v", n, err, r.Verified)
		}
	}
}

// The ring baselines copy the input into the output buffer first: on HDN
// a copy kernel before the n−1 reduction kernels, so each µs more of
// launch and teardown costs n kernels' worth on 2 nodes (2 µs × 2).
func TestBaselineRingCopiesInputFirst(t *testing.T) {
	run := func(extra sim.Time) sim.Time {
		s := cluster.GPUTN()
		s.GPU.Launch += extra
		s.GPU.Teardown += extra
		c, err := cluster.New(sim.New(1), s, 2, true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Allreduce{Size: 64 * unit.KiB, WGSize: 256, CPUThreads: 8}.Run(c, strategy.HDN, xtqCfg)
		if err != nil || !r.Verified {
			t.Fatalf("HDN: %v", err)
		}
		return r.Time
	}
	if d := run(sim.Microsecond) - run(0); d != 4*sim.Microsecond {
		t.Errorf("1 µs more launch and teardown cost %v, want 4 µs: a copy kernel and one reduction kernel", d)
	}
}

// The CPU active message's phases cut where the GPU variants' do (the
// XTQ chapter's breakdown): its post ends when the initiator's NIC begins
// the put, its transfer when the payload's bytes are visible at the
// target, so with the same payload it matches HSA's transfer (HSA's
// message carries the same payload behind the task's description); and the
// target's event is dispatched to the handler once: raising
// sw.event_dispatch by n instructions lengthens the CPU's target enqueue
// phase and its end-to-end time by exactly n instructions' time, not
// twice that.
func TestTaskSpawnCPUPhasesCutAsTheGPUVariants(t *testing.T) {
	run := func(s strategy.Strategy, size unit.Bytes, cfg strategy.Config) TaskSpawnResult {
		r, err := TaskSpawn{Size: size, WGSize: 256}.Run(xtqCluster(t, 2, true), s, cfg)
		if err != nil || !r.Verified {
			t.Fatalf("%s %v: %v", s, size, err)
		}
		return r
	}
	phase := func(r TaskSpawnResult, name string) sim.Time {
		for _, p := range r.Phases {
			if p.Phase == name {
				return p.End - p.Start
			}
		}
		t.Fatalf("no phase %s", name)
		return 0
	}
	for _, size := range []unit.Bytes{64, 4 * unit.KiB} {
		cpu, hsa := run(strategy.CPU, size, xtqCfg), run(strategy.HSA, size, xtqCfg)
		c, h := phase(cpu, PhaseTransfer), phase(hsa, PhaseTransfer)
		// HSA's message is longer by its task description; nothing else
		// differs on the way.
		if d := h - c; d < 0 || d > 20*sim.Nanosecond {
			t.Errorf("%v: CPU transfer %v, HSA %v: want the same path (HSA's at most 20 ns longer)", size, c, h)
		}
		if p := phase(cpu, PhasePost); p < phase(hsa, PhasePost)/2 {
			t.Errorf("%v: CPU post %v, HSA %v: the post must include the doorbell and the NIC's command fetch", size, p, phase(hsa, PhasePost))
		}
	}
	slow := xtqCfg
	const extra = 8000
	slow.SW.EventDispatch += extra
	base, more := run(strategy.CPU, 64, xtqCfg), run(strategy.CPU, 64, slow)
	host := cluster.XTQ().CPU
	want := host.Instr(extra)
	if got := phase(more, PhaseEnqueue) - phase(base, PhaseEnqueue); got != want {
		t.Errorf("sw.event_dispatch +%d instructions: CPU target enqueue +%v, want +%v (one dispatch)", extra, got, want)
	}
	if got := more.EndToEnd - base.EndToEnd; got != want {
		t.Errorf("sw.event_dispatch +%d instructions: CPU end to end +%v, want +%v (one dispatch)", extra, got, want)
	}
}

// With the target buffer written by the target's thread before the spawn
// (taskspawn.warm_target), the CPU handler's copy finds its destination
// in the core's cache: at 4 KiB only the 64 source lines the NIC wrote
// come from DRAM, half the cold copy's 128 lines; the GPU kernels, which
// write the buffer through the GPU's caches, do not change.
func TestTaskSpawnWarmTarget(t *testing.T) {
	run := func(s strategy.Strategy, warm bool) TaskSpawnResult {
		r, err := TaskSpawn{Size: 4 * unit.KiB, WGSize: 256, WarmTarget: warm}.Run(xtqCluster(t, 2, true), s, xtqCfg)
		if err != nil || !r.Verified {
			t.Fatalf("%s warm=%v: %v", s, warm, err)
		}
		return r
	}
	exec := func(r TaskSpawnResult) sim.Time {
		for _, p := range r.Phases {
			if p.Phase == PhaseExecute {
				return p.End - p.Start
			}
		}
		t.Fatal("no execution phase")
		return 0
	}
	cold, warm := exec(run(strategy.CPU, false)), exec(run(strategy.CPU, true))
	if half := cold / 2; warm < half || warm > half+half/20 {
		t.Errorf("CPU copy of 4 KiB: %v into a cold buffer, %v into a warm one: want about half (64 of 128 lines from DRAM, the rest L1 hits)", cold, warm)
	}
	for _, s := range []strategy.Strategy{strategy.HSA, strategy.XTQ} {
		if c, w := run(s, false).EndToEnd, run(s, true).EndToEnd; c != w {
			t.Errorf("%s: %v cold, %v warm: the GPU kernel's time must not depend on the host's cache", s, c, w)
		}
	}
}
