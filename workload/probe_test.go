package workload

import (
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func TestProbe(t *testing.T) {
	for _, n := range []int{32} {
		for _, s := range []strategy.Strategy{strategy.CPU, strategy.GPUTN} {
			st := time.Now()
			res, ev := runAllreduce(t, s, n, 8*unit.MiB, true)
			t.Logf("n=%d %s time=%v events=%d wall=%v", n, s, res.Time, ev, time.Since(st))
		}
	}
}
