package sim

import (
	"errors"
	"fmt"
	"strings"
)

// ErrLivelock is wrapped by the failures models report through Fail when
// agents keep polling values that nothing will ever change.
var ErrLivelock = errors.New("livelock")

// Violation is one conservation or protocol invariant found broken at the
// end of a run: which agent, when, and what.
type Violation struct {
	Agent string
	At    Time
	What  string
}

// String returns the printed name of a Violation.
func (v Violation) String() string { return fmt.Sprintf("%s at %v: %s", v.Agent, v.At, v.What) }

// InvariantError reports every violation found at the end of a run.
type InvariantError struct {
	Violations []Violation
}

// Error returns the message of an InvariantError.
func (e *InvariantError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invariant check: %d violation(s)", len(e.Violations))
	for _, v := range e.Violations {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// EndCheck inspects the simulated world when a run has ended and returns
// the invariants it finds broken.
type EndCheck func(now Time) []Violation

// AddEndCheck registers check to run whenever Run or RunUntil ends with
// nothing left to do: the queue empty and no process blocked (that is a
// DeadlockError instead). Its violations make the run fail with an
// *InvariantError. Checks should read counters, not logs, so that checking
// every run stays cheap.
func (e *Engine) AddEndCheck(check EndCheck) { e.endChecks = append(e.endChecks, check) }

// endCheck runs the registered checks; nil when every invariant holds.
func (e *Engine) endCheck() error {
	var all []Violation
	for _, c := range e.endChecks {
		all = append(all, c(e.now)...)
	}
	if len(all) == 0 {
		return nil
	}
	return &InvariantError{Violations: all}
}

// Fail ends the run with err as its failure: Run returns err after the
// current event (the first failure wins). Models call it when they find,
// during the run, a state from which it can never finish, such as an agent
// polling a value that nothing will ever change: a livelock the empty-queue
// deadlock check cannot see, since the polls keep the queue busy.
func (e *Engine) Fail(err error) {
	if e.failure == nil && err != nil {
		e.failure = err
	}
}
