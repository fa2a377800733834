package pcie

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"pgregory.net/rapid"
)

// ReadSplit against the Read calls it stands for, whatever the traffic
// before it (posted writes and reads in both directions) and the sizes: the
// same request count, transactions and bytes; the same completion time while
// only reads have been issued; and never a later completion, of a read or of
// a posted write, once posted writes are in the traffic, since only the first
// request of a split takes a turn on the direction's issue clock (posted
// writes pass the later, header-only read requests).
func TestReadSplitIsReadsInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := spec()
		s.Gap = sim.Duration(rapid.Int64Range(0, 20_000).Draw(t, "gap"))
		s.MaxReadReq = unit.Bytes(rapid.IntRange(64, 4096).Draw(t, "maxReq"))
		s.SwitchLatency = sim.Duration(rapid.Int64Range(0, 200_000).Draw(t, "switch"))
		split, reads := New(s), New(s)
		now, wrote := sim.Time(0), false
		for i := range rapid.IntRange(1, 12).Draw(t, "ops") {
			now += sim.Time(rapid.Int64Range(0, 50_000).Draw(t, "wait"))
			dir := Dir(rapid.IntRange(0, 1).Draw(t, "dir"))
			n := unit.Bytes(rapid.IntRange(0, 20_000).Draw(t, "bytes"))
			if rapid.Bool().Draw(t, "write") {
				a1, a2 := split.PostedWrite(dir, now, n)
				b1, b2 := reads.PostedWrite(dir, now, n)
				if a1 > b1 || a2 > b2 {
					t.Fatalf("op %d: posted write after split reads (%v, %v), after Read calls (%v, %v)", i, a1, a2, b1, b2)
				}
				wrote = true
				continue
			}
			p2p := rapid.Bool().Draw(t, "p2p")
			got, k := split.ReadSplit(dir, now, n, s.MaxReadReq, p2p)
			want, kk := now, 0
			for off := unit.Bytes(0); off < n; off += s.MaxReadReq {
				want = max(want, reads.Read(dir, now, min(s.MaxReadReq, n-off), p2p))
				kk++
			}
			if got > want || k != kk || (!wrote && got != want) {
				t.Fatalf("op %d: ReadSplit of %d B = (%v, %d), Read calls = (%v, %d)", i, n, got, k, want, kk)
			}
			for d := range split.sides {
				a, b := split.sides[d], reads.sides[d]
				if a.txns != b.txns || a.bytes != b.bytes || a.busy != b.busy || a.free > b.free {
					t.Fatalf("op %d: link state differs: %+v vs %+v", i, split.sides, reads.sides)
				}
			}
		}
	})
}

// A posted write issued right after a long split read goes out one gap
// after the read's first request, not behind all of its requests: a read
// request is one header TLP and PCIe lets posted writes pass non-posted
// requests. Before, the split booked a gap per request on the direction's
// issue clock at once, and a NIC's writes of the data it received waited
// milliseconds behind its own outstanding reads (moe throughput EP 8 on
// h100-cx7: 11,138 µs, 8,861 µs without the queue).
func TestPostedWritePassesSplitReadRequests(t *testing.T) {
	l := New(spec())
	if _, k := l.ReadSplit(Up, 0, 1<<20, 512, false); k != 2048 {
		t.Fatalf("a 1 MiB read took %d requests, want 2048", k)
	}
	free, _ := l.PostedWrite(Up, 0, 8)
	want := New(spec())
	want.Read(Up, 0, 512, false)
	wfree, _ := want.PostedWrite(Up, 0, 8)
	if free != wfree {
		t.Errorf("posted write after a 1 MiB split read leaves at %v, after one 512 B read at %v", free, wfree)
	}
}
