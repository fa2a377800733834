package gpu

import (
	"fmt"
	"sort"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// invPoller is verbs.CQWait's poll loop as steps: an L1 invalidate (a
// sleep), then an atomic load of the slot, polls times; with mark, the
// invalidate's end is a mark where AtomicLoadAtMark allows it.
type invPoller struct {
	a     mem.Addr
	mark  bool
	m     sim.Mark
	pc, n int
	v     uint64
	log   *[]string
}

const invPolls, invTime = 12, 3 * sim.Nanosecond

func (p *invPoller) Step(wg *WG) bool {
	switch p.pc {
	case 0: // a poll: the invalidate
		if p.n == invPolls {
			return true
		}
		p.pc = 2
		if p.mark && wg.AtomicLoadAtMark(&p.m, invTime, p.a) {
			return false // (the load goes on at its sample point)
		}
		p.pc = 1
		wg.Sleep(invTime)
	case 1: // the invalidate's end: the load's issue
		p.pc = 2
		return p.Step(wg)
	case 2:
		if !wg.TryAtomicLoad(p.a, func() { p.v = wg.Mem().Load64(p.a) }) {
			return false
		}
		*p.log = append(*p.log, fmt.Sprintf("%v v=%d", wg.Now(), p.v))
		p.n++
		p.pc = 0
	}
	return false
}

// runInvPoll runs two invPollers (on one word when shared, else each on
// its own) on a dGPU; the words are written 1 at tw1 and 2 at tw2, each
// write scheduled at sched, or with sched < 0 inside the invalidate of a
// poll whose sample point is at the write (half an invalidate after its
// start). It returns what the run did, its events and every time a
// poller's step ran.
func runInvPoll(mark, shared bool, tw1, tw2, sched sim.Time) (string, uint64, []sim.Time) {
	e := sim.New(1)
	g := New(e, "node[0].gpu", testSpec("dgpu"), mem.New("node[0].mem", true), mem.NewServer(100e9))
	m := g.Mem()
	cq := m.AllocData(mem.GPU, 128, "cq")
	if sched < 0 {
		_, s := g.wordLoad(cq)
		sched = max(0, min(tw1, tw2)-s-invTime/2)
	}
	var log [2][]string
	var times []sim.Time
	k := Kernel{Name: "k", WGs: 2, WGSize: 64, Steps: func(w *WG) StepBody {
		p := &invPoller{a: cq, mark: mark, log: &log[w.ID]}
		if w.ID == 1 && !shared {
			p.a += 64
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
				m.Store64(cq, w.v)
				m.Store64(cq+64, w.v)
			})
		})
	}
	err := e.Run()
	return fmt.Sprintf("%v err=%v end=%v stats=%+v", log, err, e.Now(), g.Stats()), e.Events(), times
}

// An atomic poll load issued at the mark of an invalidate's end
// (AtomicLoadAtMark) reads and ends exactly as the one issued by the
// invalidate's event, whenever the word is written: at, just before and
// just after every instant a poller's steps run, each write ordered
// before and after the events scheduled at its time, and scheduled inside
// the invalidate of a poll whose sample point it ties with (before the
// event that issues the load would take its number: the load sees it),
// and on a grid between; with both pollers on one word or each on its own; and it
// saves one event per poll.
func TestAtomicLoadAtMarkMatchesEvents(t *testing.T) {
	for _, shared := range []bool{false, true} {
		_, _, keys := runInvPoll(false, shared, 1<<40, 1<<41, 0)
		var tws []sim.Time
		for _, k := range keys {
			if k < 1<<39 {
				tws = append(tws, k-1, k, k+1)
			}
		}
		for tw := sim.Time(0); tw < 4*sim.Time(sim.Microsecond); tw += 997 * sim.Time(sim.Picosecond) * 37 {
			tws = append(tws, tw)
		}
		sort.Slice(tws, func(i, j int) bool { return tws[i] < tws[j] })
		for _, tw := range tws {
			for _, sched := range []sim.Time{0, tw, -1} {
				tw1, tw2 := tw, tw+50*sim.Time(sim.Nanosecond)
				want, we, _ := runInvPoll(false, shared, tw1, tw2, sched)
				got, ge, _ := runInvPoll(true, shared, tw1, tw2, sched)
				if got != want || ge != we-2*invPolls {
					t.Fatalf("shared=%v, writes at %v and %v (scheduled at %v):\nmarks  %s (%d events)\nevents %s (%d events)",
						shared, tw1, tw2, sched, got, ge, want, we)
				}
			}
		}
	}
}
