package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

func runLatency(t *testing.T, s strategy.Strategy) LatencyResult {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Latency{Size: 64}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return res
}

// The decomposition must be a consistent timeline, and GPU-TN, which skips
// the kernel boundary on the critical path, must beat GDS, which beats HDN.
func TestLatencyDecomposition(t *testing.T) {
	got := map[strategy.Strategy]sim.Time{}
	for _, s := range []strategy.Strategy{strategy.HDN, strategy.GDS, strategy.GPUTN} {
		res := runLatency(t, s)
		if !res.Verified {
			t.Errorf("%s: not verified", s)
		}
		for _, seg := range res.Segments {
			if seg.End < seg.Start {
				t.Errorf("%s: segment %q ends before it starts: %+v", s, seg.Phase, seg)
			}
			t.Logf("%s %-10s %-26s %v .. %v (%v)", s, seg.Node, seg.Phase, seg.Start, seg.End, seg.End-seg.Start)
		}
		last := res.Segments[len(res.Segments)-1]
		if res.EndToEnd != last.End-res.Segments[0].Start {
			t.Errorf("%s: end-to-end %v does not span the timeline", s, res.EndToEnd)
		}
		got[s] = res.EndToEnd
	}
	if !(got[strategy.GPUTN] < got[strategy.GDS] && got[strategy.GDS] < got[strategy.HDN]) {
		t.Errorf("end-to-end HDN %v, GDS %v, GPUTN %v: want GPUTN < GDS < HDN", got[strategy.HDN], got[strategy.GDS], got[strategy.GPUTN])
	}
}
