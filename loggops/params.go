package loggops

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// PerByte is a per-byte cost (LogGOPS G or O) in femtoseconds per byte, so
// that sub-picosecond costs such as 0.0025ns (400 GB/s) stay exact integers.
type PerByte int64

// Femtoseconds per picosecond.
const fsPerPs = 1000

// String prints p as a duration per byte, e.g. "40ps" or "2.5ps".
func (p PerByte) String() string {
	if p%fsPerPs == 0 {
		return sim.Time(p / fsPerPs).String()
	}
	return fmt.Sprintf("%dfs", int64(p))
}

// ErrBadParam reports a malformed or out-of-range LogGOPS parameter.
var ErrBadParam = errors.New("loggops: bad parameter")

// ParsePerByte parses a per-byte cost: a duration per byte with a unit
// ("0.04ns", "40ps", "2.5ps", "25fs", "0") or a bandwidth ("25GB/s",
// "100Gbps"), converted to the nearest femtosecond per byte.
func ParsePerByte(s string) (PerByte, error) {
	str := strings.TrimSpace(s)
	if str == "0" {
		return 0, nil
	}
	if strings.Contains(str, "/s") || strings.HasSuffix(str, "bps") {
		r, err := unit.ParseRate(str)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrBadParam, err)
		}
		exact := 1e15 / r.BytesPerSecond()
		fs := math.Round(exact)
		if fs > math.MaxInt64/4 {
			return 0, fmt.Errorf("%w %q: rate too low", ErrBadParam, s)
		}
		if exact < 1 {
			// Under a femtosecond per byte: refused as a time per byte
			// below a femtosecond is ("0.6fs"). Rounded, 1500TB/s would
			// run at 1000TB/s and above 2000TB/s every byte would be free.
			return 0, fmt.Errorf("%w %q: finer than a femtosecond per byte (want at most 1000TB/s)", ErrBadParam, s)
		}
		return PerByte(fs), nil
	}
	i := len(str)
	for i > 0 && !(str[i-1] == '.' || str[i-1] >= '0' && str[i-1] <= '9') {
		i--
	}
	num, u := str[:i], strings.TrimSpace(str[i:])
	mult := map[string]int64{"fs": 1, "ps": 1e3, "ns": 1e6, "us": 1e9, "µs": 1e9, "ms": 1e12}[u]
	if mult == 0 || num == "" {
		return 0, fmt.Errorf("%w %q: want a time per byte with a unit fs, ps, ns or us (e.g. \"0.04ns\") or a rate (e.g. \"25GB/s\")", ErrBadParam, s)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("%w %q: malformed number", ErrBadParam, s)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("%w %q: finer than a femtosecond", ErrBadParam, s)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > math.MaxInt64/4 {
		return 0, fmt.Errorf("%w %q: too large", ErrBadParam, s)
	}
	return PerByte(r.Num().Int64()), nil
}

// Params are the LogGOPS parameters of a run. The zero value is valid (every
// cost zero, every message rendezvous except empty ones) but CalcUnit must
// be set; DefaultParams gives the SC'19 paper's values.
type Params struct {
	L sim.Time // L: wire latency of a message
	O sim.Time // o: CPU overhead of a send or a receive
	// Gap is g: the minimum time between two sends (or two receives) on a NIC.
	Gap sim.Time
	// GapPerByte is G: NIC time per byte after the first.
	GapPerByte PerByte
	// OverheadPerByte is O: CPU time per byte after the first.
	OverheadPerByte PerByte
	// Eager is S: messages of at most S bytes are eager, larger ones use
	// rendezvous.
	Eager unit.Bytes
	// CalcUnit is the duration of one unit of "calc D" (LogGOPSim counts
	// nanoseconds).
	CalcUnit sim.Time
	// Compat selects the semantics: CompatNone (the default) fixes
	// LogGOPSim's pitfalls as the package documentation lists them;
	// CompatLogGOPSim reproduces them, for bit-for-bit comparisons with the
	// reference tool.
	Compat Compat
}

// Compat is a choice of semantics where LogGOPSim's behaviour is a defect.
type Compat uint8

// Semantics.
const (
	// CompatNone: operations ready together keep program order, a released
	// operation never starts before its dependency completed, and an empty
	// message has no per-byte cost.
	CompatNone Compat = iota
	// CompatLogGOPSim: LogGOPSim's order (each host's batch in release
	// order, reordered by libstdc++'s unstable std::sort by kind), released
	// operations start at their own CPU's clock, and an empty message
	// costs (0−1)·G, i.e. −G, as in LogGOPSim's unsigned arithmetic.
	CompatLogGOPSim
)

// String returns "none" or "loggopsim".
func (c Compat) String() string {
	if c == CompatLogGOPSim {
		return "loggopsim"
	}
	return "none"
}

// ParseCompat parses "none" or "loggopsim".
func ParseCompat(s string) (Compat, error) {
	switch strings.TrimSpace(s) {
	case "none":
		return CompatNone, nil
	case "loggopsim":
		return CompatLogGOPSim, nil
	}
	return 0, fmt.Errorf("%w compat=%q: want none or loggopsim", ErrBadParam, s)
}

// DefaultParams returns L=1us, o=0.5us, g=0.1us, G=0.04ns (25 GB/s), O=0,
// S=64KiB and a calc unit of 1ns.
func DefaultParams() Params {
	return Params{L: sim.Microsecond, O: 500 * sim.Nanosecond, Gap: 100 * sim.Nanosecond,
		GapPerByte: 40_000, Eager: 64 * unit.KiB, CalcUnit: sim.Nanosecond}
}

// MaxParam bounds the time parameters L, o, g and the calc unit, and G and
// O (as time per byte): an hour, far beyond any network but far inside the
// int64-picosecond clock, so that a sum of a few of them cannot wrap
// around. (A run whose schedule still passes the end of the clock fails
// with sim.ErrTimeOverflow.)
const MaxParam = 3600 * sim.Second

// Validate reports every negative, too large or zero-where-forbidden field
// at once.
func (p Params) Validate() error {
	var errs []error
	check := func(name string, v, max int64, show, limit string) {
		switch {
		case v < 0:
			errs = append(errs, fmt.Errorf("%w: %s must not be negative", ErrBadParam, name))
		case max > 0 && v > max:
			errs = append(errs, fmt.Errorf("%w: %s = %s: must be at most %s (larger values overflow the int64-picosecond clock)", ErrBadParam, name, show, limit))
		}
	}
	maxT, maxB := int64(MaxParam), int64(MaxParam)*fsPerPs
	check("L", int64(p.L), maxT, p.L.String(), MaxParam.String())
	check("o", int64(p.O), maxT, p.O.String(), MaxParam.String())
	check("g", int64(p.Gap), maxT, p.Gap.String(), MaxParam.String())
	check("G", int64(p.GapPerByte), maxB, p.GapPerByte.String(), MaxParam.String()+" per byte")
	check("O", int64(p.OverheadPerByte), maxB, p.OverheadPerByte.String(), MaxParam.String()+" per byte")
	check("S", int64(p.Eager), 0, p.Eager.String(), "")
	check("calc", int64(p.CalcUnit), maxT, p.CalcUnit.String(), MaxParam.String())
	if p.CalcUnit == 0 {
		errs = append(errs, fmt.Errorf("%w: calc unit must be positive", ErrBadParam))
	}
	if p.Compat > CompatLogGOPSim {
		errs = append(errs, fmt.Errorf("%w: compat %d: want none or loggopsim", ErrBadParam, p.Compat))
	}
	return errors.Join(errs...)
}

// String prints the parameters in the CLI's --set syntax.
func (p Params) String() string {
	return fmt.Sprintf("L=%v o=%v g=%v G=%v O=%v S=%v calc=%v compat=%v", p.L, p.O, p.Gap, p.GapPerByte, p.OverheadPerByte, p.Eager, p.CalcUnit, p.Compat)
}

// Set parses one parameter by its LogGOPS letter (L, o, g, G, O, S),
// "calc" (the calc unit) or "compat" (none or loggopsim) and stores it.
func (p *Params) Set(name, value string) error {
	switch name {
	case "L", "o", "g", "calc":
		d, err := sim.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%w %s: %v", ErrBadParam, name, err)
		}
		if d < 0 {
			return fmt.Errorf("%w %s=%s: must not be negative", ErrBadParam, name, value)
		}
		switch name {
		case "L":
			p.L = d
		case "o":
			p.O = d
		case "g":
			p.Gap = d
		case "calc":
			if d <= 0 {
				return fmt.Errorf("%w calc=%s: must be positive", ErrBadParam, value)
			}
			p.CalcUnit = d
		}
	case "G", "O":
		v, err := ParsePerByte(value)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "G" {
			p.GapPerByte = v
		} else {
			p.OverheadPerByte = v
		}
	case "S":
		b, err := unit.ParseBytes(value)
		if err != nil {
			return fmt.Errorf("%w S: %v", ErrBadParam, err)
		}
		p.Eager = b
	case "compat":
		c, err := ParseCompat(value)
		if err != nil {
			return err
		}
		p.Compat = c
	default:
		return fmt.Errorf("%w %q: want one of L, o, g, G, O, S, calc, compat (case matters: o is the overhead, O the per-byte overhead)", ErrBadParam, name)
	}
	return nil
}
