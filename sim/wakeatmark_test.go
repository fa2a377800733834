package sim

import (
	"fmt"
	"slices"
	"testing"
)

// spinner polls a word w: from 1 ps it sleeps 2 ps, 1 ps, 2 ps, … (wake-ups
// at 3, 4, 6, 7, 9, 10 ps) and at each wake-up reads w; it logs and stops
// at the first wake-up that finds w changed, or at the last. With marks,
// its wake-ups but the last are a chain of marks (SetMarkAfter) and the
// last is deferred to the chain's end; a write calls wake, which makes the
// first mark not yet passed its wake-up event (WakeAtMark).
type spinner struct {
	mark  bool
	chain bool // with mark: the marks as one MarkChain (SetChain)
	ch    MarkChain
	delay Duration // before the first sleep's 1 ps
	w     *string
	log   *[]string
	pc    int
	i     int
	marks [5]Mark
	on    bool
}

var spinSleeps = []Duration{2, 1, 2, 1, 2, 1}

func (k *spinner) Step(p *Proc) bool {
	switch k.pc {
	case 0:
		k.pc = 1
		p.Sleep(1 + k.delay)
		return false
	case 1:
		k.pc = 2
		if k.mark && k.chain {
			t := p.Now() + spinSleeps[0]
			last := t
			for _, d := range spinSleeps[1:len(k.marks)] {
				last += d
			}
			k.on = true
			p.SleepOnChain(&k.ch, t, spinSleeps[1:len(k.marks)], last+spinSleeps[len(spinSleeps)-1])
			return false
		}
		if k.mark {
			e := p.Engine()
			t := p.Now() + spinSleeps[0]
			e.SetMark(&k.marks[0], t)
			for i := 1; i < len(k.marks); i++ {
				t += spinSleeps[i]
				e.SetMarkAfter(&k.marks[i], &k.marks[i-1], t)
			}
			k.on = true
			p.SleepAtMark(&k.marks[len(k.marks)-1], t+spinSleeps[len(spinSleeps)-1])
			return false
		}
		p.Sleep(spinSleeps[0])
		k.i = 1
		return false
	}
	k.on = false
	if *k.w != "" || k.i == len(spinSleeps) || k.mark {
		*k.log = append(*k.log, fmt.Sprintf("%v spinner reads %q", p.Now(), *k.w))
		return true
	}
	p.Sleep(spinSleeps[k.i])
	k.i++
	return false
}

// wake is the write's call: the first pending mark becomes the wake-up.
func (k *spinner) wake(p *Proc) {
	if !k.mark || !k.on {
		return
	}
	k.on = false
	if k.chain {
		if k.ch.Pending() {
			p.WakeAtChain(&k.ch)
		}
		return
	}
	for i := range k.marks {
		if k.marks[i].Pending() {
			p.WakeAtMark(&k.marks[i])
			return
		}
	}
}

// A write that wakes a chain of marks (WakeAtMark) makes the spinner read
// it at the wake-up where the chain of events would have: the first one
// that orders after the write, among callbacks scheduled before, at and
// after each of its wake-ups' times and firing at them (ties at the same
// picosecond included), whichever of them writes; in fewer events (the
// marks passed).
func TestWakeAtMarkIsTheChainsEvent(t *testing.T) {
	starts := []Time{0, 1, 2, 3, 4, 5, 6, 7, 9, 10}
	fires := []Time{3, 4, 5, 6, 7, 9, 10, 11}
	run := func(mark bool, writer string) ([]string, uint64, uint64) {
		e := New(1)
		var log []string
		var w string
		k := &spinner{mark: mark, w: &w, log: &log}
		p := e.SpawnSteps("spinner", k)
		for _, s := range starts {
			for _, f := range fires {
				if f < s {
					continue
				}
				name := fmt.Sprintf("b(%v→%v)", s, f)
				e.At(s, func() {
					e.At(f, func() {
						log = append(log, fmt.Sprintf("%v %s", f, name))
						if name == writer {
							w = name
							k.wake(p)
						}
					})
				})
			}
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return log, e.Events(), e.MarksPassed()
	}
	writers := []string{"none"}
	for _, s := range starts {
		for _, f := range fires {
			if f >= s {
				writers = append(writers, fmt.Sprintf("b(%v→%v)", s, f))
			}
		}
	}
	for _, wr := range writers {
		want, we, _ := run(false, wr)
		got, ge, gm := run(true, wr)
		if !slices.Equal(got, want) {
			t.Fatalf("writer %s, with marks:\n%v\nwith the events:\n%v", wr, got, want)
		}
		if ge+gm != we || wr == "none" && gm != 5 {
			t.Fatalf("writer %s: %d events and %d marks passed with marks, %d events without: want one fewer per mark", wr, ge, gm, we)
		}
	}
}

// A MarkChain is the chain of Marks it replaces: spinners woken by every
// writer, their wake-ups as events, as Marks and as one MarkChain each,
// give the same log (ties at each picosecond included), and the chain
// passes as many marks as the Marks. Four spinners started 0, 1, 2 and 0 ps
// late interleave their chains (the heap of chains), with a Mark chain
// beside them in the mixed case.
func TestMarkChainIsTheMarks(t *testing.T) {
	starts := []Time{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 12}
	fires := []Time{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	const ns = 4
	delays := [ns]Duration{0, 1, 2, 0}
	// mode 0: events; 1: Marks; 2: MarkChains; 3: chains but spinner 1 Marks.
	run := func(mode int, writer string) ([]string, uint64, uint64) {
		e := New(1)
		var log []string
		var ws [ns]string
		var ks [ns]*spinner
		var ps [ns]*Proc
		for i := range ns {
			ks[i] = &spinner{mark: mode > 0, chain: mode == 2 || mode == 3 && i != 1, w: &ws[i], log: &log, delay: delays[i]}
			ps[i] = e.SpawnSteps(fmt.Sprintf("spinner%d", i), ks[i])
		}
		for _, s := range starts {
			for _, f := range fires {
				if f < s {
					continue
				}
				for i := range ns {
					name := fmt.Sprintf("b%d(%v→%v)", i, s, f)
					e.At(s, func() {
						e.At(f, func() {
							log = append(log, fmt.Sprintf("%v %s", f, name))
							if name == writer {
								ws[i] = name
								ks[i].wake(ps[i])
							}
						})
					})
				}
			}
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		for i := range ns {
			log = append(log, fmt.Sprintf("spinner%d at %d", i, ks[i].pc))
		}
		return log, e.Events(), e.MarksPassed()
	}
	writers := []string{"none"}
	for _, s := range starts {
		for _, f := range fires {
			if f >= s {
				for i := range ns {
					writers = append(writers, fmt.Sprintf("b%d(%v→%v)", i, s, f))
				}
			}
		}
	}
	for _, wr := range writers {
		want, we, _ := run(0, wr)
		_, me, mm := run(1, wr)
		for _, mode := range []int{2, 3} {
			got, ge, gm := run(mode, wr)
			if !slices.Equal(got, want) {
				t.Fatalf("writer %s, mode %d:\n%v\nwith the events:\n%v", wr, mode, got, want)
			}
			if ge != me || gm != mm || ge+gm != we {
				t.Fatalf("writer %s, mode %d: %d events, %d marks; Marks %d, %d; events alone %d", wr, mode, ge, gm, me, mm, we)
			}
		}
	}
}
