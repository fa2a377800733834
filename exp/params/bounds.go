package params

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Type-wide bounds that every parameter of a unit type obeys, whatever its
// own Validate allows. They keep each value, and any single product of a
// value with a size or cycle count, far inside the int64-picosecond clock
// (sim.MaxTime ≈ 106 days), so that arithmetic overflow cannot silently
// turn into a wrong result; a run that still passes the end of the clock
// stops with sim.ErrTimeOverflow. A new parameter of these types gets them
// without code.
const (
	// MaxDuration bounds every duration parameter.
	MaxDuration = sim.Second * 3600
	// MinRate and MaxRate bound every rate parameter (1 Mbps, 1 PB/s).
	MinRate unit.Rate = 1e6 / 8
	MaxRate unit.Rate = 1e15
	// MinFreq and MaxFreq bound every frequency parameter (1 MHz, 1 THz).
	MinFreq unit.Freq = 1e6
	MaxFreq unit.Freq = 1e12
	// MaxSize bounds every size parameter (1 TiB).
	MaxSize = 1024 * unit.GiB
	// MaxInt bounds the magnitude of every integer parameter (counts,
	// cycles, instructions): 10^12, so that a count times a duration of a
	// few nanoseconds stays inside the clock. Floats carry no unit (a
	// factor, a rate in its own unit) and get no type-wide bound; their
	// own Validate bounds them, and a product that still passes the end of
	// the clock stops the run with sim.ErrTimeOverflow.
	MaxInt = 1_000_000_000_000
)

// CheckBounds reports every parameter of cfg outside the type-wide bounds
// above, each naming the parameter and its allowed range. Load applies it
// after the configuration's own Validate.
func CheckBounds(cfg exp.Config) error {
	v := reflect.ValueOf(cfg)
	var errs []error
	for _, f := range fields() {
		if err := checkBound(f, v.FieldByIndex(f.index)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// minNormal is the smallest normal float64, 2^-1022: below it (a
// denormal) a float keeps fewer than 16 significant digits.
const minNormal = 0x1p-1022

// checkBound checks one field's value against the bounds of its type.
func checkBound(f field, v reflect.Value) error {
	why := "outside it times overflow the int64-picosecond clock or round to zero"
	switch f.typ {
	case timeType:
		if d := sim.Time(v.Int()); d < 0 || d > MaxDuration {
			return fmt.Errorf("%s = %v: must be in [0s, %v] (%s)", f.name, d, MaxDuration, why)
		}
		return nil
	case rateType:
		if r := unit.Rate(v.Float()); r < MinRate || r > MaxRate {
			return fmt.Errorf("%s = %v: must be in [1Mbps, 1000TB/s] (%s)", f.name, r, why)
		}
		return nil
	case freqType:
		if q := unit.Freq(v.Float()); q < MinFreq || q > MaxFreq {
			return fmt.Errorf("%s = %v: must be in [1MHz, 1000GHz] (%s)", f.name, q, why)
		}
		return nil
	case bytesType:
		if b := unit.Bytes(v.Int()); b < 0 || b > MaxSize {
			return fmt.Errorf("%s = %v: must be in [0B, 1024GiB]", f.name, b)
		}
		return nil
	case intSliceType:
		for _, n := range v.Interface().([]int) {
			if n < -MaxInt || n > MaxInt {
				return fmt.Errorf("%s contains %d: must be in [-1e12, 1e12]", f.name, n)
			}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n := v.Int(); n < -MaxInt || n > MaxInt {
			return fmt.Errorf("%s = %d: must be in [-1e12, 1e12] (%s)", f.name, n, why)
		}
	case reflect.Float64, reflect.Float32:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s = %g: must be a finite number", f.name, x)
		} else if x != 0 && math.Abs(x) < minNormal {
			// A parameter's own range held 1e-320 (an energy in [0, 1e6])
			// and the run divided by it: every energy ratio infinite.
			return fmt.Errorf("%s = %g: must be 0 or of magnitude in [%v, 1e300] (a denormal float keeps fewer digits than written, and its reciprocal is infinite)", f.name, x, minNormal)
		}
	}
	return nil
}
