package shmem

import "testing"

// A count reads as its PE started (init, own 0) until its chunk is made
// by a change, which makes only that chunk, with its other PEs' counts as
// they started.
func TestGIOCountsMadeAtFirstChange(t *testing.T) {
	const npes, own, init = 40, 17, 64
	c := newGIOCounts(npes, own, init)
	for pe := range npes {
		want := uint32(init)
		if pe == own {
			want = 0
		}
		if got := c.at(pe); got != want {
			t.Fatalf("PE %d starts at %d, want %d", pe, got, want)
		}
	}
	*c.ref(20)-- // chunk 1: PEs 16..31, own among them
	*c.ref(20)--
	*c.ref(own)++
	made := 0
	for _, ch := range c.chunks {
		if ch != nil {
			made++
		}
	}
	if made != 1 || c.chunks[1] == nil {
		t.Fatalf("%d chunks made (chunk 1: %v), want only chunk 1", made, c.chunks[1] != nil)
	}
	for pe, want := range map[int]uint32{20: init - 2, own: 1, 16: init, 31: init, 15: init, 32: init, 39: init} {
		if got := c.at(pe); got != want {
			t.Errorf("PE %d: %d, want %d", pe, got, want)
		}
	}
}
