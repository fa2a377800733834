package unit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Bytes is a size in bytes.
type Bytes int64

// Size constants.
const (
	B   Bytes = 1
	KiB       = 1024 * B
	MiB       = 1024 * KiB
	GiB       = 1024 * MiB
)

// Rate is a data rate in bytes per second.
type Rate float64

// Errors returned by the parsers; wrapped with the offending text.
var (
	ErrBadSize = errors.New("bad size")
	ErrBadRate = errors.New("bad rate")
)

var sizeUnits = map[string]float64{
	"": 1, "b": 1, "B": 1,
	"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30,
}

// ParseBytes parses a size such as "64B", "2KiB", "8MiB", "1.5MB" or a bare
// byte count "4096". The result must be a whole, non-negative number of bytes.
func ParseBytes(s string) (Bytes, error) {
	num, u := splitNumber(s)
	mult, ok := sizeUnits[u]
	if !ok || num == "" {
		return 0, fmt.Errorf("%w %q: want a number with B, KiB, MiB, GiB, KB, MB or GB (e.g. \"2KiB\")", ErrBadSize, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if math.IsInf(v, 0) && errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%w %q: too large", ErrBadSize, s)
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w %q: malformed number", ErrBadSize, s)
	}
	if v == 0 && nonzeroMantissa(num) {
		// Too small for a float64 (1e-400): read as 0 it was taken, as
		// "0 = none" where a parameter allows 0; it is a fraction of a
		// byte, as 1e-30 is.
		return 0, fmt.Errorf("%w %q: not a whole number of bytes", ErrBadSize, s)
	}
	total := v * mult
	if total < 0 {
		return 0, fmt.Errorf("%w %q: must not be negative", ErrBadSize, s)
	}
	if total > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w %q: too large", ErrBadSize, s)
	}
	if total != math.Trunc(total) {
		return 0, fmt.Errorf("%w %q: not a whole number of bytes", ErrBadSize, s)
	}
	return Bytes(total), nil
}

// String prints b with the largest binary unit that divides it exactly.
func (b Bytes) String() string {
	switch {
	case b != 0 && b%GiB == 0:
		return fmt.Sprintf("%dGiB", b/GiB)
	case b != 0 && b%MiB == 0:
		return fmt.Sprintf("%dMiB", b/MiB)
	case b != 0 && b%KiB == 0:
		return fmt.Sprintf("%dKiB", b/KiB)
	}
	return fmt.Sprintf("%dB", int64(b))
}

var rateUnits = map[string]float64{
	"bps": 1.0 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
	"Gb/s": 1e9 / 8, "Mb/s": 1e6 / 8,
	"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30,
}

// maxRate is the largest rate in bytes per second whose value in bits
// per second is still a finite float64.
const maxRate = math.MaxFloat64 / 8

// ParseRate parses a data rate: bits per second ("100Gbps", "56Gb/s") or
// bytes per second ("28GB/s", "50GiB/s"). It must be positive and finite.
func ParseRate(s string) (Rate, error) {
	num, u := splitNumber(s)
	mult, ok := rateUnits[u]
	if !ok || num == "" {
		return 0, fmt.Errorf("%w %q: want a number with Gbps, Mbps, GB/s, MB/s or GiB/s (e.g. \"100Gbps\")", ErrBadRate, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if large, small := floatPast(num, v, err); large || small {
		// 1e400Gbps or 1e-400Gbps: past a float64, not malformed and
		// not zero.
		return 0, rangeError(ErrBadRate, s, small, maxRate, "bytes/s")
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w %q: malformed number", ErrBadRate, s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%w %q: must be positive", ErrBadRate, s)
	}
	// At most what still prints in bits per second (×8 stays finite).
	r := v * mult
	if r > 0 && r <= maxRate {
		return Rate(r), nil
	}
	return 0, rangeError(ErrBadRate, s, r == 0, maxRate, "bytes/s")
}

// floatPast reports whether num, which strconv.ParseFloat read as v with
// err, lies past a float64: above the largest (large: read as +Inf) or a
// positive value below the smallest (small: read as 0).
func floatPast(num string, v float64, err error) (large, small bool) {
	large = math.IsInf(v, 1) && errors.Is(err, strconv.ErrRange)
	small = v == 0 && nonzeroMantissa(num) && !strings.HasPrefix(num, "-")
	return large, small
}

// rangeError is kind's "out of range" for s, naming the bound s is past:
// the largest value largest (in unit), or, when small, the smallest positive
// float64 (a tiny value was told "at most" the largest).
func rangeError(kind error, s string, small bool, largest float64, unit string) error {
	if small {
		return fmt.Errorf("%w %q: out of range (below the smallest positive number, %g %s)", kind, s, math.SmallestNonzeroFloat64, unit)
	}
	return fmt.Errorf("%w %q: out of range (at most %g %s)", kind, s, largest, unit)
}

// String prints r in Gbps when that is a whole number ("100Gbps"), else in
// GB/s ("136.512GB/s"); either form parses back to the same value.
func (r Rate) String() string {
	gbps := float64(r) * 8 / 1e9
	if gbps == math.Trunc(gbps) {
		return strconv.FormatFloat(gbps, 'f', -1, 64) + "Gbps"
	}
	return strconv.FormatFloat(float64(r)/1e9, 'g', -1, 64) + "GB/s"
}

// BytesPerSecond returns r as a float.
func (r Rate) BytesPerSecond() float64 { return float64(r) }

// TransferTime is the time to move n bytes at rate r, rounded up to whole
// picoseconds. A zero-byte transfer takes no time.
func (r Rate) TransferTime(n Bytes) sim.Duration {
	if n <= 0 {
		return 0
	}
	return sim.FromPicoseconds(math.Ceil(float64(n) * 1e12 / float64(r)))
}

// PerByte returns the time per byte at rate r in picoseconds (fractional).
func (r Rate) PerByte() float64 { return 1e12 / float64(r) }

// ParseDuration parses a duration with a unit; see sim.ParseDuration.
func ParseDuration(s string) (sim.Duration, error) { return sim.ParseDuration(s) }

// splitNumber splits "12.5GiB" into "12.5" and "GiB", trimming spaces.
func splitNumber(s string) (num, unit string) {
	str := strings.TrimSpace(s)
	i := 0
	for i < len(str) && (str[i] == '.' || str[i] == '-' || str[i] == '+' || str[i] == 'e' && i > 0 && isDigit(str[i-1]) || isDigit(str[i])) {
		i++
	}
	return str[:i], strings.TrimSpace(str[i:])
}

// nonzeroMantissa reports whether the decimal number num has a nonzero
// digit before its exponent.
func nonzeroMantissa(num string) bool {
	m, _, _ := strings.Cut(strings.ToLower(num), "e")
	return strings.ContainsAny(m, "123456789")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Freq is a clock frequency in hertz.
type Freq float64

// ErrBadFreq reports a malformed frequency.
var ErrBadFreq = errors.New("bad frequency")

var freqUnits = map[string]float64{"Hz": 1, "KHz": 1e3, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}

// ParseFreq parses a frequency such as "1.5GHz" or "800MHz"; it must be
// positive.
func ParseFreq(s string) (Freq, error) {
	num, u := splitNumber(s)
	mult, ok := freqUnits[u]
	if !ok || num == "" {
		return 0, fmt.Errorf("%w %q: want a number with Hz, MHz or GHz (e.g. \"1.5GHz\")", ErrBadFreq, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if large, small := floatPast(num, v, err); large || small {
		// 1e400GHz is a positive number, past a float64 (as a rate).
		return 0, rangeError(ErrBadFreq, s, small, math.MaxFloat64, "Hz")
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("%w %q: must be a positive number", ErrBadFreq, s)
	}
	f := v * mult
	if !math.IsInf(f, 0) && f > 0 {
		return Freq(f), nil
	}
	return 0, rangeError(ErrBadFreq, s, f == 0, math.MaxFloat64, "Hz")
}

// String prints f in GHz or MHz.
func (f Freq) String() string {
	if f >= 1e9 {
		return strconv.FormatFloat(float64(f)/1e9, 'g', -1, 64) + "GHz"
	}
	return strconv.FormatFloat(float64(f)/1e6, 'g', -1, 64) + "MHz"
}

// Cycles returns the duration of n cycles at f, rounded to the nearest
// picosecond.
func (f Freq) Cycles(n float64) sim.Duration {
	return sim.FromPicoseconds(n * 1e12 / float64(f))
}

// MarshalText implements encoding.TextMarshaler.
func (f Freq) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Freq) UnmarshalText(b []byte) error {
	v, err := ParseFreq(string(b))
	if err == nil {
		*f = v
	}
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(text []byte) error {
	v, err := ParseBytes(string(text))
	if err == nil {
		*b = v
	}
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Rate) UnmarshalText(text []byte) error {
	v, err := ParseRate(string(text))
	if err == nil {
		*r = v
	}
	return err
}
