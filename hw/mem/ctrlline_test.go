package mem

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCtrlLineMatchesBytes: a control line kept as its one non-zero word
// (or all its bytes once two words were non-zero) reads back, for any
// range, what a plain 64-byte line given the same writes holds: writes of
// random ranges, mostly sequence words (one 8-byte word, often zero),
// sometimes spans of random bytes across words.
func TestCtrlLineMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		c := ctrlLine{key: 5 * LineSize} // any line: its address must survive the writes
		var bs [][LineSize]byte
		var ref [LineSize]byte
		for k := range 40 {
			var from, n int
			src := make([]byte, LineSize)
			switch rng.IntN(4) {
			case 0, 1: // a word, zero or not
				from, n = 8*rng.IntN(8), 8
				if rng.IntN(3) > 0 {
					putLE64(src, rng.Uint64N(1<<20))
				}
			case 2: // zeros over a random span
				from = rng.IntN(LineSize)
				n = 1 + rng.IntN(LineSize-from)
			default: // random bytes over a random span (a late round only)
				from = rng.IntN(LineSize)
				n = 1 + rng.IntN(LineSize-from)
				if round%4 == 0 {
					for i := range n {
						src[i] = byte(rng.IntN(256))
					}
				}
			}
			c.write(&bs, src[:n], from)
			copy(ref[from:from+n], src[:n])
			lo := rng.IntN(LineSize)
			hi := lo + 1 + rng.IntN(LineSize-lo)
			got := make([]byte, hi-lo)
			for i := range got {
				got[i] = 0xAA // read overwrites the whole range
			}
			c.read(bs, got, lo)
			if c.addr() != 5*LineSize {
				t.Fatalf("round %d write %d: the line's address became %#x", round, k, c.addr())
			}
			if !bytes.Equal(got, ref[lo:hi]) {
				t.Fatalf("round %d write %d: read [%d, %d) = %x, want %x", round, k, lo, hi, got, ref[lo:hi])
			}
		}
	}
}
