// Package sensitivity shows what an experiment's conclusions rest on: it
// perturbs every [DEFAULT] knob (or a chosen list) down and up by a factor,
// re-runs the experiment for each, in parallel, and reports per output
// (each time, each speedup, each crossover point where one strategy
// overtakes another; report.Result.Outputs) which knobs move it and by how
// much, as tables and a tornado plot (issue 13, the dissertation's configuration tables and
// the dissertation list the knobs).
//
// A knob is scaled one at a time, everything else at its value. Numeric
// knobs only (durations, sizes, rates, frequencies, counts, ratios): a
// switch or a name has no factor. Knobs of another experiment's section
// are left out, since they cannot move this one. A scaled value that the
// configuration rejects (a count that must stay ≤ another, a size that
// must stay a multiple of 4) is reported as not perturbed, with the reason;
// so is a knob at zero, which no factor moves, and an integer knob that
// rounding brings back to its value.
//
// Perturbed runs carry no payload bytes (run.functional = false): timing
// does not depend on them, and `gpunetsim run` verifies the base
// configuration functionally. Left out: interactions between knobs (two
// moved at once) and a global (variance-based) analysis.
package sensitivity
