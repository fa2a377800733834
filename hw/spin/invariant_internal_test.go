package spin

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Each sPIN invariant reports its breach: a packet never freed, a buffer
// above its size, an HPU running two handlers at once or holding work, a
// unit left runnable, more handler time than the HPUs had, a queued DMA.
func TestSpinInvariantsReportBreaches(t *testing.T) {
	s := &NIC{name: "node[1].nic.spin", spec: Spec{PktBuffer: 4 * unit.KiB}, bufUsed: 2048, freed: 1, dmaQ: []int{0, 3}}
	s.stats.Packets, s.stats.BufMax, s.stats.HandlerBusy = 2, 8*unit.KiB, 5*sim.Microsecond
	s.hpus = []*hpu{{id: 0, overlaps: 2}, {id: 1, unit: &unitQ{hers: make([]*her, 3), head: 1}}}
	s.sched.runnable = []*unitQ{{}, {}}
	got := s.Invariants(2 * sim.Microsecond)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.What)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"the packet buffer held 8KiB, more than spin.pkt_buffer = 4KiB",
		"2 packets taken into the packet buffer, 1 freed; 2KiB still held",
		"HPU 0 started 2 handler(s) before its previous one ended",
		"HPU 1 still holds 2 handler execution request(s)",
		"2 handler execution unit(s) left runnable",
		"handlers busy 5us in total, more than 2 HPUs × 2us",
		"cluster 1 has 3 outbound DMA transfer(s) queued",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	clean := &NIC{name: "x", spec: Spec{PktBuffer: 4 * unit.KiB}, hpus: []*hpu{{}}}
	if v := clean.Invariants(sim.Microsecond); len(v) != 0 {
		t.Errorf("an idle unit: %v", v)
	}
}
