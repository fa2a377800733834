package loggops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// schedFromBytes builds a small GOAL schedule from fuzz input: 1-4 ranks,
// sends, receives (sometimes with wildcards) and calcs on 2 CPUs, and
// random dependencies on earlier operations.
func schedFromBytes(data []byte) string {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	n := 1 + next()%4
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\n", n)
	for r := range n {
		fmt.Fprintf(&b, "rank %d {\n", r)
		ops := next() % 8
		for i := range ops {
			x := next()
			size := []int{0, 1, 8, 1000, 70000}[next()%5]
			peer := next() % n
			switch x % 3 {
			case 0:
				fmt.Fprintf(&b, "o%d: send %db to %d tag %d cpu %d\n", i, size, peer, x/3%2, x/6%2)
			case 1:
				src, tag := fmt.Sprint(peer), fmt.Sprint(x/3%2)
				if x/6%4 == 0 {
					src = "-1"
				}
				if x/24%4 == 0 {
					tag = "-1"
				}
				fmt.Fprintf(&b, "o%d: recv %db from %s tag %s cpu %d\n", i, size, src, tag, x/96%2)
			default:
				fmt.Fprintf(&b, "o%d: calc %d cpu %d\n", i, size, x/3%2)
			}
			for range next() % 3 {
				d := next()
				kind := "requires"
				if d%4 == 0 {
					kind = "irequires"
				}
				fmt.Fprintf(&b, "o%d %s o%d\n", i, kind, d/4%(i+1))
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// FuzzRun checks, on random schedules, that a run never panics or hangs,
// fails only with a deadlock, is deterministic, and gives the same result
// when every dependency line is moved to the end of its rank block (so the
// streaming window differs).
func FuzzRun(f *testing.F) {
	f.Add([]byte{1, 2, 0, 3, 0, 0, 2, 1, 1, 0, 0})
	f.Add([]byte{3, 3, 0, 2, 1, 1, 1, 2, 4, 5, 0, 4, 4, 1, 2, 3, 9, 9, 9, 1, 4})
	f.Add([]byte("a fairly long seed to get several ranks and operations going in the fuzzer"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text := schedFromBytes(data)
		p := testParams()
		a, errA := runText(t, text, p)
		b, errB := runText(t, depsLast(text), p)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("streaming changed the outcome: %v vs %v\n%s", errA, errB, text)
		}
		if errA != nil {
			if !errors.Is(errA, ErrDeadlock) || !errors.Is(errB, ErrDeadlock) {
				t.Fatalf("unexpected errors %v, %v\n%s", errA, errB, text)
			}
			return
		}
		if !equalResults(a, b) {
			t.Fatalf("deps-last result %v differs from %v\n%s", b.Finish, a.Finish, text)
		}
		c, err := runText(t, text, p)
		if err != nil || !equalResults(a, c) {
			t.Fatalf("second run differs: %v", err)
		}
	})
}
