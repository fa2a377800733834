package cpu

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// spanLog records every trace span, in order.
type spanLog []string

func (l *spanLog) Span(track, name string, start, end sim.Time) {
	*l = append(*l, fmt.Sprintf("%s %s %d %d", track, name, start, end))
}

// teamRun is what a run of a scenario shows: when each master finished,
// the engine's event count and end, the CPU's statistics and the spans.
type teamRun struct {
	ends   []sim.Time
	events uint64
	now    sim.Time
	stats  Stats
	cores  []CoreStats
	spans  spanLog
}

// runTeams runs scenario on a fresh CPU with team threads as step
// processes or, with coroutines set, as coroutines.
func runTeams(t *testing.T, sp Spec, coroutines bool, scenario func(c *CPU, ends []sim.Time)) teamRun {
	t.Helper()
	e := sim.New(1)
	c := newTestCPU(e, sp)
	c.teamCoroutines = coroutines
	var r teamRun
	e.SetTracer(&r.spans)
	r.ends = make([]sim.Time, 4)
	scenario(c, r.ends)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	r.events, r.now, r.stats, r.cores = e.Events(), e.Now(), c.Stats(), c.CoreStats()
	return r
}

func TestTeamStepsMatchCoroutines(t *testing.T) {
	slices := spec()
	slices.TimeSlice = 3 * sim.Microsecond // slices shorter than a share: preemption mid-stream
	fourCores := slices
	fourCores.Cores = 4
	for _, c := range []struct {
		name     string
		spec     Spec
		scenario func(c *CPU, ends []sim.Time)
		switches uint64 // at least this many context switches (the scenario exercises the scheduler)
	}{
		{"8 threads on 8 cores, two regions", spec(), func(c *CPU, ends []sim.Time) {
			c.Spawn("app", func(th *Thread) { th.Compute(8<<20, 8); th.Compute(1<<20+3, 8); ends[0] = th.Now() })
		}, 0},
		{"flat model, share not a slice multiple", flatSpec(), func(c *CPU, ends []sim.Time) {
			c.Spawn("app", func(th *Thread) { th.Compute(3<<20+17, 6); ends[0] = th.Now() })
		}, 0},
		{"16 threads on 4 cores, 3us slices", fourCores, func(c *CPU, ends []sim.Time) {
			c.Spawn("app", func(th *Thread) { th.Compute(4<<20, 16); th.Instr(1000); th.Compute(2<<20, 16); ends[0] = th.Now() })
		}, 100},
		{"team beside a busy thread and a poller", slices, func(c *CPU, ends []sim.Time) {
			flag := c.Mem().AllocData(mem.Host, 8, "flag")
			c.SpawnOn(1, "busy", func(th *Thread) { th.Instr(instrFor(200 * sim.Microsecond)); ends[1] = th.Now() })
			c.SpawnOn(2, "poller", func(th *Thread) {
				th.WaitWord(flag, "flag", func(v uint64) bool { return v != 0 })
				ends[2] = th.Now()
			})
			c.SpawnOn(0, "app", func(th *Thread) {
				th.Compute(8<<20, 8)
				th.Store(flag, 1)
				th.Compute(4<<20, 8)
				ends[0] = th.Now()
			})
		}, 20},
		{"two masters share the team pool", fourCores, func(c *CPU, ends []sim.Time) {
			for i := range 2 {
				c.Spawn(fmt.Sprint("app", i), func(th *Thread) {
					th.Compute(2<<20, 3+i)
					th.Compute(1<<20, 5-i)
					ends[i] = th.Now()
				})
			}
		}, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := runTeams(t, c.spec, true, c.scenario)
			got := runTeams(t, c.spec, false, c.scenario)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("step processes differ from coroutines:\nsteps      ends %v events %d end %v stats %+v cores %+v\ncoroutines ends %v events %d end %v stats %+v cores %+v",
					got.ends, got.events, got.now, got.stats, got.cores, want.ends, want.events, want.now, want.stats, want.cores)
				for i := range min(len(got.spans), len(want.spans)) {
					if got.spans[i] != want.spans[i] {
						t.Errorf("first differing span %d: %s, want %s", i, got.spans[i], want.spans[i])
						break
					}
				}
			}
			var switches uint64
			for _, k := range got.cores {
				switches += k.Switches
			}
			if switches < c.switches {
				t.Errorf("%d context switches, want at least %d: the scenario no longer exercises the scheduler", switches, c.switches)
			}
			if got.stats.StreamBytes == 0 || len(got.spans) == 0 {
				t.Errorf("nothing streamed or traced: %+v, %d spans", got.stats, len(got.spans))
			}
		})
	}
}

// A region's team threads run in the step processes of the previous
// region's, not in new ones (SpawnStepsIn), and every region still runs.
func TestTeamProcsReused(t *testing.T) {
	e := sim.New(1)
	c := newTestCPU(e, spec())
	procs := func() map[*sim.Proc]bool {
		m := map[*sim.Proc]bool{}
		for _, w := range c.idleTeam {
			if w.Proc != &w.proc {
				t.Errorf("team thread %s runs in a process it does not hold", w.track)
			}
			m[w.Proc] = true
		}
		return m
	}
	var first, second map[*sim.Proc]bool
	c.Spawn("app", func(th *Thread) {
		th.Compute(1<<20, 4)
		first = procs()
		th.Compute(1<<20, 4)
		second = procs()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(first) != 3 || !reflect.DeepEqual(first, second) {
		t.Errorf("team processes %v, then %v: want the same three", first, second)
	}
	if got := c.Stats().StreamBytes; got != 2<<20 {
		t.Errorf("streamed %d bytes, want %d", got, 2<<20)
	}
}
