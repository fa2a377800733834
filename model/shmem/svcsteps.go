package shmem

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The service loop's polls as steps. A service thread spends most of its
// life polling: per queue a poll of the slot's status word and the poll's
// instructions, two waits, each two coroutine switches in the blocking
// loop (run). With a port that has step forms of both (stepPort), the
// thread's coroutine lends its process to pollSteps (sim.Proc.RunSteps)
// for the stretch of rounds up to the next poll that finds a posted entry
// or the next round end that waits (a quiet or an idle sleep); those, and
// the entry's dequeue and library call, run in the coroutine as before.
// The events, their times and their order are run's: the steps do what
// run does between those points, one wait per call.

// stepPort is a consumer whose poll and instructions have step forms: a
// begin call starts the operation, the try call advances it, true once it
// is over (no wait pending), false after it waited.
type stepPort interface {
	beginPoll(a mem.Addr)
	tryPoll() (v uint64, done bool)
	beginInstr(n int)
	tryInstr() bool
}

// pollPhase is where pollSteps stands in a round.
type pollPhase uint8

const (
	phRound     pollPhase = iota // a round begins (or the loop ends)
	phQueue                      // poll the next queue (or end the round)
	phPoll                       // the poll of s.queues[qi] is in progress
	phInstr                      // the poll's instructions are in progress
	phDequeue                    // a dequeue from s.queues[qi] is in progress (deq)
	phEnd                        // the round's end
	phEndIdle                    // the round's end after its quiet
	phEndChecks                  // the round's end after its idle sleep
	phSleep                      // an idle sleep as steps (stepSleeper) is in progress
	phQuiet                      // a quiet as steps (quietsteps.go) is in progress
)

// pollExit is why pollSteps handed the process back to the coroutine.
type pollExit uint8

const (
	exitStop    pollExit = iota // the thread stops (or the run failed)
	exitFound                   // the poll of s.queues[qi] saw a posted status
	exitQuiet                   // the round's end quiets the pending entries
	exitSleep                   // the round's end sleeps through an idle stretch
	exitQuieted                 // a stepped quiet found contexts done: the coroutine completes their entries
)

// pollSteps is the service loop between the coroutine's parts (run's
// steps 1 and 5 up to a dequeue, a quiet or an idle sleep).
type pollSteps struct {
	// The fields each of its events reads come first, with the ghost's
	// flags (its first fields), within 64 bytes: the struct is cold when a
	// helper's event runs, and spread over it they were three misses.
	s     *service
	sp    stepPort
	phase pollPhase
	exit  pollExit
	// the relayed wake-ups planned at the last poll's read (relayPoll;
	// 0: none; 1: the load's end; 2: also the poll's end)
	rel   uint8
	found bool
	qi    int      // the queue being polled
	start sim.Time // the poll's start (its span)
	// the poll's instructions (s.b.sw.ConsumerPoll)
	nPoll int
	g     ghost         // a host helper's empty polls as marks (ghost.go)
	deq   *dequeueSteps // the dequeue as steps (nil: the coroutine's)
	// the idle sleep as steps (nil: the coroutine's), its start, and
	// the condition that ends it (service.posted, made once)
	sl      stepSleeper
	slStart sim.Time
	posted  func() bool
	// Relayed empty polls (relayPoll): the CP port whose polls may be
	// relayed (nil: none) and the times the wake-ups in rel come at.
	rcp   *cpPort
	relAt [2]sim.Time
	// once a relay was possible, the poll's instructions' time and the
	// acquire marker's
	dInstr sim.Duration
	dAcq   sim.Duration
	relEnd bool       // the relayed poll's end also ends the round (RelayOK)
	qt     quietSteps // its quiet as steps (quietsteps.go)
}

// stepSleeper is a consumer whose idle sleep (idleWait) has a step form:
// beginIdleWait starts it, tryOp advances it.
type stepSleeper interface {
	beginIdleWait(what string, cond func() bool)
	tryIdleWait() bool
}

func (h *hostPort) beginIdleWait(what string, cond func() bool) {
	h.t.BeginWaitUntil(&h.wake, what, cond)
}

func (h *hostPort) tryIdleWait() bool { return h.t.Try() }

// Step implements sim.Stepper.
func (ps *pollSteps) Step(p *sim.Proc) bool {
	s := ps.s
	if ps.rel != 0 {
		ps.settle(p)
	}
	if ps.g.on {
		ps.ghostSettle()
	}
	for {
		switch ps.phase {
		case phRound:
			if s.stop {
				ps.exit = exitStop
				return true
			}
			p.PollStart()
			ps.qi, ps.found = 0, false
			ps.g.skip = false
			ps.phase = phQueue
		case phQueue:
			if ps.qi == len(s.queues) {
				ps.phase = phEnd
				continue
			}
			if !ps.g.off && ps.ghostPlan(p) {
				return false // asleep on the stretch's marks (ghost.go)
			}
			q := s.queues[ps.qi]
			ps.start = s.now()
			ps.sp.beginPoll(q.slot(q.rd))
			ps.phase = phPoll
		case phPoll:
			st, ok := ps.sp.tryPoll()
			if !ok {
				if ps.rcp != nil {
					ps.relayPoll(p)
				}
				return false
			}
			ps.phase = phInstr
			if uint32(st) == statusPosted {
				// After the poll's instructions, the coroutine dequeues.
				ps.exit = exitFound
			} else {
				ps.exit = exitStop
			}
			ps.sp.beginInstr(ps.nPoll)
		case phInstr:
			if !ps.sp.tryInstr() {
				return false
			}
			s.polls++
			s.span("poll", ps.start)
			if ps.exit == exitFound {
				if ps.deq == nil {
					return true // the coroutine dequeues from s.queues[qi], then resumes at phQueue
				}
				ps.deq.begin(s.queues[ps.qi])
				ps.phase = phDequeue
				continue
			}
			ps.qi++
			ps.phase = phQueue
		case phDequeue:
			if !ps.deq.step() {
				if p.Waited() {
					return false
				}
				continue
			}
			if ps.deq.served {
				ps.found = true
			}
			ps.qi++
			ps.phase = phQueue
		case phEnd:
			if s.clock.endRound(s.b.spec.QuietRounds) && len(s.pending) > 0 {
				if !ps.g.off && s.progress == nil { // as steps, so that marks may run through it
					ps.quietBegin()
					ps.phase = phQuiet
					continue
				}
				ps.exit, ps.phase = exitQuiet, phEndIdle
				return true
			}
			ps.phase = phEndIdle
		case phQuiet:
			if !ps.quietStep() {
				if p.Waited() {
					return false
				}
				continue
			}
			ps.phase = phEndIdle
			if ps.qt.any {
				ps.exit = exitQuieted
				return true
			}
			s.span("quiet", ps.qt.start)
		case phEndIdle:
			if !ps.found && len(s.pending) == 0 && s.port.idle() {
				if ps.sl != nil { // service.sleep as steps
					ps.slStart = s.now()
					ps.sl.beginIdleWait("a posted entry", ps.posted)
					ps.phase = phSleep
					continue
				}
				ps.exit, ps.phase = exitSleep, phEndChecks
				return true
			}
			ps.phase = phEndChecks
		case phSleep:
			if !ps.sl.tryIdleWait() {
				if p.Waited() {
					return false
				}
				continue
			}
			s.slept(ps.slStart, s.b.sw.ConsumerPoll)
			ps.phase = phEndChecks
		case phEndChecks:
			if !s.roundChecks(ps.found) {
				ps.exit = exitStop
				return true
			}
			ps.phase = phRound
		}
	}
}

// Relayed empty polls. A CP thread's poll of an empty slot is three
// events: the acquire marker's L1 invalidation ends and the load reads
// the line at the L2, the load's latency ends (the line fills the L1),
// the poll's instructions end (and the next poll's acquire marker
// invalidates the L1). Once the read has found the slot empty, the next
// two do only the thread's own bookkeeping and sleep for durations known
// then (its core is its own, nothing it reads in them can change: its
// queues' read indices are its own), so the process relays them
// (sim.Proc.ThenSleep): the same events at the same keys, and the thread
// catches up when its body runs again (settle), or when the report reads
// it first (service.settle).

// relayPoll plans the relayed wake-ups after the poll of s.queues[qi] has
// read its line, if the line shows no posted entry.
func (ps *pollSteps) relayPoll(p *sim.Proc) {
	s, c := ps.s, ps.rcp
	if c.acq || p.Engine().Tracer() != nil {
		return
	}
	v, end, ok := c.t.PendingLoad()
	if !ok || uint32(v) == statusPosted {
		return
	}
	if ps.dInstr == 0 { // the first relay: can the thread's polls be relayed at all?
		if ps.nPoll <= 0 || !c.t.Relayable() || c.t.InstrTime(ps.nPoll) <= 0 {
			ps.rcp = nil
			return
		}
		ps.dInstr, ps.dAcq = c.t.InstrTime(ps.nPoll), c.t.AcquireTime()
	}
	p.ThenSleep(ps.dInstr)
	ps.rel, ps.relAt[0], ps.relEnd = 1, end, false
	switch {
	case ps.qi+1 < len(s.queues): // the next poll in this round: its acquire
		p.ThenSleep(ps.dAcq)
		ps.rel, ps.relAt[1] = 2, end+ps.dInstr
	case !(s.clock.rounds+1 >= s.b.spec.QuietRounds && len(s.pending) > 0):
		// The round ends without a quiet (the clock and the pending
		// entries are the thread's own): the round's checks and the
		// next round's start at that wake-up (RelayOK), then the first
		// queue's acquire.
		p.ThenSleepIf(ps.dAcq, ps)
		ps.rel, ps.relAt[1], ps.relEnd = 2, end+ps.dInstr, true
	}
}

// RelayOK implements sim.RelayCheck for the wake-up that ends a relayed
// round: what of the round's end and the next round's start reads the
// engine or the backend (roundChecks, the stop flag, PollStart) runs
// here, at its time; it refuses (the body runs) when the thread stops or
// the deadlock check would look at the round.
func (ps *pollSteps) RelayOK(p *sim.Proc) bool {
	s := ps.s
	if s.stop {
		return false
	}
	if !ps.found && len(s.pending) == 0 { // roundChecks: stale() is nil with the acquire marker; a CP core is never contended
		if !p.PollOthersPending() {
			return false
		}
	} else {
		p.PollBusy()
	}
	p.PollStart()
	return true
}

// settle does what the relayed wake-ups that have run did: all of them
// when the body runs again, those so far when the report reads the
// thread first (the others then run the body: CancelThen).
func (ps *pollSteps) settle(p *sim.Proc) {
	s, c := ps.s, ps.rcp
	ran := int(ps.rel) - p.ThenLeft()
	p.CancelThen()
	ps.rel = 0
	if ran == 0 {
		return
	}
	// The load's end: the word loaded (into the L1 unless the next
	// acquire drops it), the poll's instructions begun.
	c.t.FinishLoadRelayed(ran == 1)
	ps.phase, ps.exit = phInstr, exitStop
	c.t.BeginInstrRelayed(ps.nPoll, ps.dInstr)
	if ran == 1 {
		return
	}
	// The poll's end: counted, and the next queue's poll begun (in the
	// next round: its checks and start ran in the wake-up, RelayOK).
	if !c.t.Try() {
		panic("shmem: a relayed poll's instructions did not end")
	}
	s.polls++
	ps.qi++
	if ps.relEnd {
		if s.clock.endRound(s.b.spec.QuietRounds) && len(s.pending) > 0 {
			panic("shmem: a relayed round ended in a quiet")
		}
		ps.qi, ps.found = 0, false
	}
	q := s.queues[ps.qi]
	ps.start = ps.relAt[1]
	c.pa = q.slot(q.rd)
	c.t.BeginAcquireRelayed(ps.dAcq)
	c.acq = true
	ps.phase = phPoll
}

// runSteps is run with its polls as steps (see pollSteps).
func (s *service) runSteps(sp stepPort) {
	p := s.port.proc()
	ps := &pollSteps{s: s, sp: sp, nPoll: s.b.sw.ConsumerPoll}
	s.steps = ps
	if c, ok := sp.(*cpPort); ok && c.acquire {
		ps.rcp = c
	}
	if h, ok := s.port.(stepDequeuer); ok && s.progress == nil {
		ps.deq = &dequeueSteps{s: s, h: h}
	}
	if sl, ok := s.port.(stepSleeper); ok {
		ps.sl, ps.posted = sl, s.posted
	}
	ps.ghostInit()
	for {
		p.RunSteps(ps)
		switch ps.exit {
		case exitStop:
			ps.ghostUnwatch()
			return
		case exitFound:
			q := s.queues[ps.qi]
			if s.dequeue(q) {
				ps.found = true
			}
			ps.qi++
			ps.phase = phQueue
		case exitQuiet:
			s.quietPending()
		case exitQuieted:
			done, failed := ps.quietDone()
			s.completeQuieted(done, failed, ps.qt.start)
			s.span("quiet", ps.qt.start)
		case exitSleep:
			s.sleep(s.b.sw.ConsumerPoll)
		}
	}
}

// Step forms of the ports' polls.

func (h *hostPort) beginPoll(a mem.Addr) {
	h.pa, h.pph = a, 0
	if !h.overPC {
		h.n.L1++
		v := h.m.Load64(a)
		h.pv = v
		if old, ok := h.seen.get(a); ok && old == v {
			h.t.BeginSleep(h.spec.CacheHit)
			return
		}
		h.n.L2++
		h.n.DRAM++
		h.t.BeginSleep(h.t.CPU().WordLatency(a)) // GPU memory beyond NVLink-C2C: a round trip over it
		h.seen.put(a, v)
		return
	}
	// As poll: the word as GPU memory held it when the read request
	// arrived, the thread stalled throughout.
	h.n.PCIe++
	at, done := h.link.ReadSampled(pcie.Down, h.t.Now(), 8, false)
	h.pdone = done
	h.t.BeginSleep(max(0, at-h.t.Now()))
}

func (h *hostPort) tryPoll() (uint64, bool) {
	if !h.t.Try() {
		return 0, false
	}
	if !h.overPC {
		return h.pv, true
	}
	if h.pph == 0 {
		h.pph = 1
		h.pv = h.m.Load64(h.pa)
		h.t.BeginSleep(max(0, h.pdone-h.t.Now()))
		if !h.t.Try() {
			return 0, false
		}
	}
	return h.pv, true
}

func (h *hostPort) beginInstr(n int) {
	h.instrN = n
	if n <= 0 {
		return
	}
	h.n.Instr += uint64(n)
	h.t.BeginInstr(n)
}

func (h *hostPort) tryInstr() bool { return h.instrN <= 0 || h.t.Try() }

func (c *cpPort) beginPoll(a mem.Addr) {
	c.pa = a
	if c.acquire {
		c.t.BeginAcquire()
		c.acq = true
		return
	}
	c.t.BeginLoad64(a)
}

func (c *cpPort) tryPoll() (uint64, bool) {
	if !c.t.Try() {
		return 0, false
	}
	if c.acq {
		c.acq = false
		c.t.BeginLoad64(c.pa)
		if !c.t.Try() {
			return 0, false
		}
	}
	return c.t.Loaded(), true
}

func (c *cpPort) beginInstr(n int) { c.t.BeginInstr(n) }
func (c *cpPort) tryInstr() bool   { return c.t.Try() }

// A service thread's dequeue as steps: reading the entry, the library
// call (its instructions, the context's mutex, bounce words, the issue
// count, the system release, the doorbell), the completion word and the
// read index, a dozen waits of the thread's core per entry. Host helpers
// and CP threads (hw/cp's step forms of its loads, its stores through the
// store buffer, its RMWs on locked L2 lines and its release), not with
// IKN's progress thread (its hand-off is coroutine code).

// stepDequeuer is a consumer whose dequeue's accesses have step forms:
// begin* starts one (a line read, a store to the library's memory, to a
// queue word, to a word in GPU memory, a test-and-set, the system
// release) and tryOp advances it, true once it is over (the line in
// lineWords, the old value in rmwOld), false after it waited.
type stepDequeuer interface {
	stepPort
	proc() *sim.Proc
	addPCIe()
	beginLine(a mem.Addr)
	beginLocal(a mem.Addr, v uint64)
	beginStore(a mem.Addr, v uint64)
	beginRemote(a mem.Addr, v uint64)
	beginRMW(a mem.Addr, v uint64)
	// beginRelease starts the system release before the doorbell and
	// reports whether there is one (a host port needs none).
	beginRelease() bool
	tryOp() bool
	lineWords() [8]uint64
	rmwOld() uint64
}

func (h *hostPort) beginRelease() bool   { return false }
func (h *hostPort) lineWords() [8]uint64 { return h.words }
func (h *hostPort) rmwOld() uint64       { return h.old }

// hostOp is a hostPort operation begun as steps.
type hostOp uint8

const (
	hopNone   hostOp = iota
	hopLine          // line: the entry's words, read at the end
	hopLocal         // local: the store lands at the end of the access
	hopRemote        // remote: a posted write issued at the start
	hopRMW           // rmw: the read and write at the end of the access
)

func (h *hostPort) beginLine(a mem.Addr) {
	h.op, h.oa = hopLine, a
	if h.overPC {
		h.loads = entryLoads(entryOp(h.m, a))
		h.nextLoad()
		return
	}
	h.n.L1++
	h.t.BeginSleep(h.spec.CacheHit) // the poll brought the line in
}

// nextLoad issues one uncached field load of a line read across PCIe
// (entryLoads): the thread stalls for its round trip.
func (h *hostPort) nextLoad() {
	h.loads--
	h.n.PCIe++
	h.t.BeginSleep(max(0, h.link.Read(pcie.Down, h.t.Now(), 8, false)-h.t.Now()))
}

func (h *hostPort) beginLocal(a mem.Addr, v uint64) {
	h.op, h.oa, h.ov = hopLocal, a, v
	h.n.L1++
	h.t.BeginSleep(h.spec.CacheHit)
}

func (h *hostPort) beginRemote(a mem.Addr, v uint64) {
	h.op = hopRemote
	h.n.PCIe++
	free, vis := h.link.PostedWrite(pcie.Down, h.t.Now(), 8)
	m := h.m
	h.t.Engine().At(vis, func() { m.Store64(a, v) })
	h.t.BeginSleep(max(0, free-h.t.Now()))
}

func (h *hostPort) beginStore(a mem.Addr, v uint64) {
	if !h.overPC {
		h.beginLocal(a, v)
		return
	}
	h.beginRemote(a, v)
}

func (h *hostPort) beginRMW(a mem.Addr, v uint64) {
	h.op, h.oa, h.ov = hopRMW, a, v
	h.n.L1++
	h.t.BeginSleep(h.spec.CacheHit)
}

// tryOp advances the operation begun: true once it is over (its effect
// made, a line in h.words, an RMW's old value in h.old).
func (h *hostPort) tryOp() bool {
	if !h.t.Try() {
		return false
	}
	if h.op == hopLine && h.loads > 0 {
		h.nextLoad() // the next uncached field load, after the previous one
		return false
	}
	switch h.op {
	case hopLine:
		var b [entrySize]byte
		h.m.Read(h.oa, b[:])
		for i := range h.words {
			h.words[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	case hopLocal:
		h.m.Store64(h.oa, h.ov)
		h.seen.put(h.oa, h.ov)
	case hopRMW:
		h.old = h.m.Load64(h.oa)
		h.m.Store64(h.oa, h.ov)
	}
	h.op = hopNone
	return true
}

// dqPC is where a stepped dequeue stands.
type dqPC uint8

const (
	dqLine     dqPC = iota // read the entry
	dqEntry                // decode it
	dqQuiet                // fence/quiet: the library's instructions
	dqOp                   // the library call's instructions
	dqLock                 // the mutex's instructions
	dqLockRMW              // its test-and-set
	dqLockSpin             // a failed test-and-set's spin
	dqWord                 // a bounce word written
	dqPost                 // the Portals post's instructions
	dqIssued               // the issue count written
	dqRelease              // the system release before the doorbell
	dqDoorbell             // the doorbell
	dqUnlock               // the mutex released
	dqComplete             // the completion word
	dqStatus               // the GPU-memory status flag
	dqReadIdx              // the read index
	dqDone
)

// dequeueSteps is service.dequeue (and lib.issue) as steps: the same
// waits in the same order.
type dequeueSteps struct {
	s      *service
	h      stepDequeuer
	q      *queue
	pc     dqPC
	e      entry
	found  sim.Time
	start  sim.Time
	post   sim.Time
	ctx    *lctx
	cmd    nic.Command
	served bool
}

// begin starts the dequeue of q's next entry.
func (d *dequeueSteps) begin(q *queue) {
	*d = dequeueSteps{s: d.s, h: d.h, q: q}
	d.found = d.s.now()
	d.h.beginLine(q.slot(q.rd))
	d.pc = dqEntry
}

// step advances the dequeue by one operation; true once it is over (no
// wait pending), with d.served set when it served an entry.
func (d *dequeueSteps) step() bool {
	s, h, q := d.s, d.h, d.q
	l := s.b.lib
	sw := &s.b.sw // (l.b: not a copy of the spec, three cache lines at every step)
	switch d.pc {
	case dqEntry:
		if !h.tryOp() {
			return false
		}
		e := decode(h.lineWords())
		if e.status != statusPosted || e.seq != q.rd {
			return true // an entry of an earlier lap, left POSTED while pending
		}
		d.e = e
		if e.blocking() {
			q.stamp(e.seq, PhaseDequeue, d.found)
		}
		s.span("dequeue", d.found)
		d.start = s.now()
		if e.op == OpFence || e.op == OpQuiet {
			h.beginInstr(sw.ShmemQuiet)
			d.pc = dqQuiet
			return false
		}
		if e.blocking() {
			q.stamp(e.seq, PhaseLibrary, d.start)
		}
		h.beginInstr(sw.ShmemOp)
		d.pc = dqOp
	case dqQuiet:
		if !h.tryInstr() {
			return false
		}
		s.span("library call", d.start)
		if d.e.blocking() {
			q.stamp(d.e.seq, PhaseLibrary, d.start)
			q.stamp(d.e.seq, PhasePortals, s.now())
			q.stamp(d.e.seq, PhaseNetwork, s.now())
		}
		d.completeBegin()
	case dqOp:
		if !h.tryInstr() {
			return false
		}
		s.span("library call", d.start)
		d.post = s.now()
		if d.e.blocking() {
			q.stamp(d.e.seq, PhasePortals, d.post)
		}
		d.ctx = l.ctx(q.idx)
		d.cmd = l.command(q, d.e, d.ctx)
		if l.multiple {
			h.beginInstr(sw.Mutex)
			l.locks++
			d.pc = dqLock
			return false
		}
		d.wordBegin()
	case dqLock:
		if !h.tryInstr() {
			return false
		}
		h.beginRMW(d.ctx.state, 1)
		d.pc = dqLockRMW
	case dqLockRMW:
		if !h.tryOp() {
			return false
		}
		if h.rmwOld() != 0 {
			l.spins++
			h.beginInstr(sw.ConsumerPoll)
			d.pc = dqLockSpin
			return false
		}
		d.wordBegin()
	case dqLockSpin:
		if !h.tryInstr() {
			return false
		}
		h.beginRMW(d.ctx.state, 1)
		d.pc = dqLockRMW
	case dqWord:
		if !h.tryOp() {
			return false
		}
		h.beginInstr(sw.PortalsPost)
		d.pc = dqPost
	case dqPost:
		if !h.tryInstr() {
			return false
		}
		d.ctx.issued++
		h.beginLocal(d.ctx.state+8, d.ctx.issued)
		d.pc = dqIssued
	case dqIssued:
		if !h.tryOp() {
			return false
		}
		if h.beginRelease() { // the command's source data visible to the NIC
			d.pc = dqRelease
			return false
		}
		d.doorbell()
	case dqRelease:
		if !h.tryOp() {
			return false
		}
		d.doorbell()
	case dqDoorbell:
		if l.multiple {
			h.beginLocal(d.ctx.state, 0)
			d.pc = dqUnlock
			return false
		}
		d.issued()
	case dqUnlock:
		if !h.tryOp() {
			return false
		}
		d.issued()
	case dqComplete:
		if !h.tryOp() {
			return false
		}
		if q.status != 0 {
			h.beginRemote(q.stat(d.e.seq), uint64(uint32(word0(d.e, statusComplete))))
			d.pc = dqStatus
			return false
		}
		d.readIdx()
	case dqStatus:
		if !h.tryOp() {
			return false
		}
		d.readIdx()
	case dqReadIdx:
		if !h.tryOp() {
			return false
		}
		d.served = true
		d.pc = dqDone
		return true
	case dqDone:
		return true
	}
	return false
}

// doorbell rings the NIC's doorbell with the entry's command.
func (d *dequeueSteps) doorbell() {
	d.h.addPCIe()
	d.pc = dqDoorbell
	d.s.b.lib.nic.Doorbell(d.h.proc(), d.cmd)
}

// wordBegin writes the operation's bounce word, if it has one, or goes
// on to the Portals post.
func (d *dequeueSteps) wordBegin() {
	if !d.e.op.bounced() {
		d.h.beginInstr(d.s.b.sw.PortalsPost)
		d.pc = dqPost
		return
	}
	a := d.s.b.lib.bounceWord(d.ctx)
	d.cmd.MD.Start = a
	d.h.beginLocal(a, d.e.src)
	d.pc = dqWord
}

// issued ends the library call (lib.issue's deferred span and stamp) and
// goes on to the entry's completion.
func (d *dequeueSteps) issued() {
	s, q := d.s, d.q
	s.span("Portals post", d.post)
	if d.e.blocking() {
		q.stamp(d.e.seq, PhaseNetwork, s.now())
	}
	d.completeBegin()
}

// completeBegin is the rest of dequeue after the library call: a
// blocking entry waits for a quiet, a non-blocking one is completed.
func (d *dequeueSteps) completeBegin() {
	s, q := d.s, d.q
	s.served++
	if d.e.blocking() {
		s.pending = append(s.pending, pend{q, d.e})
		d.readIdx()
		return
	}
	d.h.beginStore(q.slot(d.e.seq), word0(d.e, statusComplete))
	d.pc = dqComplete
}

// readIdx publishes the new read index.
func (d *dequeueSteps) readIdx() {
	d.q.rd++
	d.h.beginStore(d.q.readIdx, d.q.rd)
	d.pc = dqReadIdx
}

// Step forms of a CP thread's dequeue accesses (hw/cp).

func (c *cpPort) beginLine(a mem.Addr) {
	c.t.BeginLoadLine(mem.Line(a))
	c.lineOp = true
}

func (c *cpPort) beginLocal(a mem.Addr, v uint64)  { c.t.BeginStore64(a, v) }
func (c *cpPort) beginStore(a mem.Addr, v uint64)  { c.t.BeginStore64(a, v) }
func (c *cpPort) beginRemote(a mem.Addr, v uint64) { c.t.BeginStore64(a, v) } // the CP sits beside GPU memory

// beginRMW is the mutex's test-and-set (lib.lock): v is always 1.
func (c *cpPort) beginRMW(a mem.Addr, v uint64) {
	if v != 1 {
		panic("shmem: a CP thread's stepped RMW stores 1 (the mutex's test-and-set)")
	}
	c.t.BeginRMW(a, setOne)
}

func setOne(uint64) uint64 { return 1 }

func (c *cpPort) beginRelease() bool {
	c.t.BeginReleaseSystem()
	return true
}

func (c *cpPort) tryOp() bool {
	if !c.t.Try() {
		return false
	}
	if c.lineOp {
		c.lineOp = false
		d := c.t.LoadedLine()
		for i := range c.words {
			c.words[i] = binary.LittleEndian.Uint64(d[8*i:])
		}
	}
	return true
}

func (c *cpPort) lineWords() [8]uint64 { return c.words }
func (c *cpPort) rmwOld() uint64       { return c.t.Loaded() }
