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

// spts.rows = 0 runs each matrix at its reference's real size (the study's
// row counts, 0.32 M to 24 M), a positive value scales every matrix to it,
// and a value between is refused naming the field; the memory estimate
// follows each class's real rows.
func TestSpTSRealSize(t *testing.T) {
	s := defaultSpTS()
	s.Rows = 0
	if err := s.validate(); err != nil {
		t.Fatalf("spts.rows = 0 refused: %v", err)
	}
	want := map[string]int{"powerlaw": 2_394_000, "circuit": 321_000, "kkt": 8_354_000, "road": 23_950_000, "road_central": 14_080_000}
	for class, rows := range want {
		if got := s.rowsOf(class); got != rows {
			t.Errorf("%s at real size: %d rows, want %d", class, got, rows)
		}
	}
	s.Rows = 8192
	if got := s.rowsOf("kkt"); got != 8192 {
		t.Errorf("kkt scaled: %d rows, want 8192", got)
	}
	s.Rows = 32
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "spts.rows = 32: must be 0") {
		t.Errorf("spts.rows = 32: %v", err)
	}
}
