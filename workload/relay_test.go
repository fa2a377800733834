package workload

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// nopTracer records nothing. A run with a tracer does not relay the CP
// service threads' empty polls (their spans need the body to run).
type nopTracer struct{}

func (nopTracer) Span(string, string, sim.Time, sim.Time) {}

// The CP service threads' empty polls relayed (sim.Proc.ThenSleep) are
// their polls: COMPNET's allreduce ends at the same times per node,
// verified, with the same service reports (each thread's polls, counts,
// time on its core, energy), in the same
// number of events, with relays and without (a tracer), on one CP core
// per thread (relayed) and time-sliced (never relayed), with one thread
// (several queues each: the next poll's acquire relayed too), with one
// queue per thread (every relayed poll's end ends a round), with
// store_locked slots and a 2-entry store buffer.
func TestRelayedPollsArePolls(t *testing.T) {
	for _, c := range []struct {
		name    string
		threads int
		over    bool
		locking bool
		sb      int
		wgs     int
		relays  bool
	}{
		{"default", 0, false, false, 32, 0, true},
		{"one thread", 1, false, false, 32, 0, true},
		{"one queue per thread", 0, false, false, 32, 2, true},
		{"llc_locking, store buffer 2", 0, false, true, 2, 0, true},
		{"4 threads time-sliced on 2 cores", 4, true, false, 32, 0, false},
	} {
		run := func(trace bool) (string, uint64) {
			hw := cluster.CompNet()
			hw.GPU.Mode = "dgpu"
			hw.CP.StoreBuffer, hw.CP.Oversubscribe = c.sb, c.over
			sp := shmem.DefaultSpec()
			sp.LLCLocking = c.locking
			if c.threads > 0 {
				sp.Threads = c.threads
			}
			out, events, _, relays := pollRun(t, c.name, hw, strategy.COMPNET, sp, c.wgs, trace)
			return fmt.Sprintf("%s\nevents %d", out, events), relays
		}
		polls, r0 := run(true)
		relayed, r1 := run(false)
		if polls != relayed {
			t.Errorf("%s: polls %s\nrelayed %s", c.name, polls, relayed)
		}
		if r0 != 0 || (r1 > 0) != c.relays {
			t.Errorf("%s: %d relayed wake-ups with a tracer, %d without; want 0 and some: %v", c.name, r0, r1, c.relays)
		}
	}
}

// pollRun runs a verified 256 KiB allreduce of strategy s on 4 nodes of hw
// with sp (a tracer, which needs every poll's span, when trace is set),
// fails the test if it does not verify or no service thread reports a
// poll, and returns its result and service reports as text and the
// engine's event, mark and relay counts.
func pollRun(t *testing.T, name string, hw cluster.Spec, s strategy.Strategy, sp shmem.Spec, wgs int, trace bool) (out string, events, marks, relays uint64) {
	t.Helper()
	cl, err := cluster.New(sim.New(1), hw, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Engine.Close()
	if trace {
		cl.Engine.SetTracer(nopTracer{})
	}
	a := Allreduce{Size: 256 * unit.KiB, WGSize: 256, CPUThreads: 8, WGs: wgs, reports: make([]shmem.Report, 4)}
	r, err := a.Run(cl, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: sp})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !r.Verified {
		t.Errorf("%s: not verified", name)
	}
	var polls uint64
	for _, rep := range a.reports {
		polls += rep.Polls()
	}
	if polls == 0 {
		t.Errorf("%s: no polls reported", name)
	}
	return fmt.Sprintf("%+v\nreports %+v", r, a.reports), cl.Engine.Events(), cl.Engine.MarksPassed(), cl.Engine.Relays()
}
