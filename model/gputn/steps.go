package gputn

import (
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// trigPuts is TrigPutBlock's registration loop as a state machine run in
// the host thread's own process (sim.Proc.RunSteps): per put, the Portals
// post's instructions, then the registration's doorbell write, then the
// put's span, exactly as the loop
//
//	for i := range count {
//		start := t.Now()
//		t.Instr(sw.PortalsPost)
//		nic.RegisterTriggerOf(t.Proc, tag(i), blk, i, threshold)
//		t.Span("TrigPut", start)
//	}
//
// does as coroutine code, with the same events at the same times; a
// ring's 2(n−1)·slices registrations per node were two coroutine switches
// each.
type trigPuts struct {
	h         *Host
	blk       *nic.CommandBlock
	tag       func(i int) uint64
	threshold uint64
	count     int

	i     int      // the put being registered
	stage uint8    // where put i stands
	start sim.Time // put i's span start
}

// Stages of one registration.
const (
	tpBegin    = iota // start the Portals post's instructions
	tpInstr           // the instructions run
	tpRegister        // the doorbell's posted write is issued: the span ends
)

// Step implements sim.Stepper.
func (s *trigPuts) Step(p *sim.Proc) bool {
	t := s.h.t
	for {
		switch s.stage {
		case tpBegin:
			if s.i == s.count {
				return true
			}
			s.start = t.Now()
			t.BeginInstr(s.h.sw.PortalsPost)
			s.stage = tpInstr
			fallthrough
		case tpInstr:
			if !t.Try() {
				return false
			}
			s.stage = tpRegister
			s.h.nic.RegisterTriggerOf(p, s.tag(s.i), s.blk, s.i, s.threshold)
			if p.Waited() {
				return false
			}
			fallthrough
		case tpRegister:
			t.Span("TrigPut", s.start)
			s.i++
			s.stage = tpBegin
		}
	}
}
