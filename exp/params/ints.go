package params

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxListLen bounds how many integers one list may expand to, so that a
// typo such as "2-2000000000" fails instead of exhausting memory.
const MaxListLen = 1 << 16

// ParseInts parses a comma list of integers and ranges: "2,3,5",
// "2-64/2" (from 2 to 64 in steps of 2), "1-4" (step 1), or a mix. Spaces
// around items are ignored; an empty string is an empty list. A range must
// not run backwards and its step must be positive.
func ParseInts(s string) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		bad := func(why string) error {
			return fmt.Errorf("%w %q in %q: %s; want comma-separated integers or ranges like 2-64/2", ErrBadValue, item, s, why)
		}
		if item == "" {
			return nil, bad("empty item")
		}
		rng, step := item, "1"
		if r, st, ok := strings.Cut(item, "/"); ok {
			rng, step = r, st
		}
		lo, hi := rng, rng
		if rng == "" {
			return nil, bad("no number")
		}
		if i := strings.Index(rng[1:], "-"); i >= 0 { // rng[0] may be a minus sign
			lo, hi = rng[:i+1], rng[i+2:]
		} else if step != "1" {
			return nil, bad("a step needs a range")
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		d, err3 := strconv.Atoi(strings.TrimSpace(step))
		switch {
		case err1 != nil || err2 != nil || err3 != nil:
			return nil, bad("not an integer")
		case b < a:
			return nil, bad("range runs backwards")
		case d < 1:
			return nil, bad("step must be positive")
		case uint64(b-a)/uint64(d)+1 > uint64(MaxListLen-len(out)):
			return nil, bad(fmt.Sprintf("expands to more than %d values", MaxListLen))
		}
		for n := a; ; n += d {
			out = append(out, n)
			if uint64(b-n) < uint64(d) {
				break
			}
		}
	}
	return out, nil
}

// FormatInts prints ns so that ParseInts reads them back: runs of at least
// three equally spaced increasing values become ranges ("2-64/2", "1-4").
func FormatInts(ns []int) string {
	var b strings.Builder
	for i := 0; i < len(ns); {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		j := i + 1
		if d := step(ns, i); d > 0 && step(ns, i+1) == d {
			for j < len(ns) && step(ns, j-1) == d {
				j++
			}
			b.WriteString(strconv.Itoa(ns[i]) + "-" + strconv.Itoa(ns[j-1]))
			if d != 1 {
				b.WriteString("/" + strconv.Itoa(d))
			}
		} else {
			b.WriteString(strconv.Itoa(ns[i]))
		}
		i = j
	}
	return b.String()
}

// step returns ns[i+1]-ns[i] when both exist and ns[i+1] > ns[i] without
// overflow, else 0.
func step(ns []int, i int) int {
	if i+1 >= len(ns) || ns[i+1] <= ns[i] || ns[i+1]-ns[i] <= 0 {
		return 0
	}
	return ns[i+1] - ns[i]
}
