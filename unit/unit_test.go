package unit

import (
	"math"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want Bytes
		bad  bool
	}{
		{"64B", 64, false}, {"2KiB", 2048, false}, {"8MiB", 8 << 20, false}, {"4096", 4096, false},
		{"1.5KiB", 1536, false}, {"2 KiB", 2048, false}, {"1MB", 1e6, false}, {"0", 0, false},
		{"-1KiB", 0, true}, {"1.3B", 0, true}, {"KiB", 0, true}, {"3 parsecs", 0, true}, {"1e30GiB", 0, true},
		// A fraction of a byte too small for a float64 (it read as 0 and
		// was taken: run.mem_limit = 1e-400B ran as "0 = the memory
		// available now") is not a whole number of bytes, as 1e-30B is;
		// zero written any way is zero.
		{"1e-400B", 0, true}, {"1e-400KiB", 0, true}, {"0.000e-400B", 0, false}, {"-0B", 0, false}, {"0e5B", 0, false},
		{"1e400B", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		bad  bool
	}{
		{"100Gbps", 12.5e9, false}, {"200Gbps", 25e9, false}, {"28GB/s", 28e9, false},
		{"56Gb/s", 7e9, false}, {"1GiB/s", 1 << 30, false},
		{"0Gbps", 0, true}, {"-5Gbps", 0, true}, {"100", 0, true}, {"fastGbps", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseRate(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, bad=%v", tc.in, float64(got), err, float64(tc.want), tc.bad)
		}
	}
	// Past a float64 either way is out of range, not "malformed" (1e400)
	// or "must be positive" (1e-400, which is), and the message names the
	// bound the value is past: a tiny rate was told "at most 2.2e+307".
	for _, tc := range []struct{ in, bound string }{
		{"1e400Gbps", "at most"}, {"1e-400GB/s", "below the smallest"}, {"4e-324bps", "below the smallest"},
	} {
		if _, err := ParseRate(tc.in); err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), tc.bound) {
			t.Errorf("ParseRate(%q): %v, want out of range, %s", tc.in, err, tc.bound)
		}
	}
}

// A frequency past a float64 is out of range, as a rate is, naming the
// bound it is past: 1e400GHz is positive, not "must be a positive number".
func TestParseFreqOutOfRange(t *testing.T) {
	for _, tc := range []struct{ in, bound string }{
		{"1e400GHz", "at most"}, {"1e-400GHz", "below the smallest"}, {"4e-324Hz", ""}, {"1e308GHz", "at most"},
	} {
		_, err := ParseFreq(tc.in)
		if tc.bound == "" {
			if err != nil {
				t.Errorf("ParseFreq(%q): %v, want accepted", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), tc.bound) {
			t.Errorf("ParseFreq(%q): %v, want out of range, %s", tc.in, err, tc.bound)
		}
	}
	for _, in := range []string{"0GHz", "-1GHz", "-1e-400GHz", "NaNGHz"} {
		if _, err := ParseFreq(in); err == nil || strings.Contains(err.Error(), "out of range") {
			t.Errorf("ParseFreq(%q): %v, want refused, not out of range", in, err)
		}
	}
}

func TestTransferTime(t *testing.T) {
	r := Rate(12.5e9) // 100 Gbps
	if got := r.TransferTime(2048 + 64); got != 168960*sim.Picosecond {
		t.Fatalf("2112 B at 100Gbps = %v, want 168.96ns", got)
	}
	if r.TransferTime(0) != 0 {
		t.Fatal("zero bytes must take no time")
	}
}

func FuzzParseBytesRoundTrip(f *testing.F) {
	for _, s := range []string{"2KiB", "0", "17", "1.5MiB", "x", "-3B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBytes(s)
		if err != nil {
			return
		}
		if b < 0 {
			t.Fatalf("%q parsed to negative %d", s, b)
		}
		back, err := ParseBytes(b.String())
		if err != nil || back != b {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, b, b.String(), back, err)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"100Gbps", "28GB/s", "", "1e9bps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err == nil && !(r > 0) {
			t.Fatalf("%q parsed to non-positive rate %v", s, float64(r))
		}
		if err == nil {
			back, err := ParseRate(r.String())
			if err != nil || abs(float64(back)-float64(r)) > 1e-9*float64(r) {
				t.Fatalf("%q -> %v -> %q -> %v, %v", s, float64(r), r.String(), float64(back), err)
			}
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// FuzzParseFreq checks that ParseFreq never panics and that an accepted
// frequency prints in a form that parses back to it.
func FuzzParseFreq(f *testing.F) {
	for _, s := range []string{"1.5GHz", "800MHz", "1Hz", "0Hz", "-1GHz", "1e30GHz", "NaNGHz", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseFreq(s)
		if err != nil {
			return
		}
		back, err := ParseFreq(v.String())
		if err != nil {
			t.Fatalf("%q → %v prints %q, refused: %v", s, v, v.String(), err)
		}
		if back != v && math.Abs(float64(back-v)) > 1e-9*math.Abs(float64(v)) {
			t.Fatalf("%q → %v → %q → %v", s, v, v.String(), back)
		}
	})
}

// A number that is finite but overflows once scaled by its unit is refused
// (found by FuzzParseFreq: "1e300GHz" had become +Inf Hz).
func TestScaledOverflowRefused(t *testing.T) {
	if f, err := ParseFreq("1e300GHz"); err == nil {
		t.Errorf("ParseFreq(1e300GHz) = %v, want an out-of-range error", f)
	}
	if r, err := ParseRate("1e306Tbps"); err == nil {
		t.Errorf("ParseRate(1e306Tbps) = %v, want an out-of-range error", r)
	}
	if r, err := ParseRate("2.27e307B/s"); err == nil {
		t.Errorf("ParseRate(2.27e307B/s) = %v, whose bits per second overflow; want an out-of-range error", float64(r))
	}
	if _, err := ParseFreq("1e9GHz"); err != nil {
		t.Errorf("ParseFreq(1e9GHz): %v", err)
	}
}
