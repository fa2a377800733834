package sim

import (
	"errors"
	"fmt"
	"math"
)

// ErrTimeOverflow is wrapped by the error a run returns when simulated time
// would pass MaxTime (about 106 days of int64 picoseconds).
var ErrTimeOverflow = errors.New("simulated time overflows int64 picoseconds (about 106 days)")

// TimeOverflowError reports an event or a sleep that would end after
// MaxTime: a duration parameter too large, or a rate or frequency too
// small, for the run.
type TimeOverflowError struct {
	Agent string // the process that scheduled it, or "a callback event"
	At    Time   // simulated time when it was scheduled
}

// Error returns the message of a TimeOverflowError.
func (e *TimeOverflowError) Error() string {
	return fmt.Sprintf("%v: %s scheduled an event past the end of the clock at %v; a duration parameter is too large or a rate or frequency too small", ErrTimeOverflow, e.Agent, e.At)
}

// Unwrap returns the error a TimeOverflowError wraps.
func (e *TimeOverflowError) Unwrap() error { return ErrTimeOverflow }

// overflow records a time overflow as the run's failure; Run returns it
// after the current event.
func (e *Engine) overflow() {
	if e.failure != nil {
		return
	}
	agent := "a callback event"
	if e.running != nil {
		agent = "process " + e.running.name
	}
	e.failure = &TimeOverflowError{Agent: agent, At: e.now}
}

// FromPicoseconds converts a computed number of picoseconds to a Duration,
// rounding to the nearest picosecond. Values beyond MaxTime (or NaN, from a
// zero rate) saturate at MaxTime, so that scheduling it is reported as a
// time overflow instead of wrapping to a negative time.
func FromPicoseconds(ps float64) Duration {
	switch {
	case math.IsNaN(ps) || ps >= float64(MaxTime):
		return MaxTime
	case ps <= -float64(MaxTime):
		return -MaxTime
	}
	return Duration(math.Round(ps))
}

// Add returns t + d, saturating at MaxTime (and at -MaxTime), for models
// that accumulate computed durations: a saturated time scheduled later is
// reported as a time overflow instead of wrapping to a negative time that a
// max() would silently discard.
func (t Time) Add(d Duration) Time {
	switch {
	case d > 0 && t > MaxTime-d:
		return MaxTime
	case d < 0 && t < -MaxTime-d:
		return -MaxTime
	}
	return t + d
}
