package pcie

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Writes, reads and split reads keep each direction's serialisations
// apart, so the check passes; overlapping ones are reported.
func TestLinkInvariants(t *testing.T) {
	l := New(spec())
	l.PostedWrite(Up, 0, 4096)
	l.Read(Down, sim.Microsecond, 512, false)
	l.ReadSplit(Up, 2*sim.Microsecond, 64*unit.KiB, 512, false)
	if v := l.Invariants("node[0].pcie", 10*sim.Microsecond); len(v) != 0 {
		t.Fatalf("after traffic: %v", v)
	}
	l.sides[Up].free = 1
	v := l.Invariants("node[0].pcie", 10*sim.Microsecond)
	if len(v) != 1 || !strings.Contains(v[0].What, "transactions overlapped") {
		t.Fatalf("overlap: %v", v)
	}
}
