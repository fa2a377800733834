package sim

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// waitUntilScenario runs procs that each wait on one of two signals until
// a shared counter reaches their own threshold, while a driver raises the
// counter and notifies at random instants (several notifications and
// changes in one instant too), with the waiters' conditions re-checked
// either by WaitUntil or by the plain loop of Waits it stands for. It
// returns what each proc saw when it went on, in the order they went on,
// and the engine's event count.
func waitUntilScenario(seed uint64, procs, steps int, loop bool) ([]string, uint64) {
	e := New(seed)
	r := e.Stream("scenario")
	var sigs [2]Signal
	counter := 0
	var log []string
	for i := range procs {
		need := 1 + r.IntN(steps)
		s := &sigs[r.IntN(2)]
		start := Duration(r.IntN(5))
		e.Spawn(fmt.Sprint("p", i), func(p *Proc) {
			p.Sleep(start)
			cond := func() bool { return counter >= need }
			if loop {
				for !cond() {
					p.Wait(s, "counter")
				}
			} else {
				p.WaitUntil(s, "counter", cond)
			}
			log = append(log, fmt.Sprintf("p%d@%v:%d", i, p.Now(), counter))
			p.Sleep(Duration(r.IntN(2))) // and wait again, later, on the other signal
			need2 := counter + 1 + r.IntN(3)
			if loop {
				for counter < need2 {
					p.Wait(&sigs[0], "again")
				}
			} else {
				p.WaitUntil(&sigs[0], "again", func() bool { return counter >= need2 })
			}
			log = append(log, fmt.Sprintf("p%d again@%v:%d", i, p.Now(), counter))
		})
	}
	e.Spawn("driver", func(p *Proc) {
		for range steps + 4 {
			p.Sleep(Duration(r.IntN(3)))
			counter += r.IntN(2)
			sigs[r.IntN(2)].Notify()
			if r.IntN(2) == 0 {
				sigs[0].Notify()
			}
		}
	})
	e.AtPoller(0, func() {}) // the engine keeps working with a poller queued too
	_ = e.Run()              // waiters left blocked at the end are part of the scenario
	return log, e.Events()
}

// WaitUntil re-checks a blocked coroutine's condition in its wake-up event
// instead of resuming it; the processes must go on at the same instants,
// in the same order, after the same number of events as with a plain loop
// of Waits.
func TestWaitUntilMatchesWaitLoop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		procs := rapid.IntRange(1, 12).Draw(t, "procs")
		steps := rapid.IntRange(1, 20).Draw(t, "steps")
		want, wantEv := waitUntilScenario(seed, procs, steps, true)
		got, gotEv := waitUntilScenario(seed, procs, steps, false)
		if fmt.Sprint(got) != fmt.Sprint(want) || gotEv != wantEv {
			t.Fatalf("WaitUntil: %v (%d events); loop of Waits: %v (%d events)", got, gotEv, want, wantEv)
		}
	})
}
