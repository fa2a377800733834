package shmem

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
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
	phEnd                        // the round's end
	phEndIdle                    // the round's end after its quiet
	phEndChecks                  // the round's end after its idle sleep
)

// pollExit is why pollSteps handed the process back to the coroutine.
type pollExit uint8

const (
	exitStop  pollExit = iota // the thread stops (or the run failed)
	exitFound                 // the poll of s.queues[qi] saw a posted status
	exitQuiet                 // the round's end quiets the pending entries
	exitSleep                 // the round's end sleeps through an idle stretch
)

// pollSteps is the service loop between the coroutine's parts (run's
// steps 1 and 5 up to a dequeue, a quiet or an idle sleep).
type pollSteps struct {
	s     *service
	sp    stepPort
	phase pollPhase
	exit  pollExit
	qi    int // the queue being polled
	found bool
	start sim.Time // the poll's start (its span)
}

// Step implements sim.Stepper.
func (ps *pollSteps) Step(p *sim.Proc) bool {
	s := ps.s
	for {
		switch ps.phase {
		case phRound:
			if s.stop {
				ps.exit = exitStop
				return true
			}
			p.PollStart()
			ps.qi, ps.found = 0, false
			ps.phase = phQueue
		case phQueue:
			if ps.qi == len(s.queues) {
				ps.phase = phEnd
				continue
			}
			q := s.queues[ps.qi]
			ps.start = s.now()
			ps.sp.beginPoll(q.slot(q.rd))
			ps.phase = phPoll
		case phPoll:
			st, ok := ps.sp.tryPoll()
			if !ok {
				return false
			}
			ps.phase = phInstr
			if uint32(st) == statusPosted {
				// After the poll's instructions, the coroutine dequeues.
				ps.exit = exitFound
			} else {
				ps.exit = exitStop
			}
			ps.sp.beginInstr(s.b.sw.ConsumerPoll)
		case phInstr:
			if !ps.sp.tryInstr() {
				return false
			}
			s.polls++
			s.span("poll", ps.start)
			if ps.exit == exitFound {
				return true // the coroutine visits s.queues[qi], then resumes at phQueue
			}
			ps.qi++
			ps.phase = phQueue
		case phEnd:
			if s.clock.endRound(s.b.spec.QuietRounds) && len(s.pending) > 0 {
				ps.exit, ps.phase = exitQuiet, phEndIdle
				return true
			}
			ps.phase = phEndIdle
		case phEndIdle:
			if !ps.found && len(s.pending) == 0 && s.port.idle() {
				ps.exit, ps.phase = exitSleep, phEndChecks
				return true
			}
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

// runSteps is run with its polls as steps (see pollSteps).
func (s *service) runSteps(sp stepPort) {
	p := s.port.proc()
	ps := &pollSteps{s: s, sp: sp}
	for {
		p.RunSteps(ps)
		switch ps.exit {
		case exitStop:
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
		case exitSleep:
			s.sleep(s.b.sw.ConsumerPoll)
		}
	}
}

// Step forms of the ports' polls.

func (h *hostPort) beginPoll(a mem.Addr) {
	h.pa = a
	if !h.overPC {
		h.n.L1++
		v := h.m.Load64(a)
		h.pv = v
		if old, ok := h.seen[a]; ok && old == v {
			h.t.BeginSleep(h.spec.CacheHit)
			return
		}
		h.n.L2++
		h.n.DRAM++
		h.t.BeginSleep(h.spec.DRAMLatency)
		h.seen[a] = v
		return
	}
	h.n.PCIe++
	h.t.BeginSleep(max(0, h.link.Read(pcie.Down, h.t.Now(), 8, false)-h.t.Now()))
}

func (h *hostPort) tryPoll() (uint64, bool) {
	if !h.t.Try() {
		return 0, false
	}
	if h.overPC {
		return h.m.Load64(h.pa), true
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
