// Package validate checks the model against the published microbenchmark
// outcomes of the source documents (the calibration set, calibration.toml):
// it parses the set, runs each entry's experiment on the entry's preset with
// that preset's single parameter set, and judges the simulated value against
// the published one by the set's verdict rule (a ratio or an absolute value
// holds within ±15 %, an ordering or a crossover when it falls on the
// published side, a shape when every clause holds, a bound when it lies in
// [low, high]).
//
// Evaluators are registered per source document in files of their own
// (d0ch4.go, d0ch5.go, d0ch6.go, d1.go, d2.go, d4.go), each a list that the
// registry (registry.go) joins; testdata/holds_<file>.txt records, per file,
// the entries that held when the file was last updated, and a test fails when
// one of them stops holding.
//
// The published values enter the product only here, as the values the
// validation table prints beside the simulated ones: no evaluator passes
// them to a model.
package validate
