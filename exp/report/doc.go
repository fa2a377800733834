// Package report holds the results of gpunetsim experiments and writes them
// as text tables, CSV, JSON and plots. Every result records all parameters
// (defaults included) and the seed, so a file alone says what produced it.
//
// It models no part of the spec; it is the output side of every
// experiment (the dissertation: results compared in tables, plots and
// timelines). Left out: interactive plots (the SVGs are static).
package report
