package gpu

import (
	"fmt"
	"sort"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// ucPoller is shmem's wait_until on an L2-uncacheable flag in dGPU mode,
// as steps: an acquiring poll (TryAcquireLoad64Until), and when the value
// is not 2, a check of memory and a wait for a write to the flag before
// the next poll. With store, it first stores to a cached word (a dirty L2
// line the acquire writes back).
type ucPoller struct {
	a, cached mem.Addr
	store     bool
	pc        int
	log       *[]string // this poller's own
}

func (p *ucPoller) Holds(v uint64) bool { return v == 2 }
func (p *ucPoller) What() string        { return "flag" }

func (p *ucPoller) Step(wg *WG) bool {
	switch p.pc {
	case 0:
		if p.store && !wg.TryStore64(p.cached, 9) {
			return false
		}
		p.pc = 1
	case 1:
		v, ok := wg.TryAcquireLoad64Until(p.a, p)
		if !ok {
			return false
		}
		if p.Holds(v) {
			*p.log = append(*p.log, fmt.Sprintf("wg%d %v v=%d", wg.ID, wg.Now(), v))
			return true
		}
		// A failing poll's value, not its end's time: nothing sees that
		// instant (its end is skipped) but the check below, which the
		// resumption does at its own time.
		*p.log = append(*p.log, fmt.Sprintf("wg%d failed v=%d", wg.ID, v))
		p.pc = 2
	case 2:
		m := wg.Mem()
		if !p.Holds(m.Load64(p.a)) {
			wg.Wait(m.Watch(p.a), "flag")
			return false
		}
		p.pc = 1
	}
	return false
}

// runUncachedPoll runs two pollers (the second on the first's flag when
// shared, else on its own; the second storing first when store) on a
// dGPU whose flags are L2-uncacheable; the flags are written 1 at tw1 and
// 2 at tw2, each write scheduled at sched (so that, at one picosecond,
// it orders after the events scheduled before sched). With keep, every
// acquire end, sample point and load end is an event. It returns what
// the run did (its polls' times and values, the statistics, the end) and
// its events, and every time a poller's step ran.
func runUncachedPoll(keep, shared, store bool, tw1, tw2, sched sim.Time) (string, uint64, []sim.Time) {
	e := sim.New(1)
	g := New(e, "node[0].gpu", testSpec("dgpu"), mem.New("node[0].mem", true), mem.NewServer(100e9))
	g.keepSamples, g.keepLoadEnds = keep, keep
	m := g.Mem()
	flags := m.AllocData(mem.GPU, 128, "flags")
	cached := m.AllocData(mem.GPU, 64, "cached")
	g.SetUncached(flags, 128)
	var log [2][]string
	var times []sim.Time
	k := Kernel{Name: "k", WGs: 2, WGSize: 64, Steps: func(w *WG) StepBody {
		p := &ucPoller{a: flags, cached: cached, log: &log[w.ID]}
		if w.ID == 1 {
			p.store = store
			if !shared {
				p.a += 64
			}
		}
		return stepTimes{p, &times}
	}}
	op, _ := g.DispatchOp(k)
	g.Submit(op)
	for _, w := range []struct {
		t sim.Time
		v uint64
	}{{tw1, 1}, {tw2, 2}} {
		e.At(min(sched, w.t), func() {
			e.At(w.t, func() {
				m.Store64(flags, w.v)
				m.Store64(flags+64, w.v)
			})
		})
	}
	err := e.Run()
	return fmt.Sprintf("%v err=%v end=%v stats=%+v", log, err, e.Now(), g.Stats()), e.Events(), times
}

// stepTimes records the times a step body runs.
type stepTimes struct {
	StepBody
	times *[]sim.Time
}

func (s stepTimes) Step(wg *WG) bool {
	*s.times = append(*s.times, wg.Now())
	return s.StepBody.Step(wg)
}

// A poll of an L2-uncacheable flag whose acquire's end issues its load at
// a mark, and whose failing load's end is a wait not before its key
// (TryAcquireLoad64Until), does exactly what the poll with every event
// does, whenever the flag is written: at, just before and just after
// every instant a poller's steps run (its keys), each write ordered
// before and after the events scheduled at its time, on a grid between;
// with the pollers on one flag (the second's watch then has a waiter: the
// event form) or each on its own, and with a dirty L2 line the acquire
// writes back; and it saves events.
func TestAcquireLoadUntilMatchesEvents(t *testing.T) {
	saved := 0
	for _, shared := range []bool{false, true} {
		for _, store := range []bool{false, true} {
			_, _, keys := runUncachedPoll(true, shared, store, 1<<40, 1<<41, 0)
			var tws []sim.Time
			for _, k := range keys {
				if k < 1<<39 { // (not the far writes' wake-ups)
					tws = append(tws, k-1, k, k+1)
				}
			}
			for tw := sim.Time(0); tw < 6*sim.Time(sim.Microsecond); tw += 997 * sim.Time(sim.Picosecond) * 37 {
				tws = append(tws, tw)
			}
			sort.Slice(tws, func(i, j int) bool { return tws[i] < tws[j] })
			for _, tw := range tws {
				for _, sched := range []sim.Time{0, tw} {
					for _, first := range []bool{false, true} {
						tw1, tw2 := tw, tw+700*sim.Time(sim.Nanosecond)
						if first { // the write of 2 at tw, none before
							tw1, tw2 = 1<<40, tw
						}
						want, we, _ := runUncachedPoll(true, shared, store, tw1, tw2, sched)
						got, ge, _ := runUncachedPoll(false, shared, store, tw1, tw2, sched)
						if got != want || ge > we {
							t.Fatalf("shared=%v store=%v, writes at %v and %v (scheduled at %v):\nmarks  %s (%d events)\nevents %s (%d events)",
								shared, store, tw1, tw2, sched, got, ge, want, we)
						}
						if ge < we {
							saved++
						}
					}
				}
			}
		}
	}
	if saved == 0 {
		t.Fatal("no run saved an event")
	}
}
