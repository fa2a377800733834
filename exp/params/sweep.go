package params

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// MaxSweepLen bounds how many values one sweep may expand to.
const MaxSweepLen = 10000

// Sweep is one swept parameter and its values, each printed in the form
// Set parses (with units), in the order given.
type Sweep struct {
	Name   string
	Values []string
}

// ParseSweep parses "name=item,item,...". An item is a value ("100Gbps")
// or a range in the parameter's units: "lo..hi*k" multiplies by k from lo
// while not above hi ("25Gbps..400Gbps*2" is 25, 50, 100, 200 and
// 400Gbps), "lo..hi+step" adds step ("1us..4us+1us"). Ranges need a
// numeric parameter; list parameters (allreduce.nodes, …) cannot be swept
// here, since they are the experiments' own sweeps. Errors name the
// parameter and wrap ErrUnknown or ErrBadValue.
func ParseSweep(spec string) (Sweep, error) {
	name, list, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Sweep{}, fmt.Errorf("%w: sweep %q: want name=v1,v2,... or name=lo..hi*k", ErrBadValue, spec)
	}
	f, ok := fieldNamed(name)
	if !ok {
		return Sweep{}, unknown(name)
	}
	if f.typ.Kind() == reflect.Slice {
		return Sweep{}, fmt.Errorf("%w: sweep %s: a list parameter is the experiment's own sweep; set it with --set %s=...", ErrBadValue, name, name)
	}
	sw := Sweep{Name: name}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		var vals []string
		var err error
		if strings.Contains(item, "..") {
			vals, err = expandRange(f, item)
		} else {
			var v string
			v, err = canonical(f, item)
			vals = []string{v}
		}
		if err != nil {
			return Sweep{}, fmt.Errorf("sweep %s: %w", name, err)
		}
		for _, v := range vals {
			if seen[v] {
				return Sweep{}, fmt.Errorf("%w: sweep %s: value %s appears twice", ErrBadValue, name, v)
			}
			seen[v] = true
			sw.Values = append(sw.Values, v)
		}
		if len(sw.Values) > MaxSweepLen {
			return Sweep{}, fmt.Errorf("%w: sweep %s: more than %d values", ErrBadValue, name, MaxSweepLen)
		}
	}
	return sw, nil
}

// fieldNamed finds the field called name.
func fieldNamed(name string) (field, bool) {
	for _, f := range fields() {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// canonical parses s as f's type and prints it back.
func canonical(f field, s string) (string, error) {
	v, err := parseValue(f, s)
	if err != nil {
		return "", err
	}
	return format(v), nil
}

func parseValue(f field, s string) (reflect.Value, error) {
	if strings.TrimSpace(s) == "" {
		return reflect.Value{}, fmt.Errorf("%w: empty value", ErrBadValue)
	}
	v := reflect.New(f.typ).Elem()
	if err := parse(v, s); err != nil {
		return reflect.Value{}, err
	}
	return v, nil
}

// expandRange expands "lo..hi*k" or "lo..hi+step".
func expandRange(f field, item string) ([]string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: range %q: %s; want lo..hi*k (geometric) or lo..hi+step (arithmetic)", ErrBadValue, item, why)
	}
	lo, rest, _ := strings.Cut(item, "..")
	op := strings.LastIndexAny(rest, "*+")
	if op < 0 {
		return nil, bad("no *k or +step")
	}
	hi, step, geometric := rest[:op], rest[op+1:], rest[op] == '*'
	switch f.typ.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
	default:
		return nil, bad("ranges need a numeric parameter")
	}
	lv, err := parseValue(f, lo)
	if err != nil {
		return nil, bad(err.Error())
	}
	hv, err := parseValue(f, hi)
	if err != nil {
		return nil, bad(err.Error())
	}
	a, b := number(lv), number(hv)
	if b < a {
		return nil, bad("runs backwards")
	}
	// Integers are stepped in float64, exact within ±2^53: beyond it a
	// value rounded to 2^63 wrapped to -2^63 when converted back
	// (allreduce.wgs = 9223372036854770000..9223372036854775807+4096
	// reported "-9223372036854775808 appears twice"), so such a range is
	// refused, not expanded.
	if isInt(f.typ) && (math.Abs(a) >= maxExactInt || math.Abs(b) >= maxExactInt) {
		return nil, bad(fmt.Sprintf("integer ranges must lie strictly within ±%d (2^53); list larger values one by one", int64(maxExactInt)))
	}
	end := b + math.Abs(b)*1e-12 // a float's last step may fall a rounding above hi
	if isInt(f.typ) {
		end = b // exact
	}
	var next func(i int, prev float64) float64
	if geometric {
		k, err := strconv.ParseFloat(strings.TrimSpace(step), 64)
		if err != nil || !(k > 1) || math.IsInf(k, 0) {
			return nil, bad("the factor k must be a plain number above 1")
		}
		if !(a > 0) {
			return nil, bad("a geometric range must start above zero")
		}
		next = func(_ int, prev float64) float64 { return prev * k }
	} else {
		sv, err := parseValue(f, step)
		if err != nil {
			return nil, bad(err.Error())
		}
		d := number(sv)
		if !(d > 0) {
			return nil, bad("the step must be positive")
		}
		next = func(i int, _ float64) float64 { return a + float64(i)*d }
	}
	var out []string
	for i, x := 1, a; x <= end; i++ {
		v := reflect.New(f.typ).Elem()
		setNumber(v, x)
		out = append(out, format(v))
		if len(out) > MaxSweepLen {
			return nil, bad(fmt.Sprintf("expands to more than %d values", MaxSweepLen))
		}
		nx := next(i, x)
		if isInt(f.typ) {
			nx = math.Round(nx)
		}
		if !(nx > x) {
			return nil, bad("the step makes no progress at this precision")
		}
		x = nx
	}
	return out, nil
}

// maxExactInt is 2^53: float64 holds every integer of smaller magnitude
const maxExactInt = 1 << 53

func isInt(t reflect.Type) bool {
	k := t.Kind()
	return k != reflect.Float32 && k != reflect.Float64
}

func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint())
	}
	return v.Float()
}

func setNumber(v reflect.Value, x float64) {
	switch v.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(math.Round(x)))
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(math.Round(x)))
	default:
		v.SetFloat(x)
	}
}

// SweepCell is the table cell of a swept parameter's value s (as ParseSweep
// prints it): a report.Quantity for a parameter with a unit (sizes in B,
// durations in us, rates in Gbps, frequencies in GHz), so the CSV has a
// numeric column with the unit in its header while the text, HTML and JSON
// forms print s; s itself for any other parameter.
func SweepCell(name, s string) any {
	f, ok := fieldNamed(name)
	if !ok {
		return s
	}
	v, err := parseValue(f, s)
	if err != nil {
		return s
	}
	switch x := v.Interface().(type) {
	case unit.Bytes:
		return report.Quantity{Text: s, Value: float64(x), Unit: "B"}
	case sim.Duration:
		return report.Quantity{Text: s, Value: x.Micros(), Unit: "us"}
	case unit.Rate:
		return report.Quantity{Text: s, Value: float64(x) * 8 / 1e9, Unit: "Gbps"}
	case unit.Freq:
		return report.Quantity{Text: s, Value: float64(x) / 1e9, Unit: "GHz"}
	}
	return s
}
