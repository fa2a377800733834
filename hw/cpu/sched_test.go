package cpu

import (
	"math"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// instrFor returns the instructions that take d on spec()'s cores (IPC 2
// at 4 GHz: 8 per ns).
func instrFor(d sim.Duration) int { return int(d / sim.Nanosecond * 8) }

func near(got, want sim.Duration, tol float64) bool {
	return math.Abs(float64(got-want)) <= tol*float64(want)
}

func TestTwoBusyThreadsOnOneCoreTakeTwiceAsLong(t *testing.T) {
	const work = 10 * sim.Millisecond
	e := sim.New(1)
	c := newTestCPU(e, spec())
	var ends [2]sim.Time
	for i := range ends {
		if _, err := c.SpawnOn(3, "busy", func(th *Thread) { th.Instr(instrFor(work)); ends[i] = th.Now() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	// Round robin with 1 ms slices: the first ends after 19 slices of
	// work, the second after 20, plus 2 µs per switch.
	for i, end := range ends {
		if !near(end, 2*work, 0.06) || end < 19*sim.Millisecond {
			t.Errorf("thread %d ended at %v, want ≈ %v (twice its work)", i, end, 2*work)
		}
	}
	st := c.CoreStats()
	if st[3].Switches < 19 || st[3].Utilization(e.Now()) < 0.999 || st[0].Busy != 0 {
		t.Errorf("core stats %+v: want ≥19 switches on a fully busy core 3, core 0 idle", st)
	}
	// Alone, each would take its work exactly.
	e = sim.New(1)
	c = newTestCPU(e, spec())
	var alone sim.Time
	c.Spawn("busy", func(th *Thread) { th.Instr(instrFor(work)); alone = th.Now() })
	c.Spawn("other", func(th *Thread) { th.Instr(instrFor(work)) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if alone != work {
		t.Errorf("on cores of their own: %v, want %v", alone, work)
	}
}

// appWithPoller runs 5 ms of application work on core 0 beside a helper
// pinned to helperCore that polls a word the application writes when done.
func appWithPoller(t *testing.T, helperCore int) (app sim.Time, st []CoreStats) {
	t.Helper()
	e := sim.New(1)
	c := newTestCPU(e, spec())
	flag := c.Mem().AllocData(mem.Host, 8, "flag")
	if _, err := c.SpawnOn(helperCore, "helper", func(th *Thread) {
		th.WaitWord(flag, "stop", func(v uint64) bool { return v != 0 })
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SpawnOn(0, "app", func(th *Thread) {
		th.Instr(instrFor(5 * sim.Millisecond))
		app = th.Now()
		th.Store(flag, 1)
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return app, c.CoreStats()
}

func TestPollingHelperSlowsTheApplicationOnItsCore(t *testing.T) {
	alone, _ := appWithPoller(t, 1)
	if alone != 5*sim.Millisecond {
		t.Fatalf("helper on its own core: application took %v, want 5ms", alone)
	}
	shared, st := appWithPoller(t, 0)
	if !near(shared, 10*sim.Millisecond, 0.06) {
		t.Errorf("helper on the application's core: %v, want ≈10ms (half the core)", shared)
	}
	if p := float64(st[0].Polling) / float64(st[0].Busy); p < 0.4 || p > 0.6 {
		t.Errorf("core 0 spent %.2f of its busy time polling, want ≈ 0.5", p)
	}
}

func TestComputeOnFewerCoresSlowsDown(t *testing.T) {
	region := func(cores int) sim.Duration {
		s := spec()
		s.Cores = cores
		return runSpec(t, s, func(th *Thread) { th.Compute(4<<20, 8) })
	}
	eight, four := region(8), region(4)
	// 8 threads on 8 cores stream at 8 × 3.2 GB/s; on 4 cores two threads
	// share each core and only 4 × 3.2 GB/s of misses are in flight.
	if !near(eight, sim.Duration(4<<20/25.6e9*1e12), 0.01) {
		t.Errorf("8 threads on 8 cores: %v, want ≈ 163.84us", eight)
	}
	if r := float64(four) / float64(eight); r < 1.95 || r > 2.1 {
		t.Errorf("8 threads on 4 cores took %.2f× as long as on 8, want ≈ 2", r)
	}
}

func TestBlockingWaitFreesTheCore(t *testing.T) {
	e := sim.New(1)
	c := newTestCPU(e, spec())
	var sig sim.Signal
	var woke, busy sim.Time
	if _, err := c.SpawnOn(0, "waiter", func(th *Thread) { th.Block(&sig, "event"); woke = th.Now() }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SpawnOn(0, "busy", func(th *Thread) { th.Instr(instrFor(3 * sim.Millisecond)); busy = th.Now() }); err != nil {
		t.Fatal(err)
	}
	e.At(100*sim.Microsecond, sig.Notify)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	// The waiter is off the core until 105 µs, then waits for the busy
	// thread's slice to end at 1 ms + 2 µs (one switch in).
	if want := sim.Millisecond + 2*sim.Microsecond + 2*sim.Microsecond; woke != want {
		t.Errorf("blocked waiter ran again at %v, want %v", woke, want)
	}
	if want := 3*sim.Millisecond + 4*sim.Microsecond + 2*sim.Microsecond; busy != want {
		t.Errorf("busy thread ended at %v, want %v (3 ms + three switches)", busy, want)
	}
}

func TestSpawnOnRejectsACoreOutOfRange(t *testing.T) {
	c := newTestCPU(sim.New(1), spec())
	for _, k := range []int{-1, 8} {
		_, err := c.SpawnOn(k, "x", func(*Thread) {})
		if err == nil || !strings.Contains(err.Error(), "cpu.cores") {
			t.Errorf("core %d: %v, want an error naming cpu.cores", k, err)
		}
	}
}

func TestPlacementSpreadsThreads(t *testing.T) {
	c := newTestCPU(sim.New(1), spec())
	var got []int
	for range 10 {
		got = append(got, c.Spawn("t", func(*Thread) {}).Core())
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("placement %v, want %v", got, want)
		}
	}
}
