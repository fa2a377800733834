package shmem

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestSeenWordsMatchesMap checks the helper's word table against a Go
// map: puts of 8-aligned words (address 0 included) and overwrites, every
// word looked up after each step, through several growths.
func TestSeenWordsMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s seenWords
		want := map[mem.Addr]uint64{}
		span := rapid.IntRange(1, 300).Draw(t, "words")
		for range rapid.IntRange(0, 500).Draw(t, "steps") {
			a := mem.Addr(rapid.IntRange(0, span).Draw(t, "word")) * 8
			v := rapid.Uint64().Draw(t, "value")
			s.put(a, v)
			want[a] = v
			if s.n != len(want) {
				t.Fatalf("%d words, want %d", s.n, len(want))
			}
		}
		for k := 0; k <= span+1; k++ {
			a := mem.Addr(k) * 8
			got, ok := s.get(a)
			w, wok := want[a]
			if ok != wok || got != w {
				t.Fatalf("get(%#x) = %d, %v; want %d, %v", a, got, ok, w, wok)
			}
		}
	})
}
