package nic

import (
	"math/rand/v2"
	"testing"
)

// TestRegQueueMatchesFIFO: the waiting registrations kept as runs pop in
// the order, and with the tags, indices and thresholds, a plain FIFO of
// them gives, whatever mix of block runs, gaps, other blocks, single
// commands and interleaved pops.
func TestRegQueueMatchesFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := []*CommandBlock{NewCommandBlock(nil), NewCommandBlock(nil)}
	for round := range 200 {
		var q regQueue
		var ref []trigReg
		next := map[*CommandBlock]int{}
		for k := range 300 {
			if q.Len() != len(ref) {
				t.Fatalf("round %d: Len %d, want %d", round, q.Len(), len(ref))
			}
			if len(ref) > 0 && rng.IntN(3) == 0 {
				got, want := q.Pop(), ref[0]
				ref = ref[1:]
				if got != want {
					t.Fatalf("round %d step %d: popped %+v, want %+v", round, k, got, want)
				}
				continue
			}
			var r trigReg
			switch rng.IntN(6) {
			case 0: // a command of its own
				c := Command{}
				r = trigReg{tag: uint64(rng.IntN(50)), op: trigOp{one: &c}, threshold: 1}
			default: // the next of a block, sometimes with a gap or another threshold
				b := blocks[rng.IntN(len(blocks))]
				i := next[b]
				if rng.IntN(8) == 0 {
					i += 2
				}
				next[b] = i + 1
				th := uint64(1)
				if rng.IntN(10) == 0 {
					th = 2
				}
				r = trigReg{tag: 1000 + uint64(i) + uint64(rng.IntN(20)/19), op: trigOp{blk: b, i: i}, threshold: th}
			}
			q.Push(r)
			ref = append(ref, r)
		}
		for len(ref) > 0 {
			if got := q.Pop(); got != ref[0] {
				t.Fatalf("round %d drain: popped %+v, want %+v", round, got, ref[0])
			}
			ref = ref[1:]
		}
		if q.Len() != 0 {
			t.Fatalf("round %d: Len %d after draining", round, q.Len())
		}
	}
}

// TestEntryTableMatchesMap: the live-entry table (a list, a map once it
// outgrows smallEntries) finds, adds and drops entries as a map does, through
// growth past the list's size (memlist) and shrinking.
func TestEntryTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 50 {
		var tb entryTable
		ref := map[uint64]*trigEntry{}
		limit := 8 + rng.IntN(4*smallEntries)
		for k := range 2000 {
			tag := uint64(rng.IntN(3 * limit))
			got, want := tb.get(tag), ref[tag]
			if got != want {
				t.Fatalf("round %d step %d: get(%d) = %p, want %p", round, k, tag, got, want)
			}
			switch {
			case want == nil && len(ref) < limit:
				e := &trigEntry{tag: tag}
				tb.put(e)
				ref[tag] = e
			case want != nil && rng.IntN(2) == 0:
				tb.del(want)
				delete(ref, tag)
			}
			if tb.len() != len(ref) {
				t.Fatalf("round %d step %d: len %d, want %d", round, k, tb.len(), len(ref))
			}
		}
	}
}
