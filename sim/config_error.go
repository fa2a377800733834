package sim

import (
	"errors"
	"fmt"
)

// ErrConfig is wrapped by the error of a model that finds, while it sets
// up (before simulated time advances), that its configuration cannot run
// the workload asked of it: a table too small for the indices the
// workload registers, say. It is bad input, not a failure of the run: the
// command line reports it as such (exit status 2).
var ErrConfig = errors.New("configuration cannot run this workload")

// Named is a duration parameter's name and value, for range checks that
// name each bad value on its own.
type Named struct {
	Name string
	T    Time
}

// Negatives returns "name = value: must be ≥ 0" for each negative value
// of ts, in order: like parameters checked together, each bad one is its
// own line with its own value (a line for the group showed every value,
// good ones too, and one line for two bad values).
func Negatives(ts ...Named) []error {
	var errs []error
	for _, t := range ts {
		if t.T < 0 {
			errs = append(errs, fmt.Errorf("%s = %v: must be ≥ 0", t.Name, t.T))
		}
	}
	return errs
}
