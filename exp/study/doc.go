// Package study runs studies: several experiments, each over the cross
// product of parameter sweeps (params.ParseSweep) and its own sweep, split
// into independent simulation points (exp.Points) that a disk cache keeps
// between runs and that Slurm array tasks can share out.
//
// A point's cache key is the SHA-256 of its full narrowed configuration
// (every parameter with its value, the seed included, run.parallel
// excluded because results do not depend on it), the experiment, the
// point's label and the program version. Output flags are not part of the
// configuration, so they never change a key. Entries are written
// atomically (temporary file, fsync, rename) as points complete, so a
// study that is interrupted resumes from its last finished point, and
// concurrent writers (local workers, Slurm tasks on a shared file system)
// never leave a partial entry: two writers of one key write the same bytes.
//
// An experiment without exp.Points still runs in a study, whole and
// uncached, in the process that assembles the report.
//
// It models nothing of the simulated world; see docs/studies.md.
package study
