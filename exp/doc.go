// Package exp runs gpunetsim experiments: it holds the run configuration
// (hardware presets plus software, protocol and workload knobs), the
// registry of experiments, and the code that sweeps a workload over
// strategies and sizes and turns the measurements into report.Results.
package exp
