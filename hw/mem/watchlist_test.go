package mem

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

// The blocked watch list behaves as one sorted list: after inserts in
// random order, every range (random, or ascending as landing packets go)
// visits exactly the watched lines inside it,
// ascending, and the blocks stay sorted, non-empty and bounded. Its
// summary says "none" exactly for the ranges whose summary chunks hold no
// watched line.
func TestWatchListMatchesSortedList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		const base = 1 << 20
		wl := watchList{base: base}
		var ref []Addr
		sigs := map[*sim.Signal]Addr{}
		for range 50 + round*60 {
			l := base + Addr(rng.IntN(4000))*LineSize
			if slices.Contains(ref, l) {
				continue
			}
			s := new(sim.Signal)
			sigs[s] = l
			wl.insert(watch{line: l, sig: s})
			ref = append(ref, l)
		}
		slices.Sort(ref)
		var all []Addr
		for _, b := range wl.blocks {
			if len(b) == 0 || len(b) > watchBlock {
				t.Fatalf("block of %d entries", len(b))
			}
			for _, w := range b {
				all = append(all, w.line)
			}
		}
		if !slices.Equal(all, ref) {
			t.Fatalf("round %d: list %v, want %v", round, all, ref)
		}
		prev := Addr(base)
		for k := range 300 {
			// Random ranges, and ascending runs of adjacent ones (packets
			// landing in order: each's hint path), some starting inside a
			// line, with inserts between runs (a stale hint).
			lo := base + Addr(rng.IntN(4100))*LineSize
			if k%3 != 0 {
				lo = prev + Addr(rng.IntN(3))*LineSize/2
			}
			hi := lo + Addr(rng.IntN(300*LineSize))
			prev = hi
			if k%50 == 49 {
				if l := base + Addr(rng.IntN(4000))*LineSize; !slices.Contains(ref, l) {
					s := new(sim.Signal)
					sigs[s] = l
					wl.insert(watch{line: l, sig: s})
					ref = append(ref, l)
					slices.Sort(ref)
				}
			}
			if k%50 == 25 || k%50 == 26 {
				// Forget a watched line (WatchOnce's removal): the list
				// and the summary must stay exact.
				if len(ref) > 0 {
					j := rng.IntN(len(ref))
					wl.remove(ref[j])
					ref = slices.Delete(ref, j, j+1)
				}
			}
			var got, want []Addr
			wl.each(lo, hi, func(s *sim.Signal) { got = append(got, sigs[s]) }, nil)
			for _, l := range ref {
				if l >= lo && l < hi {
					want = append(want, l)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("[%d, %d): visited %v, want %v", lo, hi, got, want)
			}
			chunked := false // a watched line in one of the chunks [lo, hi) touches
			for _, l := range ref {
				if hi > lo && (l-base)/watchGrain >= (lo-base)/watchGrain && (l-base)/watchGrain <= (hi-1-base)/watchGrain {
					chunked = true
				}
			}
			if got := wl.maybe(lo, hi); got != chunked {
				t.Fatalf("[%d, %d): summary says %v, want %v (watched inside: %v)", lo, hi, got, chunked, want)
			}
		}
	}
}
