package exp

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

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
	err = forEachGated(cfg, Env{}, len(mem), nil, mem, func(i, cores int) error {
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
