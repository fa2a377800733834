package cpu

import (
	"strconv"

	"github.com/gpunetsim/gpunetsim/sim"
)

// OpenMP team threads as step processes. A team thread only acquires its
// core, streams its share and ends, so its body is a small state machine
// (Step) run by the engine as a step process (sim.Engine.SpawnSteps)
// instead of a coroutine: its waits (the core's turn, the context switch,
// each chunk of core time) register their wake-up and return, through the
// Try forms of the scheduler's blocking operations (tryAcquire, tryRun,
// tryStream) that the blocking forms loop over. It schedules the same
// events at the same times as the coroutine body, so results, statistics
// and event counts are identical; what changes is the simulator's cost: no
// coroutine stack per team thread, a call instead of two coroutine
// switches per wake-up, and team-thread objects and names reused from one
// region to the next.

// teamThread is an OpenMP team thread of a region.
type teamThread struct {
	Thread
	acquired bool // holds its core for the first time: streaming
	// proc is the step process, reused from region to region
	// (sim.Engine.SpawnStepsIn): one allocation fewer per team thread.
	proc sim.Proc
}

// Step implements sim.Stepper: acquire the core, stream, give the core up.
func (w *teamThread) Step(*sim.Proc) bool {
	t := &w.Thread
	if !w.acquired {
		if !t.tryAcquire() {
			return false
		}
		w.acquired = true
	}
	if !t.tryStream() {
		return false
	}
	t.exit()
	return true
}

// spawnTeam starts team thread i of a region of master's, streaming bytes
// on the core the scheduler places it on: a step process, or a coroutine
// running the same operations when c.teamCoroutines is set (the reference
// the step form is tested against).
func (c *CPU) spawnTeam(master *Thread, i int, bytes uint64) *teamThread {
	k := c.placeAvoiding(master.core)
	var w *teamThread
	if n := len(c.idleTeam); n > 0 {
		w, c.idleTeam = c.idleTeam[n-1], c.idleTeam[:n-1]
	} else {
		w = new(teamThread)
	}
	w.Thread = Thread{cpu: c, track: c.teamTrack(i), core: k, ident: c.teamSlot(i), streamLeft: bytes, mix: master.mix}
	w.acquired = false
	k.threads++
	if c.teamCoroutines {
		w.Proc = c.e.Spawn(w.track, func(*sim.Proc) {
			defer w.exit()
			w.acquire()
			w.stream(bytes)
		})
	} else {
		c.e.SpawnStepsIn(&w.proc, w.track, w)
		w.Proc = &w.proc
	}
	return w
}

// endTeam takes back the team threads of a finished region for the next
// region (of any master thread of the CPU): nothing refers to them once
// they are done.
func (c *CPU) endTeam(team []*teamThread) {
	c.idleTeam = append(c.idleTeam, team...)
}

// teamTrack returns the trace track (and process name) of team thread i.
func (c *CPU) teamTrack(i int) string {
	for len(c.teamTracks) <= i {
		c.teamTracks = append(c.teamTracks, c.name+".omp["+strconv.Itoa(len(c.teamTracks))+"]")
	}
	return c.teamTracks[i]
}
