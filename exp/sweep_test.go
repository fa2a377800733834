package exp

import (
	"errors"
	"strings"
	"testing"

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
