package params

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
)

// extremes are values at and past the edges of every parameter class:
// zero, negative, tiny, huge, overflowing, malformed, with and without
// units.
var extremes = []string{"0", "-1", "1", "1e-300", "1e300", "9223372036854775807", "-9223372036854775808",
	"0B", "1TiB", "1024GiB", "0ps", "9223372036854775807ps", "1e-30Gbps", "1e30Gbps", "0Hz", "1e30GHz",
	"NaN", "Inf", "", "x", "2-65536/1", "0x0", "65536x65536", "true", "CPU,CPU", "1..2"}

// perName is how many extremes each parameter gets, rotating through the
// list so every value meets a different set of parameters (a Load costs
// milliseconds: the whole cross product would take half a minute).
const perName = 3

// TestEveryParameterAtItsExtremes loads every parameter at extreme
// values: Load either refuses it with an error or returns a configuration
// that passes the type-wide bounds, and neither Load nor the memory
// estimate of any experiment panics on it.
func TestEveryParameterAtItsExtremes(t *testing.T) {
	names := Names()
	exps := exp.List()
	for i, name := range names {
		for k := range perName {
			v := extremes[(i*perName+k)%len(extremes)]
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("--set %s=%s: panic: %v", name, v, r)
					}
				}()
				cfg, err := Load(Options{Sets: []string{fmt.Sprintf("%s=%s", name, v)}})
				if err != nil {
					return
				}
				if err := CheckBounds(cfg); err != nil {
					t.Errorf("--set %s=%s: loaded outside the bounds: %v", name, v, err)
				}
				for _, e := range exps {
					if need := exp.EstimateMemory(e.Name, cfg); need.Bytes <= 0 || need.Bytes != need.Bytes {
						t.Errorf("--set %s=%s: %s: estimate %v", name, v, e.Name, need.Bytes)
					}
				}
			}()
		}
	}
}

// powersOfTwo are integers whose products with small factors wrap int64
// to 0 or a negative number (2^62 × 64 = 2^68 wraps to 0): a check that
// multiplies before its own range check would divide by zero or accept a
// wrapped value.
var powersOfTwo = []string{"1073741824", "4294967296", "4611686018427387904", "2305843009213693952", "1152921504606846976"}

// TestEveryIntParameterAtPowersOfTwo loads every parameter at each of
// powersOfTwo (gpu_l2.ways = 2^62 panicked in its Validate: ways × 64 B
// wrapped to 0 under a modulo): refused or within the bounds, no panic.
func TestEveryIntParameterAtPowersOfTwo(t *testing.T) {
	for _, name := range Names() {
		for _, v := range powersOfTwo {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("--set %s=%s: panic: %v", name, v, r)
					}
				}()
				cfg, err := Load(Options{Sets: []string{name + "=" + v}})
				if err != nil {
					return
				}
				if err := CheckBounds(cfg); err != nil {
					t.Errorf("--set %s=%s: loaded outside the bounds: %v", name, v, err)
				}
			}()
		}
	}
}
