package sim

import (
	"fmt"
	"slices"
	"testing"
)

// TestMarkChainZeroGaps: a chain of marks may have marks at the same
// picosecond (a gap of 0), as SetMarkAfter allows a mark at its
// predecessor's time: a host helper's quiet of a few instructions rounds
// to 0 ps on a fast core (cpu.freq = 1000GHz, cpu.ipc = 16,
// sw.shmem_quiet = 1), and SetChain panicked there. With zero gaps, and
// events at the marks' instants scheduled before the chain and while it
// passes, the chain gives the log, events and marks of the Mark chain,
// woken or not.
func TestMarkChainZeroGaps(t *testing.T) {
	gaps := []Duration{0, 1, 0, 0, 2, 0}
	run := func(chain bool, wakeAt Time) ([]string, uint64, uint64) {
		e := New(1)
		var log []string
		var ms [7]Mark
		var c MarkChain
		var p *Proc
		const t0 = 5
		last := Time(t0)
		for _, d := range gaps {
			last += d
		}
		// Events at every instant of the chain: scheduled before it is
		// set (early), after it is set (late, from an event at 3), and
		// at the instant itself from within the late one (after the
		// marks passed there so far), which may wake the sleeper.
		for at := Time(t0); at <= last+1; at++ {
			e.At(at, func() { log = append(log, fmt.Sprintf("%v early", at)) })
			e.At(3, func() {
				e.At(at, func() {
					log = append(log, fmt.Sprintf("%v late", at))
					e.At(at, func() {
						log = append(log, fmt.Sprintf("%v same", at))
						if at != wakeAt {
							return
						}
						if chain && c.Pending() {
							p.WakeAtChain(&c)
						} else if !chain {
							for i := range ms {
								if ms[i].Pending() {
									p.WakeAtMark(&ms[i])
									break
								}
							}
						}
					})
				})
			})
		}
		p = e.Spawn("sleeper", func(p *Proc) {
			p.Sleep(2)
			if chain {
				p.SleepOnChain(&c, t0, gaps, last+1)
			} else {
				t := Time(t0)
				e.SetMark(&ms[0], t)
				for i, d := range gaps[:len(gaps)-1] {
					t += d
					e.SetMarkAfter(&ms[i+1], &ms[i], t)
				}
				t += gaps[len(gaps)-1]
				e.SetMarkAfter(&ms[len(gaps)], &ms[len(gaps)-1], t)
				p.SleepAtMark(&ms[len(gaps)], last+1)
			}
			log = append(log, fmt.Sprintf("%v woke", p.Now()))
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return log, e.Events(), e.MarksPassed()
	}
	for _, wakeAt := range []Time{0, 5, 6, 8, 9} {
		want, we, wm := run(false, wakeAt)
		got, ge, gm := run(true, wakeAt)
		if !slices.Equal(got, want) || ge != we || gm != wm {
			t.Errorf("woken at %v: chain\n%v (%d events, %d marks)\nMarks\n%v (%d events, %d marks)", wakeAt, got, ge, gm, want, we, wm)
		}
	}
}
