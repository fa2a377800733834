package loggops

import (
	"errors"
	"testing"
)

// FuzzParamsSet checks that Set refuses a bad value with ErrBadParam and
// never panics, and that an accepted value leaves the parameters
// non-negative.
func FuzzParamsSet(f *testing.F) {
	names := []string{"L", "o", "g", "G", "O", "S", "calc", "compat", "x"}
	for i, v := range []string{"700ns", "-1ns", "9223372036854775807ps", "25GB/s", "0.04ns", "1e-30GB/s", "64KiB", "loggopsim", "", "NaN"} {
		f.Add(i, v)
	}
	f.Fuzz(func(t *testing.T, i int, value string) {
		name := names[uint(i)%uint(len(names))]
		p := DefaultParams()
		if err := p.Set(name, value); err != nil {
			if !errors.Is(err, ErrBadParam) {
				t.Fatalf("Set(%s, %q): %v does not wrap ErrBadParam", name, value, err)
			}
			return
		}
		if p.L < 0 || p.O < 0 || p.Gap < 0 || p.CalcUnit < 0 {
			t.Fatalf("Set(%s, %q) accepted a negative duration: %+v", name, value, p)
		}
	})
}
