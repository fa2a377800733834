package validate

import (
	"fmt"
	"math"
)

// Clause is one checked statement of an ordering or shape entry, with the
// simulated numbers that decide it.
type Clause struct {
	Text  string `json:"text"`
	Holds bool   `json:"holds"`
}

// Outcome is what an evaluator found.
type Outcome struct {
	// Value is the simulated value in the entry's unit (ratio, absolute,
	// bound entries; optional for ordering and shape ones).
	Value *float64
	// Clauses are the checked statements (ordering, shape).
	Clauses []Clause
	// NotRunnable, when set, says why the model cannot run the entry yet.
	NotRunnable string
	// Note adds the simulated quantities behind Value (e.g. the two times
	// of a ratio).
	Note string
}

// Num is an outcome with value v and a note.
func Num(v float64, format string, a ...any) Outcome {
	return Outcome{Value: &v, Note: fmt.Sprintf(format, a...)}
}

// Clauses is an ordering or shape outcome.
func Clauses(cs ...Clause) Outcome { return Outcome{Clauses: cs} }

// Check is a clause: text (printf-formatted) holds when ok.
func Check(ok bool, format string, a ...any) Clause {
	return Clause{Text: fmt.Sprintf(format, a...), Holds: ok}
}

// NotRunnable is the outcome of an entry the model cannot run yet.
func NotRunnable(format string, a ...any) Outcome {
	return Outcome{NotRunnable: fmt.Sprintf(format, a...)}
}

// Status is an entry's verdict.
type Status string

// The verdicts.
const (
	Holds       Status = "holds"
	Misses      Status = "misses"
	Unrunnable  Status = "not runnable"
	RunFailed   Status = "failed"
	Unevaluated Status = "no evaluator"
)

// Result is one entry judged.
type Result struct {
	Entry Entry
	// Group is the evaluator group that judged it ("" when none).
	Group     string
	Simulated *float64
	// Error is the relative error (simulated − published) / published of a
	// ratio or absolute entry, or for a bound entry the relative distance
	// outside [low, high] (0 inside).
	Error   *float64
	Holds   bool
	Status  Status
	Clauses []Clause
	Note    string
}

// judge applies the verdict rule to an outcome.
func judge(e Entry, o Outcome) Result {
	r := Result{Entry: e, Simulated: o.Value, Clauses: o.Clauses, Note: o.Note}
	if o.NotRunnable != "" {
		r.Status, r.Note = Unrunnable, o.NotRunnable
		return r
	}
	switch e.Kind {
	case Ratio, Absolute:
		if o.Value == nil || math.IsNaN(*o.Value) {
			r.Status, r.Note = RunFailed, "the evaluator returned no value"
			return r
		}
		rel := (*o.Value - *e.Value) / math.Abs(*e.Value)
		r.Error = &rel
		r.Holds = math.Abs(rel) <= Tolerance
	case Bound:
		if o.Value == nil || math.IsNaN(*o.Value) {
			r.Status, r.Note = RunFailed, "the evaluator returned no value"
			return r
		}
		v, lo, hi := *o.Value, *e.Low, *e.High
		var d float64
		switch {
		case v < lo:
			d = (v - lo) / math.Max(math.Abs(lo), math.Abs(hi))
		case v > hi:
			d = (v - hi) / math.Max(math.Abs(hi), math.Abs(lo))
		}
		r.Error = &d
		r.Holds = v >= lo && v <= hi
	case Ordering, Shape:
		if len(o.Clauses) == 0 {
			r.Status, r.Note = RunFailed, "the evaluator checked no clause"
			return r
		}
		r.Holds = true
		for _, c := range o.Clauses {
			r.Holds = r.Holds && c.Holds
		}
	}
	if e.Kind != Ordering && e.Kind != Shape {
		// A numeric entry's extra clauses (e.g. the other end of a range)
		// must hold too.
		for _, c := range o.Clauses {
			r.Holds = r.Holds && c.Holds
		}
	}
	r.Status = Misses
	if r.Holds {
		r.Status = Holds
	}
	return r
}
