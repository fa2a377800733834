package mem

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// A server's reservations never overlap, so its check passes after any
// sequence of them; state where they did (service longer than it was
// open) is reported.
func TestServerInvariants(t *testing.T) {
	s := NewServer(1e9)
	for i, n := range []uint64{100, 4096, 1, 64 << 10} {
		s.Reserve(sim.Time(i)*sim.Microsecond, n)
	}
	if v := s.Invariants("dram", s.free); len(v) != 0 {
		t.Fatalf("after reservations: %v", v)
	}
	s.free = s.busy - 1 // two transfers served at once
	v := s.Invariants("dram", s.free)
	if len(v) != 1 || v[0].Agent != "dram" || !strings.Contains(v[0].What, "transfers overlapped") {
		t.Fatalf("overlap: %v", v)
	}
}
