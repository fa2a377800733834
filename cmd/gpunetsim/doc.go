// Command gpunetsim simulates GPU clusters under different networking
// strategies and compares them. With no arguments it runs the default
// strategy comparison (the strong-scaled allreduce) on built-in defaults.
//
// Usage:
//
//	gpunetsim [--out-dir DIR]
//	gpunetsim run <experiment> [--preset P] [--config F.toml] [--set name=value]...
//	                           [--seed N] [--csv F] [--json F] [--plot F.svg|.png|.pdf]
//	                           [--trace F.json] [--quiet]
//	gpunetsim experiments
//	gpunetsim presets
//	gpunetsim params [--preset P] [--config F.toml] [--set name=value]...
//
// The no-argument run is "run allreduce" on preset gputn over 2, 4, 8, 16,
// 32 and 64 nodes, saving allreduce.csv and allreduce.svg in --out-dir.
// Parameters are layered: preset, then the TOML file, then each --set in
// order, then --seed; package exp/params documents the value syntax. The
// text report goes to stdout; a progress bar goes to stderr when it is a
// terminal. Files are rendered in memory and written atomically after the
// run succeeds.
//
// Exit status: 0 on success; 2 on bad input (unknown command, experiment,
// preset, parameter or flag; a missing argument or input file; a malformed
// value; a value Validate rejects; an output path that cannot be written; a
// run too large for the memory available), reported before anything runs
// as one line "gpunetsim: ..." per problem; 1 on a failure during the run
// (deadlock, failed verification or invariant, simulated time overflow);
// 3 on an internal error (a bug), with one line naming the file that holds
// the stack; 130 or 143 on SIGINT or SIGTERM, after removing unfinished
// output files and printing "gpunetsim: interrupted". Standard output
// closed under a run (`| head`) ends it the same way with 141 (SIGPIPE),
// or with 1 and "broken pipe" when the failed write is seen first; either
// way no unfinished output file is left.
package main
