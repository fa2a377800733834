package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The templater's loop as steps. The host templating thread (template)
// waits about five times per templated slot (its instructions, the sender
// side of its two posted writes, the wait for work), each two coroutine
// switches as coroutine code. Its coroutine lends its process to
// tmplSteps for good (sim.Proc.RunSteps; the templater never ends), which
// does what the loop does, one wait per step, over the thread's step
// forms (cpu.Thread.BeginInstr, BeginSleep, BeginRunInstr, BeginWait and
// Try): the same events at the same times in the same order.

// tmplPC is where the stepped templater stands.
type tmplPC uint8

const (
	tsPass      tmplPC = iota // a pass over the candidate QPs begins
	tsCand                    // candidate i
	tsClosedRun               // the closed-form stretch's run of the core
	tsEvents                  // candidate i as events
	tsInstr                   // templateSlot: the template's instructions
	tsWord                    // the next word's posted write
	tsWordSent                // the thread held for its side of the write
	tsFull                    // is the QP full now?
	tsPassEnd                 // the pass is over
	tsWaiting                 // waiting for work
)

// tmplSteps is gioBackend.template as a sim.Stepper.
type tmplSteps struct {
	b         *gioBackend
	t         *cpu.Thread
	pc        tmplPC
	did       bool
	i         int // the candidate
	next      int // templateClosed's candidate to go on from
	made      int // and its slots
	c         *gioCtx
	pe        int
	qp        *verbs.QP
	k         uint64  // the slot templated
	w         nic.WQE // its template
	word      int     // its next word (in gioWords)
	vis       sim.Time
	templated bool // candidate i's slot was templated (as events)
}

// afterClosed goes on after a closed-form stretch from candidate i, as
// the loop does.
func (s *tmplSteps) afterClosed() {
	switch {
	case s.next < 0:
		s.pc = tsPassEnd
	case s.made > 0 || s.next != s.i:
		s.i = s.b.nextCand(s.next)
		s.pc = tsCand
	default:
		s.pc = tsEvents
	}
}

// Step implements sim.Stepper; it never reports done.
func (s *tmplSteps) Step(p *sim.Proc) bool {
	b, t := s.b, s.t
	for !p.Waited() {
		switch s.pc {
		case tsPass:
			s.did = false
			s.i = b.nextCand(0)
			s.pc = tsCand
		case tsCand:
			i := s.i
			if i < 0 || b.stopped {
				s.pc = tsPassEnd
				continue
			}
			s.pc = tsEvents
			if b.closed && b.posted[i/64]&(1<<(i%64)) == 0 {
				var run sim.Duration
				s.next, s.made, run = b.templateClosed(t, i)
				if s.made > 0 {
					t.BeginRunInstr(uint64(s.made)*uint64(b.spec.TemplateInstr), run)
					s.pc = tsClosedRun
					continue
				}
				s.afterClosed()
			}
		case tsClosedRun:
			if !t.Try() {
				continue
			}
			s.did = true
			s.afterClosed()
		case tsEvents:
			npes := b.dev.npes
			c, pe := b.ctxs[s.i/npes], s.i%npes
			qp, err := c.qp(pe)
			if err != nil {
				panic(fmt.Sprintf("gio: PE %d context %d: a reserved connection to PE %d: %v", b.dev.pe, c.q, pe, err))
			}
			s.c, s.pe, s.qp = c, pe, qp
			s.pc = tsFull
			if qp != nil && uint64(c.templated.at(pe)) < qp.Completed()+uint64(qp.Depth()) {
				t.BeginInstr(b.spec.TemplateInstr)
				s.pc = tsInstr
			}
		case tsInstr:
			if !t.Try() {
				continue
			}
			s.k = uint64(s.c.templated.at(s.pe))
			s.w = nic.WQE{QPN: s.qp.Num()}
			if rb := b.dev.rt.team.devs[s.pe].backend.(*gioBackend); rb.heap != nil {
				s.w.RKey = rb.heap.Key
			}
			s.word, s.vis = 0, t.Now()
			s.pc = tsWord
		case tsWord:
			if s.word == len(gioWords) {
				b.slotTemplated(t, s.c, s.pe, s.vis)
				s.did = true
				s.pc = tsFull
				continue
			}
			sf, at, posted := s.qp.TemplateWord(s.k, s.w, gioWords[s.word])
			s.word++
			if posted {
				s.vis = max(s.vis, at)
				t.BeginSleep(max(0, sf-t.Now()))
				s.pc = tsWordSent
			}
		case tsWordSent:
			if !t.Try() {
				continue
			}
			s.pc = tsWord
		case tsFull:
			i, c, pe, qp := s.i, s.c, s.pe, s.qp
			if qp == nil || uint64(c.templated.at(pe)) >= qp.Completed()+uint64(qp.Depth()) {
				b.cand[i/64] &^= 1 << (i % 64) // full: a consumed completion marks it again
			}
			s.i = b.nextCand(i + 1)
			s.pc = tsCand
		case tsPassEnd:
			if s.did {
				s.pc = tsPass
				continue
			}
			b.tmplWait = true
			t.BeginWait(&b.work, "gio: a slot to template")
			s.pc = tsWaiting
		case tsWaiting:
			if !t.Try() {
				continue
			}
			b.tmplWait = false
			s.pc = tsPass
		}
	}
	return false
}
