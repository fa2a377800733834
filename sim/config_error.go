package sim

import "errors"

// ErrConfig is wrapped by the error of a model that finds, while it sets
// up (before simulated time advances), that its configuration cannot run
// the workload asked of it: a table too small for the indices the
// workload registers, say. It is bad input, not a failure of the run: the
// command line reports it as such (exit status 2).
var ErrConfig = errors.New("configuration cannot run this workload")
