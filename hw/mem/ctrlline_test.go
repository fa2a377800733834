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

// A word's store and load take the short ways (wordStore, read's aligned
// word): the entry they leave is the one the line's bytes make
// (writeLine), and the word read is the line's.
func TestCtrlLineWordStoreIsWriteLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 2000 {
		c := ctrlLine{key: 7 * LineSize}
		var bs, bsRef [][LineSize]byte
		for k := range 12 {
			ref := c
			var src [8]byte
			if rng.IntN(3) > 0 {
				putLE64(src[:], rng.Uint64N(1<<20))
			}
			from := 8 * rng.IntN(8)
			if ref.key&(LineSize-1) != ctrlFull {
				ref.writeLine(&bsRef, src[:], from)
			} else {
				copy(bsRef[ref.word][from:], src[:])
			}
			c.write(&bs, src[:], from)
			if c.key != ref.key || (c.key&(LineSize-1) != ctrlFull && c.word != ref.word) || len(bs) != len(bsRef) {
				t.Fatalf("round %d store %d (word %d = %x): entry %#x/%d with %d full lines, the line's bytes make %#x/%d with %d",
					round, k, from/8, src, uint64(c.key), c.word, len(bs), uint64(ref.key), ref.word, len(bsRef))
			}
			at := 8 * rng.IntN(8)
			got, want := make([]byte, 8), make([]byte, LineSize)
			c.read(bs, got, at)
			ref.read(bsRef, want, 0)
			if !bytes.Equal(got, want[at:at+8]) {
				t.Fatalf("round %d: word at %d reads %x, the line holds %x", round, at, got, want[at:at+8])
			}
		}
	}
}
