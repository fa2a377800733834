package exp

import (
	"strings"
	"testing"
)

// FuzzSpTSSlowdowns: the calibration table parser accepts exactly five
// percents in [0, 1000] (one per class) and returns them as fractions; anything else is an
// error naming the field, never a panic.
func FuzzSpTSSlowdowns(f *testing.F) {
	f.Add("1,5.5,9.3,7,2.9")
	f.Add("1,2")
	f.Add("a,b,c,d")
	f.Add("-1,0,0,0")
	f.Fuzz(func(t *testing.T, list string) {
		s := SpTSSpec{L2OffSlowdown: list}
		got, err := s.slowdowns()
		if list == "" && got == nil && err == nil {
			return
		}
		if err != nil {
			if !strings.Contains(err.Error(), "spts.l2off_slowdown") {
				t.Fatalf("error does not name the field: %v", err)
			}
			return
		}
		if len(got) != 5 {
			t.Fatalf("%q: %d values accepted", list, len(got))
		}
		for _, v := range got {
			if !(v >= 0 && v <= 10) {
				t.Fatalf("%q: fraction %g out of range", list, v)
			}
		}
	})
}
