package shmem

import "testing"

// Step 5's quiets fall on the ends of blocks of quiet_rounds rounds,
// counted from the thread's start whether or not anything was pending: an
// entry found after an idle stretch is quieted at the end of its block,
// not at the end of the round that issued it (rounds slept through by a
// coherent-cache helper count too).
func TestQuietClockBlocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every int
		slept int // rounds slept through before the polled ones
		want  []int
	}{
		{"every 4", 4, 0, []int{4, 8, 12}},
		{"every 4 after 10 slept rounds", 4, 10, []int{2, 6, 10}},
		{"every round", 1, 0, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"every 5 after 7 slept rounds", 5, 7, []int{3, 8}},
	} {
		var c quietClock
		c.skip(tc.slept, tc.every)
		var got []int
		for r := 1; r <= 12; r++ {
			if c.endRound(tc.every) {
				got = append(got, r)
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: block ends at rounds %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: block ends at rounds %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}
