package shmem

import (
	"sort"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A host helper's empty polls as marks. A GHN helper thread that polls
// its queues through its coherent cache (GHN_APU, GHN_DGPU_HOSTQ) with
// entries pending spins for the whole phase: per queue a poll that hits
// the unchanged slot word (cpu.cache_hit) and the poll's instructions,
// two events, until a work-group posts an entry or the round's end
// quiets. While no slot it polls is written, every such event does the
// same: the thread's own counts and the next sleep, of a duration known
// in advance, and nothing another agent reads. So the thread plans the
// stretch of polls up to the next round end that does something (a
// quiet, an idle sleep), or its core's slice end, and its process's
// wake-ups in it become a chain of marks (sim.SetMarkAfter): each takes
// the sequence number its event would have, where its event would have
// run, and the last defers the body's real wake-up (PushAtMark). A write
// to any of the polled slot lines (mem.WatchCall, inside the writing
// event) ends the chain there: the first event not yet passed runs after
// all, at its own key (sim.Proc.WakeAtMark), and reads what the write
// left, as it would have. The thread's counts catch up when its body
// runs again (ghostSettle), or when the report reads them first.
//
// Exact by construction: every remaining event runs at the key it has in
// the run with the events (the marks take the same numbers in the same
// order), and no event that stood in a mark could have seen the write
// (it orders before it). What the run counts differs only in the
// events: each mark is one fewer (Engine.Events), the virtual wake-up of
// a thread that read an unchanged line and went to sleep again.

// ghostMax bounds the marks of one stretch: a quiet block of 4 rounds of
// 12 queues is 95.
const ghostMax = 256

// ghost is a helper's stretch of empty polls that stands in marks.
type ghost struct {
	h      *hostPort
	m      *mem.Memory
	on     bool // a stretch is planned and its body has not run since
	woken  int  // the event the body resumes at (WakeAtMark), 1-based; 0: the stretch's last
	marks  []sim.Mark
	n      int      // events in the stretch (e_1 … e_n; e_n runs the body)
	t0     sim.Time // the stretch's start (the first poll's)
	qi0    int      // the queue of its first poll
	dHit   sim.Duration
	dInstr sim.Duration
	vals   []uint64   // per queue, the slot word every poll of the stretch reads
	lines  []mem.Addr // per queue, the slot line a WatchCall is set on (0: none)
	// valid: per queue, vals holds its slot's word, a hit of the
	// thread's cache, checked since the line was last written (the
	// line's call clears it)
	valid []bool
	calls []func() // per queue, its line's WatchCall
	skip  bool     // no stretch until the next round (the last plan found a slot that was not a plain hit)
	off   bool     // never (a poller across PCIe, a CP thread)
}

// ghostInit decides whether the thread's polls may stand in marks at all
// (a helper polling through its cache, no busy poller across PCIe) and
// sets the stretch up.
func (ps *pollSteps) ghostInit() {
	s := ps.s
	h, ok := s.port.(*hostPort)
	g := &ps.g
	if !ok || h.overPC || h.t.Proc.Polling() || ps.nPoll <= 0 || h.spec.CacheHit <= 0 {
		g.off = true
		return
	}
	g.h, g.m = h, h.m
	g.dHit, g.dInstr = h.spec.CacheHit, h.spec.Instr(ps.nPoll)
	if g.dInstr <= 0 {
		g.off = true
		return
	}
	g.vals = make([]uint64, len(s.queues))
	g.lines = make([]mem.Addr, len(s.queues))
	g.valid = make([]bool, len(s.queues))
	g.marks = make([]sim.Mark, ghostMax)
	for i := range s.queues {
		g.calls = append(g.calls, func() {
			g.valid[i] = false
			ps.ghostWake()
		})
	}
}

// ghostPlan is called where the body is about to begin the poll of
// s.queues[ps.qi]: it plans a stretch of empty polls from there and, if
// it has one, puts the process to sleep on its marks and reports true.
func (ps *pollSteps) ghostPlan(p *sim.Proc) bool {
	g := &ps.g
	s := ps.s
	if g.skip || s.stop || p.Engine().Tracer() != nil {
		return false
	}
	sliceEnd, ok := g.h.t.GhostSpan()
	if !ok {
		return false
	}
	// Every slot the stretch polls must read as a hit of a word that is
	// no posted entry (the thread's own cache state, unchanged). A slot
	// checked before whose line nobody wrote since (its call would have
	// said so) still is one; its seen word changes only with the line.
	for i, q := range s.queues {
		a := q.slot(q.rd)
		l := mem.Line(a)
		if g.valid[i] && g.lines[i] == l {
			continue
		}
		v := g.m.Load64(a)
		if old, seen := g.h.seen[a]; !seen || old != v || uint32(v) == statusPosted {
			g.skip = true
			return false
		}
		if g.lines[i] != l {
			if g.lines[i] != 0 {
				g.m.UnwatchCall(g.lines[i])
			}
			g.m.WatchCall(l, g.calls[i])
			g.lines[i] = l
		}
		g.vals[i], g.valid[i] = v, true
	}
	// The polls up to the first round end that quiets or sleeps, the
	// slice's end, or ghostMax events.
	now := p.Now()
	period := g.dHit + g.dInstr
	L := len(s.queues)
	rounds, found := s.clock.rounds, ps.found
	every := s.b.spec.QuietRounds
	polls := 0
	for qi := ps.qi; ; {
		end := now + sim.Time(polls+1)*period
		if end > sliceEnd || 2*(polls+1) > ghostMax+1 {
			break
		}
		polls++
		qi++
		if qi < L {
			continue
		}
		// The round's end after this poll (pollSteps' phEnd…phRound).
		rounds++
		block := rounds >= every
		if block {
			rounds = 0
		}
		if block && len(s.pending) > 0 || !found && len(s.pending) == 0 {
			break // a quiet or an idle sleep: the body's
		}
		qi, found = 0, false
	}
	if polls < 2 {
		return false
	}
	g.n, g.t0, g.qi0, g.woken, g.on = 2*polls, now, ps.qi, 0, true
	e := p.Engine()
	e.SetMark(&g.marks[0], now+g.dHit)
	t := now + g.dHit
	for i := 1; i < g.n-1; i++ {
		if i%2 == 1 {
			t += g.dInstr
		} else {
			t += g.dHit
		}
		e.SetMarkAfter(&g.marks[i], &g.marks[i-1], t)
	}
	g.h.t.GhostRun(0, g.dHit) // the first poll's run, for whoever looks at the core
	p.SleepAtMark(&g.marks[g.n-2], now+sim.Time(polls)*period)
	return true
}

// ghostWake is the WatchCall of every polled slot line: a write ends the
// stretch at the first event that orders after it.
func (ps *pollSteps) ghostWake() {
	g := &ps.g
	if !g.on || g.woken != 0 {
		return
	}
	ms := g.marks[:g.n-1]
	j := sort.Search(len(ms), func(i int) bool { return ms[i].Pending() })
	if j == len(ms) { // every mark passed: the body's wake-up is queued
		g.woken = g.n
		return
	}
	ps.s.port.proc().WakeAtMark(&ms[j])
	g.woken = j + 1
}

// ghostSettle does the bookkeeping of the stretch's events before the
// one the body resumes at, and leaves the thread in that event's run.
func (ps *pollSteps) ghostSettle() {
	g := &ps.g
	s, h := ps.s, g.h
	j := g.woken
	if j == 0 {
		j = g.n
	}
	g.on, g.woken = false, 0
	L := len(s.queues)
	full := (j - 1) / 2 // polls whose both events passed
	period := g.dHit + g.dInstr
	qi := g.qi0
	for range full {
		qi++
		if qi == L { // a round's end that neither quiets nor sleeps (ghostPlan)
			s.clock.endRound(s.b.spec.QuietRounds)
			qi, ps.found = 0, false
		}
	}
	k := uint64(full) + 1 // polls begun
	h.n.L1 += k
	s.polls += uint64(full)
	ps.qi = qi
	ps.start = g.t0 + sim.Time(full)*period
	q := s.queues[qi]
	h.pa, h.pv, h.pph = q.slot(q.rd), g.vals[qi], 0
	if j%2 == 1 { // the poll's hit ends at e_j
		n := uint64(full) * uint64(ps.nPoll)
		h.n.Instr += n
		h.t.GhostRun(n, g.dHit)
		ps.phase = phPoll
		return
	}
	n := uint64(full+1) * uint64(ps.nPoll) // its instructions end at e_j
	h.n.Instr += n
	h.instrN = ps.nPoll
	h.t.GhostRun(n, g.dInstr)
	ps.phase, ps.exit = phInstr, exitStop
}

// ghostUnwatch removes the stretch's calls from the slot lines.
func (ps *pollSteps) ghostUnwatch() {
	g := &ps.g
	for i, a := range g.lines {
		if a != 0 {
			g.m.UnwatchCall(a)
			g.lines[i], g.valid[i] = 0, false
		}
	}
}
