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
	opNone   opKind = iota
	opRun           // Instr, Sleep, SleepUntil: tryRun
	opStream        // a one-thread Compute: tryStream, then its span
	opSpin          // Wait: spin on a signal
	opBlock         // Block: block on a signal
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

// BeginSleep starts Sleep(d) as steps.
func (t *Thread) BeginSleep(d sim.Duration) {
	t.op = opRun
	t.beginRun(d)
}

// BeginCompute starts Compute(bytes, 1) as steps: a stream on the
// thread's own core, without a team. (A region with a team stays a
// blocking operation.)
func (t *Thread) BeginCompute(bytes uint64) {
	t.op = opStream
	t.opStart = t.Now()
	t.streamLeft = bytes
}

// BeginWait starts Wait(s, what) as steps.
func (t *Thread) BeginWait(s *sim.Signal, what string) { t.beginWait(opSpin, s, what) }

// BeginBlock starts Block(s, what) as steps.
func (t *Thread) BeginBlock(s *sim.Signal, what string) { t.beginWait(opBlock, s, what) }

func (t *Thread) beginWait(k opKind, s *sim.Signal, what string) {
	t.op, t.ws, t.wsig, t.wwhat = k, wsAcquire, s, what
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
	case opStream:
		if done = t.tryStream(); done {
			t.Span("compute", t.opStart)
		}
	case opSpin, opBlock:
		done = t.tryWait()
	}
	if done {
		t.op = opNone
	}
	return done
}

// tryWait is spin (Wait) or block (Block) on t.wsig as a step.
func (t *Thread) tryWait() bool {
	for {
		switch t.ws {
		case wsAcquire:
			if !t.tryAcquire() {
				return false
			}
			if t.op == opBlock {
				t.core.release()
			} else {
				t.polling, t.pollSince = true, t.Now()
				t.core.armTimer()
			}
			t.ws = wsWait
		case wsWait:
			t.ws = wsWoken
			t.Proc.Wait(t.wsig, t.wwhat)
			return false
		case wsWoken:
			t.wsig = nil
			if t.op == opBlock {
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
