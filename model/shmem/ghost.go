package shmem

import (
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
// in advance, and nothing another agent reads; so does every event of a
// quiet that finds no context done (quietsteps.go: the library's
// instructions, the context's free mutex taken and released, its CT
// copy read as an unchanged hit). So the thread plans the stretch of
// polls and such quiets up to the next round end that does something
// else (a quiet that may find a context done, an idle sleep), its core's
// slice end or ghostMax events, and its process's
// wake-ups in it become a chain of marks (sim.MarkChain, one engine entry
// whose key moves on at each mark): each takes the sequence number its
// event would have, where its event would have run, and the last defers
// the body's real wake-up. A write
// to any of the polled slot lines or the quieted contexts' CT lines
// (mem.WatchCall, inside the writing event) ends the chain there: the first event not yet passed runs after
// all, at its own key (sim.Proc.WakeAtChain), and reads what the write
// left, as it would have. The thread's counts catch up when its body
// runs again (ghostSettle), or when the report reads them first.
//
// Exact by construction: every remaining event runs at the key it has in
// the run with the events (the marks take the same numbers in the same
// order), and no event that stood in a mark could have seen the write
// (it orders before it). What the run counts differs only in the
// events: each mark is one fewer (Engine.Events), the virtual wake-up of
// a thread that read an unchanged line and went to sleep again. (The
// quiet's mutex word, taken and released in marks, is stored when the
// body catches up, only while it would still be held: no other agent
// reads it, the thread owns the context.)

// ghostMax bounds the marks of one stretch: a quiet block of 4 rounds of
// 12 queues and a quiet of two contexts is 106.
const ghostMax = 512

// gKind is what one run of a stretch is: a poll's hit or instructions, or
// one of a quiet's runs for a context (quietsteps.go's stages).
type gKind uint8

const (
	gHit gKind = iota
	gInstr
	gQInstr
	gQMutex
	gQRMW
	gQCT
	gQUnlock
)

// gRun is one run of core time of a stretch, ending at one of its events:
// its kind, the queue (a poll's) or the context's place in the quiet's
// order (a quiet's), its duration.
type gRun struct {
	k gKind
	i int32
	d sim.Duration
}

// ghost is a helper's stretch of empty polls that stands in marks.
type ghost struct {
	// (on, skip and off first: pollSteps.Step reads them at every event)
	on    bool // a stretch is planned and its body has not run since
	skip  bool // no stretch until the next round (the last plan found a slot that was not a plain hit)
	off   bool // never (a poller across PCIe, a CP thread)
	woken int  // the event the body resumes at (WakeAtMark), 1-based; 0: the stretch's last
	h     *hostPort
	m     *mem.Memory
	ch    sim.MarkChain  // the stretch's wake-ups but the last, one engine entry
	gaps  []sim.Duration // the chain's gaps (runs[1:n−1]'s durations)
	runs  []gRun         // the stretch's runs; the i-th ends at its event e_(i+1)
	t0    sim.Time       // the stretch's start
	// per queue: the slot word every poll of the stretch reads, the slot
	// line a WatchCall is set on (0: none), and whether the word was
	// checked (a hit of the thread's cache, no posted entry) since the
	// line was last written (the line's call clears it)
	vals  []uint64
	lines []mem.Addr
	valid []bool
	calls []func()
	// the quiet the stretch runs through: its contexts in order, entries
	// each, their CT copies' success words; mirrors: the contexts whose
	// CT line has a WatchCall
	qOrder  []int
	qN      []int
	qSucc   []uint64
	mirrors map[int]bool
	wake    func()
	dHit    sim.Duration
	dInstr  sim.Duration
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
	g.mirrors = map[int]bool{}
	g.wake = ps.ghostWake
	for i := range s.queues {
		g.calls = append(g.calls, func() {
			g.valid[i] = false
			ps.ghostWake()
		})
	}
}

// ghostQuiet reports whether a quiet of the pending entries now would find
// no context done and can stand in marks, with its contexts, entries and
// CT words in g.q*: no progress thread, the library's quiet and mutex
// instructions take time, each context's mutex is free and its CT copy
// reads as a hit that shows operations still in flight.
func (ps *pollSteps) ghostQuiet() bool {
	s, g := ps.s, &ps.g
	l := s.b.lib
	sw := &s.b.sw
	if s.progress != nil || sw.ShmemQuiet <= 0 || l.multiple && sw.Mutex <= 0 {
		return false
	}
	g.qOrder, g.qN = perQueue(g.qOrder, g.qN, s.pending)
	g.qSucc = g.qSucc[:0]
	for _, c := range g.qOrder {
		ctx := l.ctxs[c] // not l.ctx: a context is made where the library first asks for it (a quiet entry's may not exist yet)
		if ctx == nil || l.multiple && g.m.Load64(ctx.state) != 0 {
			return false
		}
		succ := g.m.Load64(ctx.mirror)
		if old, ok := g.h.seen.get(ctx.mirror); !ok || old != succ || succ+g.m.Load64(ctx.mirror+8) >= ctx.issued {
			return false
		}
		g.qSucc = append(g.qSucc, succ)
	}
	for _, c := range g.qOrder {
		if !g.mirrors[c] {
			g.m.WatchCall(l.ctx(c).mirror, g.wake)
			g.mirrors[c] = true
		}
	}
	return true
}

// ghostPlan is called where the body is about to begin the poll of
// s.queues[ps.qi]: it plans a stretch of empty polls (and quiets that find
// nothing done) from there and, if it has one, puts the process to sleep
// on its marks and reports true.
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
		if old, seen := g.h.seen.get(a); !seen || old != v || uint32(v) == statusPosted {
			g.skip = true
			return false
		}
		if g.lines[i] != l {
			// The new line's call first: the slot lines of a queue's
			// ring share one allocation's watch list, which emptied and
			// reallocated its block at every move the other way round.
			g.m.WatchCall(l, g.calls[i])
			if g.lines[i] != 0 {
				g.m.UnwatchCall(g.lines[i])
			}
			g.lines[i] = l
		}
		g.vals[i], g.valid[i] = v, true
	}
	// The runs up to the first round end that sleeps or quiets in a way
	// the marks cannot stand for, the slice's end, or ghostMax events.
	now := p.Now()
	L := len(s.queues)
	rounds, found := s.clock.rounds, ps.found
	every := s.b.spec.QuietRounds
	quiet := -1 // whether a quiet can stand in marks (−1: not asked yet)
	runs := g.runs[:0]
	t := now
	add := func(k gKind, i int, d sim.Duration) bool {
		if t+d > sliceEnd || len(runs) == ghostMax+1 {
			return false
		}
		t += d
		runs = append(runs, gRun{k: k, i: int32(i), d: d})
		return true
	}
	sw := &s.b.sw
	multiple := s.b.lib.multiple
plan:
	for qi := ps.qi; ; {
		mark := len(runs)
		if !add(gHit, qi, g.dHit) || !add(gInstr, qi, g.dInstr) {
			runs = runs[:mark]
			break
		}
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
		if !found && len(s.pending) == 0 {
			break // an idle sleep: the body's
		}
		if block && len(s.pending) > 0 {
			if quiet < 0 {
				quiet = 0
				if ps.ghostQuiet() {
					quiet = 1
				}
			}
			if quiet == 0 {
				break // the body quiets
			}
			mark := len(runs)
			for k := range g.qOrder {
				if !add(gQInstr, k, g.h.spec.Instr(sw.ShmemQuiet*g.qN[k])) ||
					multiple && (!add(gQMutex, k, g.h.spec.Instr(sw.Mutex)) || !add(gQRMW, k, g.dHit)) ||
					!add(gQCT, k, g.dHit) || multiple && !add(gQUnlock, k, g.dHit) {
					runs = runs[:mark] // the stretch ends where the quiet begins
					break plan
				}
			}
		}
		qi, found = 0, false
	}
	g.runs = runs
	if len(runs) < 3 {
		return false
	}
	n := len(runs)
	g.t0, g.woken, g.on = now, 0, true
	t0 := now + runs[0].d
	t = t0
	g.gaps = g.gaps[:0]
	for i := 1; i < n-1; i++ {
		t += runs[i].d
		g.gaps = append(g.gaps, runs[i].d)
	}
	g.h.t.GhostRun(0, runs[0].d) // the first poll's run, for whoever looks at the core
	p.SleepOnChain(&g.ch, t0, g.gaps, t+runs[n-1].d)
	return true
}

// ghostWake is the WatchCall of every polled slot line and quieted CT
// line: a write ends the stretch at the first event that orders after it.
func (ps *pollSteps) ghostWake() {
	g := &ps.g
	if !g.on || g.woken != 0 {
		return
	}
	if !g.ch.Pending() { // every mark passed: the body's wake-up is queued
		g.woken = len(g.runs)
		return
	}
	j := ps.s.port.proc().WakeAtChain(&g.ch)
	g.woken = j + 1
}

// ghostSettle does what the stretch's events before the one the body
// resumes at did (each run begun, each run ended but the last), and
// leaves the thread in that event's run.
func (ps *pollSteps) ghostSettle() {
	g := &ps.g
	s, h := ps.s, g.h
	l := s.b.lib
	sw := &s.b.sw
	j := g.woken
	if j == 0 {
		j = len(g.runs)
	}
	g.on, g.woken = false, 0
	L := len(s.queues)
	t := g.t0
	var instr uint64
	count := func(n int) {
		h.n.Instr += uint64(n)
		instr += uint64(n)
	}
	for m, r := range g.runs[:j] {
		// The run begins.
		switch r.k {
		case gHit:
			q := s.queues[r.i]
			h.n.L1++
			ps.qi, ps.start = int(r.i), t
			h.pa, h.pv, h.pph = q.slot(q.rd), g.vals[r.i], 0
			ps.phase = phPoll
		case gInstr:
			count(ps.nPoll)
			h.instrN = ps.nPoll
			ps.phase, ps.exit = phInstr, exitStop
		case gQInstr:
			qt := &ps.qt
			if r.i == 0 { // the quiet begins (quietBegin)
				qt.order = append(qt.order[:0], g.qOrder...)
				qt.n = append(qt.n[:0], g.qN...)
				qt.done = append(qt.done[:0], make([]bool, len(g.qOrder))...)
				qt.failed = append(qt.failed[:0], make([]bool, len(g.qOrder))...)
				qt.any, qt.start = false, t
			}
			qt.i, qt.st = int(r.i), qsInstr
			n := sw.ShmemQuiet * g.qN[r.i]
			count(n)
			h.instrN = n
			ps.phase = phQuiet
		case gQMutex:
			count(sw.Mutex)
			h.instrN = sw.Mutex
			ps.qt.st = qsMutex
		case gQRMW:
			h.n.L1++
			h.op, h.oa, h.ov = hopRMW, l.ctx(g.qOrder[r.i]).state, 1
			ps.qt.st = qsRMW
		case gQCT:
			h.n.L1++
			ps.qt.succ, ps.qt.st = g.qSucc[r.i], qsCT
		case gQUnlock:
			h.n.L1++
			h.op, h.oa, h.ov = hopLocal, l.ctx(g.qOrder[r.i]).state, 0
			ps.qt.st = qsUnlock
		}
		t += r.d
		if m == j-1 {
			break // the body ends this run
		}
		// The run ends, at a mark.
		switch r.k {
		case gInstr:
			s.polls++
			if int(r.i) == L-1 { // the round ends
				s.clock.endRound(s.b.spec.QuietRounds)
				if m+1 < len(g.runs) && g.runs[m+1].k == gQInstr {
					continue // its quiet follows
				}
				ps.found = false
			}
		case gQMutex:
			l.locks++
		case gQRMW:
			h.m.Store64(h.oa, 1) // the mutex held (the unlock's end stores 0 again)
			h.op = hopNone
		case gQUnlock:
			h.m.Store64(h.oa, 0)
			h.seen.put(h.oa, 0)
			h.op = hopNone
			if int(r.i) == len(g.qOrder)-1 { // the quiet ends: the round's checks, the next round
				ps.found = false
			}
		case gQCT:
			if !l.multiple && int(r.i) == len(g.qOrder)-1 {
				ps.found = false
			}
		}
	}
	h.t.GhostRun(instr, g.runs[j-1].d)
}

// ghostUnwatch removes the stretch's calls from the slot and CT lines.
func (ps *pollSteps) ghostUnwatch() {
	g := &ps.g
	for i, a := range g.lines {
		if a != 0 {
			g.m.UnwatchCall(a)
			g.lines[i], g.valid[i] = 0, false
		}
	}
	for c := range g.mirrors {
		g.m.UnwatchCall(ps.s.b.lib.ctx(c).mirror)
		delete(g.mirrors, c)
	}
}
