package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Invariants checks what the sPIN unit promises once a run has nothing
// left to do (attached to its NIC's check): the packet buffer never held
// more than its size and is empty (every packet taken was freed: bytes in
// = bytes out); every HPU ran one handler at a time and none holds work;
// no handler execution request is left runnable; the handlers' summed busy
// time fits in the HPUs' time; no outbound DMA is queued (pulp).
func (s *NIC) Invariants(now sim.Time) []sim.Violation {
	var out []sim.Violation
	bad := func(format string, args ...any) {
		out = append(out, sim.Violation{Agent: s.name, At: now, What: fmt.Sprintf(format, args...)})
	}
	if s.stats.BufMax > s.spec.PktBuffer {
		bad("the packet buffer held %v, more than spin.pkt_buffer = %v", s.stats.BufMax, s.spec.PktBuffer)
	}
	if s.bufUsed != 0 || s.freed != s.stats.Packets {
		bad("%d packets taken into the packet buffer, %d freed; %v still held", s.stats.Packets, s.freed, s.bufUsed)
	}
	for _, h := range s.hpus {
		if h.overlaps > 0 {
			bad("HPU %d started %d handler(s) before its previous one ended", h.id, h.overlaps)
		}
		if h.unit != nil {
			bad("HPU %d still holds %d handler execution request(s)", h.id, len(h.unit.hers)-h.unit.head)
		}
	}
	if left := len(s.sched.runnable) - s.sched.rhead; left > 0 {
		bad("%d handler execution unit(s) left runnable", left)
	}
	if max := sim.Duration(len(s.hpus)) * now; s.stats.HandlerBusy > max {
		bad("handlers busy %v in total, more than %d HPUs × %v", s.stats.HandlerBusy, len(s.hpus), now)
	}
	for c, n := range s.dmaQ {
		if n != 0 {
			bad("cluster %d has %d outbound DMA transfer(s) queued", c, n)
		}
	}
	return out
}
