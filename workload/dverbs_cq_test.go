package workload

import "testing"

// TestMostConnected checks the peer count the device-verbs world sizes
// its CQs for: the distinct ranks a rank shares a connection with,
// whichever end lists the pair, not the length of its own list.
func TestMostConnected(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks int
		peers map[int][]int
		want  int
	}{
		{"ring", 4, map[int][]int{0: {1, 3}, 1: {2, 0}, 2: {3, 1}, 3: {0, 2}}, 2},
		{"listed by the other end", 4, map[int][]int{0: {1, 2, 3}}, 3},
		{"duplicates and self", 3, map[int][]int{0: {1, 1, 0}, 1: {0}}, 1},
		{"star from the leaves", 5, map[int][]int{1: {0}, 2: {0}, 3: {0}, 4: {0}}, 4},
		{"none", 2, map[int][]int{}, 0},
	} {
		if got := mostConnected(c.ranks, func(r int) []int { return c.peers[r] }); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
