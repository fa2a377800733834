package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// GIO's host templater (shmem.gio.template_at_init = false) runs over the
// QPs nobody has posted to in closed form (model/shmem gioclosed.go), with the peers' heap keys copied when
// a PE connects; a visibility checker on node memory turns the closed
// form off (it records when each word is stored), so the templater then
// writes every slot as events. Both must give the same run: every node's
// finish time and the end time, functional (verified) and payload-free;
// only the event count differs. A closed form that templated a slot at
// another time, or with another key (the WQE would fail at the target's
// NIC), would move them.
func TestGIOClosedFormMatchesEvents(t *testing.T) {
	for _, c := range []struct {
		nodes      int
		size       unit.Bytes
		functional bool
	}{
		{4, 64 * unit.KiB, true},
		{6, 256*unit.KiB + 8, false},
		{9, 96 * unit.KiB, true},
	} {
		// The closed form covers templating over unposted QPs during the
		// run: templates filled with the kernel, not at init (where every
		// QP starts full and nothing is left for it).
		sh := shmem.DefaultSpec()
		sh.GIO.TemplateAtInit = false
		run := func(events bool) (AllreduceResult, uint64) {
			cl, err := cluster.New(sim.New(1), cluster.GIO(), c.nodes, c.functional)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if events {
				for _, n := range cl.Nodes {
					n.Mem.SetChecker(&mem.Checker{})
				}
			}
			a := Allreduce{Size: c.size, WGSize: 256, CPUThreads: 8}
			res, err := a.Run(cl, strategy.GNNGIO, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: sh})
			if err != nil {
				t.Fatalf("%d nodes, events %v: %v", c.nodes, events, err)
			}
			return res, cl.Events()
		}
		closed, evClosed := run(false)
		ev, evEvents := run(true)
		t.Logf("%d nodes: %v %d events closed, %v %d events", c.nodes, closed.Time, evClosed, ev.Time, evEvents)
		if closed.Time != ev.Time || closed.Verified != c.functional || ev.Verified != c.functional {
			t.Errorf("%d nodes functional=%v: closed form %v (verified %v), events %v (verified %v)", c.nodes, c.functional, closed.Time, closed.Verified, ev.Time, ev.Verified)
		}
		for i := range closed.Finish {
			if closed.Finish[i] != ev.Finish[i] {
				t.Errorf("%d nodes functional=%v: node %d finishes at %v in closed form, %v as events", c.nodes, c.functional, i, closed.Finish[i], ev.Finish[i])
			}
		}
		if evClosed >= evEvents {
			t.Errorf("%d nodes: closed form %d events, event form %d: the checker did not turn the closed form off", c.nodes, evClosed, evEvents)
		}
	}
}
