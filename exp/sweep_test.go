package exp

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	hwmem "github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

func TestForEachReturnsAPanicAsAnError(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel = 2
	err = forEach(cfg, Env{}, 4, func(i int) error {
		if i == 2 {
			var s []int
			_ = s[i] // a real runtime panic in a sweep worker
		}
		return nil
	})
	var pe *sim.PanicError
	if !errors.As(err, &pe) || pe.Proc != "sweep job 2" || !strings.Contains(pe.Stack, "sweep_test.go") {
		t.Fatalf("forEach = %v; want the worker's panic as a *sim.PanicError with its stack", err)
	}
}

// The memory gate runs jobs at once only while their estimates fit in
// run.mem_budget together, a job above the budget alone, every job once,
// and tells a job running alone every core.
func TestForEachGatedBudget(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.MemBudget = 4, 100
	mem := []float64{30, 30, 30, 150, 60, 60, 10, 10}
	var mu sync.Mutex
	inUse, peak, runs := 0.0, 0.0, make([]int, len(mem))
	aloneCores := 0
	err = forEachGated(cfg, Env{}, len(mem), nil, mem, func(i, cores int, _ *hwmem.Arena) error {
		mu.Lock()
		inUse += mem[i]
		peak = max(peak, inUse)
		if mem[i] > 100 {
			if inUse != mem[i] {
				t.Errorf("job %d (%g > budget) ran beside others (%g in use)", i, mem[i], inUse)
			}
			aloneCores = cores
		} else if inUse > 100 {
			t.Errorf("%g in use with job %d, above the budget 100", inUse, i)
		}
		runs[i]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		inUse -= mem[i]
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if r != 1 {
			t.Errorf("job %d ran %d times", i, r)
		}
	}
	if aloneCores != runtime.GOMAXPROCS(0) {
		t.Errorf("the job running alone got %d cores, want %d", aloneCores, runtime.GOMAXPROCS(0))
	}
}

// The gate starts the largest waiting job first, and a free worker takes
// the largest job that fits beside those running instead of waiting for
// the next in line: here job 1 (60) cannot join job 0 (60) under a budget
// of 100, so the second worker starts job 2 (30), not nothing. Job 0,
// started first, leaves a core to the job that starts beside it.
func TestForEachGatedLargestThatFitsFirst(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.MemBudget = 2, 100
	mem := []float64{60, 60, 30, 30, 10}
	var mu sync.Mutex
	var started []int
	release := make(chan struct{})
	firstCores := 0
	err = forEachGated(cfg, Env{}, len(mem), nil, mem, func(i, cores int, _ *hwmem.Arena) error {
		mu.Lock()
		started = append(started, i)
		if i == 0 {
			firstCores = cores
		}
		n := len(started)
		mu.Unlock()
		if n == 1 {
			select { // the first job holds its room until the second has started
			case <-release:
			case <-time.After(5 * time.Second): // a gate that waits in line
			}
		} else if n == 2 {
			close(release)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The two workers record their first jobs in either order.
	if len(started) != len(mem) || min(started[0], started[1]) != 0 || max(started[0], started[1]) != 2 {
		t.Fatalf("start order %v; want jobs 0 (largest) and 2 (the largest that fits beside it) first", started)
	}
	if want := max(1, runtime.GOMAXPROCS(0)-1); firstCores != want {
		t.Errorf("job 0 got %d cores with job 2 starting beside it, want %d", firstCores, want)
	}
}

// A worker that waits for room trims the sweep's arena to what the jobs
// running leave of the budget: job 0 (60) and job 2 (40) fill a budget of
// 100; job 2 leaves a backing (4 MiB, far above the budget's 40 bytes
// left) in the arena and ends, and job 1 (50) cannot join job 0, so that
// worker waits, and the arena must be empty while job 0 still runs.
func TestForEachGatedWaitingWorkerHoldsNoMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("backings are mapped on Linux only")
	}
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.MemBudget = 2, 100
	mem := []float64{60, 50, 40}
	var mu sync.Mutex
	var small *hwmem.Arena
	emptied := false
	err = forEachGated(cfg, Env{}, len(mem), nil, mem, func(i, _ int, arena *hwmem.Arena) error {
		switch i {
		case 2:
			m := hwmem.New("m", true)
			m.UseArena(arena)
			a := m.Alloc(hwmem.Host, 4<<20, "buf")
			m.Bytes(a, 4<<20)[0] = 1
			m.Release()
			if arena.Idle() != 1 {
				t.Error("job 2's backing did not go back to the sweep's arena")
			}
			mu.Lock()
			small = arena
			mu.Unlock()
		case 0:
			for range 500 {
				mu.Lock()
				a := small
				mu.Unlock()
				if a != nil && a.Idle() == 0 {
					emptied = true
					return nil
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !emptied {
		t.Error("the worker waiting for room kept job 2's backing while job 0 ran")
	}
}

// Every job of a gated sweep gets the same arena, whichever worker runs
// it: a point takes the node memories of the point that ended last even
// when that one ran on the other worker (the main job's 64-node points
// move between workers). Two jobs that run at once (the first waits for
// the second) are on different workers.
func TestForEachGatedSharesOneArena(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.MemBudget = 2, 100
	mem := []float64{40, 40, 10, 10}
	var mu sync.Mutex
	arenas := map[*hwmem.Arena]bool{}
	started := 0
	second := make(chan struct{})
	err = forEachGated(cfg, Env{}, len(mem), nil, mem, func(i, _ int, arena *hwmem.Arena) error {
		mu.Lock()
		arenas[arena] = true
		started++
		n := started
		mu.Unlock()
		switch n {
		case 1:
			select {
			case <-second:
			case <-time.After(5 * time.Second):
				t.Error("the second job did not start beside the first")
			}
		case 2:
			close(second)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arenas) != 1 || arenas[nil] {
		t.Errorf("the jobs got %d arenas (nil among them: %v), want one for the sweep", len(arenas), arenas[nil])
	}
}
