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

// CheckedPicoseconds converts a computed number of picoseconds to a
// Duration, rounding to the nearest picosecond. ok is false for NaN and for
// values beyond ±MaxTime: the caller fails naming what it computed (see
// OverflowOf) instead of going on with a saturated or wrapped time.
func CheckedPicoseconds(ps float64) (d Duration, ok bool) {
	if math.IsNaN(ps) || math.Abs(ps) >= float64(MaxTime) {
		return 0, false
	}
	return Duration(math.Round(ps)), true
}

// CheckedAdd returns t + d; ok is false when the sum would pass ±MaxTime.
func (t Time) CheckedAdd(d Duration) (sum Time, ok bool) {
	if d > 0 && t > MaxTime-d || d < 0 && t < -MaxTime-d {
		return 0, false
	}
	return t + d, true
}

// CheckedMul returns d × n; ok is false when the product would pass
// ±MaxTime.
func CheckedMul(d Duration, n int64) (p Duration, ok bool) {
	if d == 0 || n == 0 {
		return 0, true
	}
	p = d * Duration(n)
	if p/Duration(n) != d || n == -1 && d == -MaxTime-1 {
		return 0, false
	}
	return p, true
}

// OverflowOf is the error of a computation (named by what, with the
// parameters it used) whose time would pass the end of the clock: it wraps
// ErrTimeOverflow, so a command reports it as a failed run.
func OverflowOf(what string) error {
	return fmt.Errorf("%s: %w", what, ErrTimeOverflow)
}
