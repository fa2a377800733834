package pcie

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"pgregory.net/rapid"
)

// ReadSplit gives exactly what the Read calls it stands for give: the same
// completion time, request count and link state, whatever the traffic
// before it (posted writes and reads in both directions) and the sizes.
func TestReadSplitIsReadsInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := spec()
		s.Gap = sim.Duration(rapid.Int64Range(0, 20_000).Draw(t, "gap"))
		s.MaxReadReq = unit.Bytes(rapid.IntRange(64, 4096).Draw(t, "maxReq"))
		s.SwitchLatency = sim.Duration(rapid.Int64Range(0, 200_000).Draw(t, "switch"))
		split, reads := New(s), New(s)
		now := sim.Time(0)
		for i := range rapid.IntRange(1, 12).Draw(t, "ops") {
			now += sim.Time(rapid.Int64Range(0, 50_000).Draw(t, "wait"))
			dir := Dir(rapid.IntRange(0, 1).Draw(t, "dir"))
			n := unit.Bytes(rapid.IntRange(0, 20_000).Draw(t, "bytes"))
			if rapid.Bool().Draw(t, "write") {
				a1, a2 := split.PostedWrite(dir, now, n)
				b1, b2 := reads.PostedWrite(dir, now, n)
				if a1 != b1 || a2 != b2 {
					t.Fatalf("op %d: posted writes differ", i)
				}
				continue
			}
			p2p := rapid.Bool().Draw(t, "p2p")
			got, k := split.ReadSplit(dir, now, n, s.MaxReadReq, p2p)
			want, kk := now, 0
			for off := unit.Bytes(0); off < n; off += s.MaxReadReq {
				want = max(want, reads.Read(dir, now, min(s.MaxReadReq, n-off), p2p))
				kk++
			}
			if got != want || k != kk {
				t.Fatalf("op %d: ReadSplit of %d B = (%v, %d), Read calls = (%v, %d)", i, n, got, k, want, kk)
			}
			if split.sides != reads.sides {
				t.Fatalf("op %d: link state differs: %+v vs %+v", i, split.sides, reads.sides)
			}
		}
	})
}
