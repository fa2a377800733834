package sim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Time is a point in simulated time, in picoseconds since the start of a run.
type Time int64

// Duration is a span of simulated time in picoseconds.
type Duration = Time

// Unit constants for Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// MaxTime is the largest representable simulated time.
const MaxTime Time = math.MaxInt64

// Seconds returns t as floating-point seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Micros returns t as floating-point microseconds.
func (t Time) Micros() float64 { return float64(t) / float64(Microsecond) }

// String prints t with the largest unit that keeps it readable, e.g. "1.5us",
// "100ns", "250ps". The output parses back with ParseDuration to the same
// value.
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		if t == math.MinInt64 {
			return "-9223372036854775808ps"
		}
		sign, v = "-", -v
	}
	units := []struct {
		name string
		ps   int64
	}{{"s", int64(Second)}, {"ms", int64(Millisecond)}, {"us", int64(Microsecond)}, {"ns", int64(Nanosecond)}}
	for _, u := range units {
		if v >= u.ps {
			whole, frac := v/u.ps, v%u.ps
			if frac == 0 {
				return fmt.Sprintf("%s%d%s", sign, whole, u.name)
			}
			digits := len(strconv.FormatInt(u.ps, 10)) - 1
			fs := strings.TrimRight(fmt.Sprintf("%0*d", digits, frac), "0")
			return fmt.Sprintf("%s%d.%s%s", sign, whole, fs, u.name)
		}
	}
	return fmt.Sprintf("%s%dps", sign, v)
}

// durationUnits are the units a duration takes. Microseconds are also
// written with the micro sign (U+00B5) and the Greek mu (U+03BC), which
// Unicode normalisation (NFKC) makes of it and some keyboards type:
// Go's time.ParseDuration reads both.
var durationUnits = map[string]int64{
	"ps": 1, "ns": 1000, "us": 1000_000, "\u00b5s": 1000_000, "\u03bcs": 1000_000, "ms": 1000_000_000, "s": 1000_000_000_000,
}

// ErrBadDuration reports a malformed duration string.
var ErrBadDuration = errors.New("bad duration")

// ErrDurationTooLarge reports a well-formed duration beyond MaxTime (about
// 106 days) in magnitude; ParseDuration wraps it in ErrBadDuration's error
// so a caller can name its own maximum rather than the format.
var ErrDurationTooLarge = errors.New("number too large")

// ParseDuration parses a duration with a unit: "1.5us", "100ns", "250ps",
// "2ms", "1s", "0", and with a decimal exponent, exactly: "1e6s", "2.5e-3us".
// A bare number is accepted only when it is zero. The result must be a whole
// number of picoseconds and must not overflow.
func ParseDuration(s string) (Time, error) {
	str := strings.TrimSpace(s)
	if str == "0" {
		return 0, nil
	}
	i := len(str)
	for i > 0 && !isDigitOrDot(str[i-1]) {
		i--
	}
	num, unit := strings.TrimSpace(str[:i]), strings.TrimSpace(str[i:])
	mult, ok := durationUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("%w %q: want a number with a unit ps, ns, us, ms or s (e.g. \"1.5us\")", ErrBadDuration, s)
	}
	v, err := parseScaled(num, mult)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %w", ErrBadDuration, s, err)
	}
	return Time(v), nil
}

func isDigitOrDot(c byte) bool { return c == '.' || (c >= '0' && c <= '9') }

// parseScaled parses a signed decimal number and multiplies it by mult
// exactly, failing on fractions that do not resolve to whole units and on
// overflow.
func parseScaled(num string, mult int64) (int64, error) {
	neg := false
	if strings.HasPrefix(num, "-") {
		neg, num = true, num[1:]
	} else if strings.HasPrefix(num, "+") {
		num = num[1:]
	}
	num, exp, hasExp := strings.Cut(strings.ToLower(num), "e")
	intPart, fracPart, _ := strings.Cut(num, ".")
	if intPart == "" && fracPart == "" {
		return 0, errors.New("no digits")
	}
	if hasExp {
		var err error
		if intPart, fracPart, err = shiftPoint(intPart, fracPart, exp); err != nil {
			return 0, err
		}
	}
	for _, part := range []string{intPart, fracPart} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("unexpected character %q", c)
			}
		}
	}
	var whole int64
	if intPart != "" {
		w, err := strconv.ParseInt(intPart, 10, 64)
		if err != nil {
			return 0, ErrDurationTooLarge
		}
		whole = w
	}
	if whole > math.MaxInt64/mult {
		return 0, ErrDurationTooLarge
	}
	v := whole * mult
	scale := mult
	for _, c := range fracPart {
		if scale%10 != 0 {
			if c != '0' {
				return 0, errors.New("finer than the smallest unit")
			}
			continue
		}
		scale /= 10
		add := int64(c-'0') * scale
		if v > math.MaxInt64-add {
			return 0, ErrDurationTooLarge
		}
		v += add
	}
	if neg {
		v = -v
	}
	return v, nil
}

// shiftPoint applies a decimal exponent to intPart.fracPart exactly, by
// moving the point, so "1.5e3" reads as "1500" and "25e-1" as "2.5": a
// duration with an exponent is the same exact number as one without.
func shiftPoint(intPart, fracPart, exp string) (string, string, error) {
	for _, part := range []string{intPart, fracPart} {
		if strings.ContainsFunc(part, func(c rune) bool { return c < '0' || c > '9' }) {
			return "", "", errors.New("bad mantissa")
		}
	}
	e, err := strconv.Atoi(exp)
	if err != nil || strings.HasPrefix(exp, "+-") {
		return "", "", fmt.Errorf("bad exponent %q", exp)
	}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	point := len(intPart) - (len(intPart+fracPart) - len(digits)) // the point's place in digits
	digits = strings.TrimRight(digits, "0")
	switch {
	case digits == "":
		return "0", "", nil
	case e > 40 || point+e > 40: // at least 1e39, past any unit's range
		return "", "", ErrDurationTooLarge
	case e < -40 || point+e < -40: // below 1e-41, finer than any unit
		return "", "", errors.New("finer than the smallest unit")
	}
	point += e
	switch {
	case point <= 0:
		return "0", strings.Repeat("0", -point) + digits, nil
	case point >= len(digits):
		return digits + strings.Repeat("0", point-len(digits)), "", nil
	}
	return digits[:point], digits[point:], nil
}

// MarshalText implements encoding.TextMarshaler with String's format.
func (t Time) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDuration.
func (t *Time) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err == nil {
		*t = v
	}
	return err
}
