package exp

import "testing"

// parseProcs takes rows x cols of at most 65536 nodes; a product that
// wraps int64 (2^32 x 2^32 = 0, 2^32+1 x 2^32 = 2^32) is refused, not
// let through to the memory estimate.
func TestParseProcs(t *testing.T) {
	for _, c := range []struct {
		in         string
		rows, cols int
		ok         bool
	}{
		{"4x4", 4, 4, true},
		{"3X5", 3, 5, true},
		{"1x65536", 1, 65536, true},
		{"256x257", 0, 0, false},
		{"0x4", 0, 0, false},
		{"4", 0, 0, false},
		{"4294967296x4294967296", 0, 0, false},
		{"4294967297x4294967296", 0, 0, false},
		{"9223372036854775807x2", 0, 0, false},
		{"-4x-4", 0, 0, false},
	} {
		r, k, err := parseProcs(c.in)
		if (err == nil) != c.ok || r != c.rows || k != c.cols {
			t.Errorf("parseProcs(%q) = %d, %d, %v; want %d, %d, ok %v", c.in, r, k, err, c.rows, c.cols, c.ok)
		}
	}
}
