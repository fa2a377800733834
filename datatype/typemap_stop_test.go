package datatype

import (
	"testing"
	"time"
)

// A consumer that stops after a few blocks ends the walk at once, whatever
// the type's counts (vector and contiguous counts of 10^12 used to walk
// every element after the stop: hours).
func TestBlocksStopsEarlyOnHugeCounts(t *testing.T) {
	for _, text := range []string{
		"vector(1000000000000,1,2)<float64>",
		"contiguous(1000000000)<vector(1000,1,2)<float64>>",
		"hvector(1000,1000000000,16)<float64>",
	} {
		ty, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		start := time.Now()
		n := 0
		for range ty.Blocks(1) {
			if n++; n == 4 {
				break
			}
		}
		// Not a timing test: a full walk would take hours, not seconds.
		if n != 4 || time.Since(start) > 30*time.Second {
			t.Errorf("%s: %d blocks in %v", text, n, time.Since(start))
		}
	}
}

// BlocksWithin ends a walk whose blocks merge over too many elements and
// says so; with enough budget it is Blocks.
func TestBlocksWithinBoundsTheWalk(t *testing.T) {
	ty, err := Parse("vector(1000000,1000000,1000001)<vector(1,1,1)<int8>>")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	seq, truncated := ty.BlocksWithin(1000, 1<<20)
	for range seq {
		n++
	}
	if !truncated() || n != 1 {
		t.Errorf("huge merged blocks: %d blocks, truncated %v; want 1 block (the walk stopped inside the second), truncated", n, truncated())
	}
	small, err := Parse("vector(3,2,3)<vector(1,1,1)<int16>>")
	if err != nil {
		t.Fatal(err)
	}
	var got, want [][2]int
	seq, truncated = small.BlocksWithin(2, 1000)
	for off, l := range seq {
		got = append(got, [2]int{off, l})
	}
	for off, l := range small.Blocks(2) {
		want = append(want, [2]int{off, l})
	}
	if truncated() || len(got) != len(want) || len(got) == 0 {
		t.Fatalf("small type: %v (truncated %v), want %v", got, truncated(), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("block %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// BlocksWithin's budget also bounds the blocks a walk merges without
// descending into an element: a vector of abutting float64 blocks is one
// run of a million adds per element, which counted as one step, so a
// count of 10^6 (ddt inspect --count 1000000) merged 10^12 blocks: hours.
func TestBlocksWithinBoundsMergedRuns(t *testing.T) {
	ty, err := Parse("vector(100000,1,1)<float64>")
	if err != nil {
		t.Fatal(err)
	}
	seq, truncated := ty.BlocksWithin(1000, 1000)
	n := 0
	for range seq {
		n++
	}
	// The elements abut: one block, still growing when the budget ends
	// the walk, so none is complete.
	if !truncated() || n != 0 {
		t.Errorf("abutting runs of 1000 elements of 10^5 blocks: %d blocks, truncated %v; want none complete, truncated after 1000 steps", n, truncated())
	}
}
