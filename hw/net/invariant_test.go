package net

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// A run cut short with a packet on the wire shows it as undelivered on
// its link and in flight in the fabric; a finished run shows nothing.
func TestInvariantsSeePacketsInFlight(t *testing.T) {
	for _, flows := range []bool{false, true} {
		e, f, _ := build(t, 3, tree)
		if flows {
			f.UseFlows()
		}
		f.Send(&pkt{src: 0, dst: 2, n: 4096})
		if err := e.RunUntil(10 * sim.Nanosecond); err != nil {
			t.Fatal(err)
		}
		got := f.Invariants(e.Now())
		text := ""
		for _, v := range got {
			text += v.String() + "\n"
		}
		if !strings.Contains(text, "fabric at ") || !strings.Contains(text, "1 in flight at the end") {
			t.Errorf("flows=%v: mid-flight violations:\n%s want the packet in flight", flows, text)
		}
		if !flows && !strings.Contains(text, "link node[0].up at ") {
			t.Errorf("mid-flight violations:\n%s want node[0].up undelivered", text)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if got := f.Invariants(e.Now()); len(got) > 0 {
			t.Errorf("flows=%v: after the run: %v", flows, got)
		}
	}
}
