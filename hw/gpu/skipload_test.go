package gpu

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// runSkipKernel runs two work-groups (steps form) on an APU of one CU:
// work-group 0 polls flag 0 for 2 with acquires, work-group 1 polls flag 0
// too (shared, true) or flag 1, and, when store is not 0, first stores
// store to flag 0 at storeAt (into the CU's L1 copy that work-group 0's
// load may be reading). A callback writes 2 to both flags at tw,
// scheduled at sched. With keep, every poll's load end is scheduled; with
// keepSamples, every load's sample point is an event (sample.go). It
// returns what the run did (times, values, statistics, end time) without
// the event count, the events, and the keys of the load ends skipped.
func runSkipKernel(keep, shared bool, store uint64, storeAt, tw, sched sim.Time) (string, uint64, []sim.Time) {
	return runSkipKernelSamples(keep, false, 0, shared, store, storeAt, tw, sched)
}

// runSkipKernelSamples is runSkipKernel with a choice of sample events
// and, with own > 0, each work-group on a CU of its own, which with own 2
// resumes its polls without a wake-up event (WG.ResumesInPoll).
// With equal, the polls use TryPollEqual instead of TryPollUntil.
func runSkipKernelSamples(keep, keepSamples bool, own int, shared bool, store uint64, storeAt, tw, sched sim.Time, equal ...bool) (string, uint64, []sim.Time) {
	e := sim.New(1)
	spec := testSpec("apu")
	spec.CUs = 1
	if own > 0 {
		spec.CUs = 2
	}
	g := New(e, "node[0].gpu", spec, mem.New("node[0].mem", true), mem.NewServer(100e9))
	g.keepLoadEnds = keep
	g.keepSamples = keepSamples
	var skips []sim.Time
	g.skips = &skips
	m := g.Mem()
	flags := m.AllocData(mem.GPU, 128, "flags")
	var log []string
	k := Kernel{Name: "k", WGs: 2, WGSize: 64, Steps: func(w *WG) StepBody {
		if own == 2 {
			w.ResumesInPoll()
		}
		return &skipPoller{flags: flags, shared: shared, store: store, storeAt: storeAt, log: &log, equal: len(equal) > 0 && equal[0]}
	}}
	op, _ := g.DispatchOp(k)
	g.Submit(op)
	e.At(sched, func() {
		e.At(tw, func() {
			m.Store64(flags, 2)
			m.Store64(flags+64, 2)
		})
	})
	err := e.Run()
	return fmt.Sprintf("%v err=%v end=%v stats=%+v", log, err, e.Now(), g.Stats()), e.Events(), skips
}

type skipPoller struct {
	flags   mem.Addr
	shared  bool
	store   uint64
	storeAt sim.Time
	log     *[]string
	pc      int
	equal   bool // poll with TryPollEqual
}

func (s *skipPoller) Step(wg *WG) bool {
	a := s.flags
	if wg.ID == 1 && !s.shared {
		a += 64
	}
	switch s.pc {
	case 0:
		s.pc = 1
		if wg.ID == 1 && s.store != 0 {
			wg.Proc.SleepUntil(s.storeAt)
		}
	case 1:
		if wg.ID == 1 && s.store != 0 && !wg.TryStore64(s.flags, s.store) {
			return false
		}
		s.pc = 2
	case 2:
		var v uint64
		var ok bool
		if s.equal {
			v, ok = wg.TryPollEqual(a, true, "flag", 2)
		} else {
			v, ok = wg.TryPollUntil(a, true, "flag", func(v uint64) bool { return v == 2 })
		}
		if !ok {
			return false
		}
		*s.log = append(*s.log, fmt.Sprintf("wg%d %v v=%d", wg.ID, wg.Now(), v))
		return true
	}
	return false
}

// A poll whose load's end is skipped (skipLoadEnd) ends exactly as the one
// that schedules it, whenever the flag is written: before the load's
// read, during its latency, at its end (the write scheduled before and
// after the read), after it, never; alone on its line, sharing it with
// another poller, with a store into the line from another work-group;
// and the skip saves events.
func TestSkippedLoadEndMatchesScheduled(t *testing.T) {
	saved, lateSaved := 0, 0
	check := func(shared bool, store uint64, storeAt, tw, sched sim.Time) {
		t.Helper()
		want, we, _ := runSkipKernelSamples(true, true, 0, shared, store, storeAt, tw, sched)
		got, ge, _ := runSkipKernel(false, shared, store, storeAt, tw, sched)
		if got != want {
			t.Fatalf("shared=%v store %d at %v, write at %v (scheduled at %v):\nskipping  %s\nscheduled %s",
				shared, store, storeAt, tw, sched, got, want)
		}
		// Without sample events alone, and with them but skipping.
		for _, keep := range [][2]bool{{true, false}, {false, true}} {
			if got, _, _ := runSkipKernelSamples(keep[0], keep[1], 0, shared, store, storeAt, tw, sched); got != want {
				t.Fatalf("keep ends %v, keep samples %v; shared=%v store %d at %v, write at %v (scheduled at %v):\ngot  %s\nwant %s",
					keep[0], keep[1], shared, store, storeAt, tw, sched, got, want)
			}
		}
		// A CU per work-group: wake-ups without events against every event.
		ownWant, ownWE, _ := runSkipKernelSamples(true, true, 1, shared, store, storeAt, tw, sched)
		if got, ownGE, _ := runSkipKernelSamples(false, false, 2, shared, store, storeAt, tw, sched); got != ownWant || ownGE > ownWE {
			t.Fatalf("own CUs, shared=%v store %d at %v, write at %v (scheduled at %v):\nlate wake-ups %s (%d events)\nevery event   %s (%d events)",
				shared, store, storeAt, tw, sched, got, ownGE, ownWant, ownWE)
		} else if _, plainGE, _ := runSkipKernelSamples(false, false, 1, shared, store, storeAt, tw, sched); ownGE < plainGE {
			lateSaved++ // fewer than without late wake-ups
		}
		if ge > we {
			t.Fatalf("write at %v: %d events skipping, %d scheduled", tw, ge, we)
		}
		if ge < we {
			saved++
		}
	}
	// near returns the times around keys and the sample points before
	// them (each ±3 ps) and a coarse grid.
	spec := testSpec("apu")
	back := spec.MemLatency / 2
	// From a sample point back into its load's acquire (a load issued at
	// the acquire's end samples MissLatency − back later).
	inAcquire := spec.MissLatency() - back + spec.Cycles(spec.L1InvCycles)/2
	near := func(keys []sim.Time) []sim.Time {
		var ts []sim.Time
		for tw := sim.Time(0); tw < 4*sim.Microsecond; tw += 9973 {
			ts = append(ts, tw)
		}
		for _, k := range keys {
			for d := sim.Time(-3); d <= 3; d++ {
				ts = append(ts, k+d, k-back+d)
			}
		}
		return ts
	}
	never := sim.Second
	for _, shared := range []bool{false, true} {
		_, _, keys := runSkipKernel(false, shared, 0, 0, never, 0)
		for _, tw := range near(keys) {
			// Scheduled before the load's acquire, during it (a write at a
			// sample point then orders after the acquire's start and
			// before its end, where the load is issued) and just before.
			for _, sched := range []sim.Time{0, max(0, tw-inAcquire), max(0, tw-1)} {
				check(shared, 0, 0, tw, sched)
			}
		}
	}
	// A store into the line the load reads, through the shared L1.
	_, _, keys := runSkipKernel(false, false, 0, 0, never, 0)
	for _, v := range []uint64{1, 2} {
		for _, at := range near(keys) {
			check(false, v, at, never, 0)
			check(false, v, at, 3*sim.Microsecond, 0)
		}
	}
	if saved == 0 {
		t.Error("no load end was ever skipped")
	}
	if lateSaved == 0 {
		t.Error("no wake-up ever ran without its event")
	}
}

// TryPollEqual's polls are TryPollUntil's with the condition "equals":
// the same values at the same times, the same statistics and events,
// whenever the flag is written (before, around and after each load's
// keys), alone or shared, with every event or none at the sample points
// and wake-ups.
func TestPollEqualMatchesPollUntil(t *testing.T) {
	never := sim.Second
	for _, shared := range []bool{false, true} {
		_, _, keys := runSkipKernel(false, shared, 0, 0, never, 0)
		tws := []sim.Time{0, never}
		for _, k := range keys {
			tws = append(tws, k-1, k, k+1)
		}
		for tw := sim.Time(0); tw < 4*sim.Microsecond; tw += 49999 {
			tws = append(tws, tw)
		}
		for _, tw := range tws {
			for _, mode := range []struct {
				keep, keepSamples bool
				own               int
			}{{false, false, 0}, {true, true, 0}, {false, false, 2}, {false, false, 1}} {
				want, we, _ := runSkipKernelSamples(mode.keep, mode.keepSamples, mode.own, shared, 0, 0, tw, 0)
				got, ge, _ := runSkipKernelSamples(mode.keep, mode.keepSamples, mode.own, shared, 0, 0, tw, 0, true)
				if got != want || ge != we {
					t.Fatalf("shared=%v write at %v, mode %+v:\nequal %s (%d events)\nuntil %s (%d events)", shared, tw, mode, got, ge, want, we)
				}
			}
		}
	}
}
