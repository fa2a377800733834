package nic

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// A payload gathered as nonzero runs, piece by piece, spreads back to the
// same bytes as the pieces copied whole (gatherPieces' two forms), for
// pieces of any length with control words anywhere, and keeps no run of
// only zero words.
func TestSparsePayloadSpreadsToTheSameBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := rapid.IntRange(1, 300).Draw(t, "piece")
		n := rapid.IntRange(1, 5).Draw(t, "pieces")*piece - rapid.IntRange(0, piece-1).Draw(t, "short")
		want := make([]byte, n)
		for range rapid.IntRange(0, 12).Draw(t, "words") {
			at := rapid.IntRange(0, n-1).Draw(t, "at")
			want[at] = byte(rapid.IntRange(1, 255).Draw(t, "byte"))
		}
		sp := &sparsePayload{}
		for off := 0; off < n; off += piece {
			sp.add(uint64(off), want[off:min(off+piece, n)])
		}
		got := make([]byte, n)
		sp.spread(got, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("spread %v, want %v", got, want)
		}
		k := uint64(0)
		for i := range sp.offs {
			run := sp.bytes[k : k+sp.lens[i]]
			if bytes.Count(run, []byte{0}) == len(run) {
				t.Fatalf("run %d at %d holds only zeros", i, sp.offs[i])
			}
			k += sp.lens[i]
		}
	})
}
