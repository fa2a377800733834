package cpu

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// A thread's operations as steps, for a model layer that runs a stretch of
// a host thread's work as a state machine (sim.Proc.RunSteps: an MPI
// progress loop) instead of as coroutine code. Begin* starts an operation
// and Try advances it: Try reports true once the operation is over, false
// when it waited (or must be called again at once), like a sim.Stepper's
// Step; it waits at most once per call, where the blocking form waits. The
// blocking forms (Instr, Sleep, Wait, Block, a one-thread Compute) do the
// same as Begin* followed by calling Try until it reports true, so the two
// schedule the same events at the same times in the same order.

// opKind is the thread operation Try advances.
type opKind uint8

const (
	opNone    opKind = iota
	opRun            // Instr, Sleep, SleepUntil: tryRun
	opCompute        // Compute: tryCompute
	opWait           // Wait or Block on a signal: tryWait
)

// waitState is where a step-form Wait or Block stands (tryWait).
type waitState uint8

const (
	wsAcquire   waitState = iota // acquiring the core before the wait
	wsWait                       // waiting on the signal
	wsWoken                      // the signal was notified
	wsWake                       // blocked: sleeping out cpu.wake_latency
	wsReacquire                  // acquiring the core after the wait
)

// BeginInstr starts Instr(n) as steps.
func (t *Thread) BeginInstr(n int) {
	if n < 0 {
		panic(fmt.Sprintf("cpu: %s runs %d instructions", t.track, n))
	}
	t.cpu.instr += uint64(n)
	t.BeginSleep(t.cpu.spec.Instr(n))
}

// BeginRunInstr starts RunInstr(n, d) as steps.
func (t *Thread) BeginRunInstr(n uint64, d sim.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("cpu: %s runs a batch of %v", t.track, d))
	}
	t.cpu.instr += n
	t.BeginSleep(d)
}

// BeginSleep starts Sleep(d) as steps.
func (t *Thread) BeginSleep(d sim.Duration) {
	t.op = opRun
	t.beginRun(d)
}

// BeginCompute starts Compute(bytes, threads) as steps: the team is
// spawned now, then Try streams the caller's share and joins the team.
func (t *Thread) BeginCompute(bytes uint64, threads int) {
	if threads < 1 {
		panic(fmt.Sprintf("cpu: %s computes with %d threads", t.track, threads))
	}
	t.op, t.opStart, t.opJoined = opCompute, t.Now(), 0
	if bytes == 0 {
		t.op = opNone
		return
	}
	t.streamLeft = t.spawnShares(bytes, threads)
}

// tryCompute is Compute after its team was spawned: the caller's stream,
// then the barrier, a join of each team thread not yet done (spinning, or
// blocking when the team outnumbers the cores).
func (t *Thread) tryCompute() bool {
	if t.opJoined == 0 && t.wjoin == nil && !t.tryStream() {
		return false
	}
	team := t.team
	for t.opJoined < len(team) {
		if t.wjoin == nil {
			w := team[t.opJoined]
			if w.Done() {
				t.opJoined++
				continue
			}
			t.ws, t.wblock, t.wjoin = wsAcquire, len(team)+1 > t.cpu.spec.Cores, w.Proc
		}
		if !t.tryWait() {
			return false
		}
		t.wjoin = nil
		t.opJoined++
	}
	t.cpu.endTeam(team)
	t.team = team[:0]
	t.mix = mix{}
	t.Span("compute", t.opStart)
	return true
}

// BeginWait starts Wait(s, what) as steps.
func (t *Thread) BeginWait(s *sim.Signal, what string) { t.beginWait(false, s, what) }

// BeginBlock starts Block(s, what) as steps.
func (t *Thread) BeginBlock(s *sim.Signal, what string) { t.beginWait(true, s, what) }

// BeginWaitUntil starts WaitUntil(s, what, cond) as steps: cond is
// checked before each wait and after each notification of s, as
// sim.Proc.WaitUntil does.
func (t *Thread) BeginWaitUntil(s *sim.Signal, what string, cond func() bool) {
	t.beginWait(false, s, what)
	t.wcond = cond
}

func (t *Thread) beginWait(block bool, s *sim.Signal, what string) {
	t.op, t.ws, t.wblock, t.wsig, t.wwhat, t.wcond = opWait, wsAcquire, block, s, what, nil
}

// Try advances the operation begun by a Begin* call: true once it is over
// (and for no operation), false when it waited or must be called again.
func (t *Thread) Try() bool {
	var done bool
	switch t.op {
	case opNone:
		return true
	case opRun:
		done = t.tryRun()
	case opCompute:
		done = t.tryCompute()
	case opWait:
		done = t.tryWait()
	}
	if done {
		t.op = opNone
	}
	return done
}

// tryWait is spin (Wait) or block (Block) on t.wsig, or the join of
// t.wjoin, as a step.
func (t *Thread) tryWait() bool {
	for {
		switch t.ws {
		case wsAcquire:
			if !t.tryAcquire() {
				return false
			}
			if t.wblock {
				t.core.release()
			} else {
				t.polling, t.pollSince = true, t.Now()
				t.core.armTimer()
			}
			t.ws = wsWait
		case wsWait:
			if t.wjoin != nil {
				if !t.Proc.TryJoin(t.wjoin) {
					return false
				}
				t.ws = wsWoken
				continue
			}
			if t.wcond != nil { // WaitUntil: wait until cond holds
				if t.wcond() {
					t.ws = wsWoken
					continue
				}
				t.Proc.Wait(t.wsig, t.wwhat)
				return false
			}
			t.ws = wsWoken
			t.Proc.Wait(t.wsig, t.wwhat)
			return false
		case wsWoken:
			t.wsig, t.wcond = nil, nil
			if t.wblock {
				t.ws = wsWake
				t.Proc.Sleep(t.cpu.spec.WakeLatency)
				return false
			}
			if t.core.cur == t {
				t.core.stats.Polling += t.Now() - t.pollSince
			}
			t.polling = false
			t.ws = wsReacquire
		case wsWake:
			t.ws = wsReacquire
		case wsReacquire:
			return t.tryAcquire()
		}
	}
}

// Runs that stand in marks. A service thread whose next polls are known
// to find nothing (model/shmem) does not run their events: its process's
// wake-ups are a chain of sim marks, and the thread is put in the state
// each run of core time leaves it in while it sleeps, for whoever looks
// at the core meanwhile and for the body when it resumes.

// GhostSpan reports whether t's runs of core time may stand in marks from
// now on (ok): t holds its core, the switch to it is done, no operation
// is in progress and its slice has not ended. sliceEnd is when it ends: a
// run that starts before it and ends by it is one sleep on the core that
// nothing else decides (tryRun reads the core's queue only when a run
// starts at a slice end, and a thread that arrives meanwhile finds t
// running and waits for that end).
func (t *Thread) GhostSpan() (sliceEnd sim.Time, ok bool) {
	k := t.core
	now := t.Now()
	if k == nil || k.cur != t || t.acq != acqIdle || k.readyAt > now || t.op != opNone || t.run != runIdle || now >= k.sliceEnd {
		return 0, false
	}
	return k.sliceEnd, true
}

// GhostRun counts n instructions (those of the runs that stood in marks
// and of this one, BeginInstr's count) and leaves t in a run of d of core
// time in progress, as BeginSleep(d) and the Try that began its sleep do:
// the process's wake-up at its end is already pending (a mark, or its
// event), and the next Try ends the run. The run must lie within the
// slice GhostSpan reported; d must be positive.
func (t *Thread) GhostRun(n uint64, d sim.Duration) {
	if d <= 0 || t.core.cur != t {
		panic(fmt.Sprintf("cpu: %s stands in a run of %v off its core", t.track, d))
	}
	t.cpu.instr += n
	t.op, t.run = opRun, runChunk
	t.runLeft, t.chunk, t.running = d, d, true
}
