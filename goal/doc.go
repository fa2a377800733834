// Package goal reads and generates GOAL schedules, the text format of
// LogGOPSim and Schedgen (the SC'19 paper), for the LogGOPS scale mode
// in package loggops.
//
// # Format
//
//	num_ranks P
//	rank 0 {
//	  l1: send 8b to 1 tag 0 cpu 0 nic 0
//	  l2: recv 8 b from -1 tag -1
//	  l3: calc 1000 cpu 1
//	  l3 requires l1     // l3 starts after l1 completes
//	  l3 irequires l2    /* l3 starts once l2 has started */
//	}
//	rank 1 { ... }      // blocks in order 0..P-1
//
// One statement per line. Optional fields default to 0 and come in the
// order tag, cpu, nic (calc takes only cpu). -1 means any source or any tag,
// on receives only. Labels are per rank, unique, and a dependency names
// labels defined on earlier lines. Calc durations are in the simulator's
// time unit (LogGOPSim counts nanoseconds). CPUs and NICs per host: the
// highest index used in the file plus one (indices up to 255).
//
// # Streaming
//
// A Program is read one rank at a time through RankReader; operations are
// numbered 0, 1, ... per rank and dependencies name them by number. Open
// reads a text file once: it validates all of it (so errors come before any
// simulation, with 1-based line numbers and what was expected), records
// each rank's Window, and writes every statement in a compact binary form
// (about 6 bytes, dependencies already resolved to operation numbers) to a
// spool: memory up to 1 MiB, then a temporary file removed by Close. Rank
// readers decode that spool through a buffer of at most 16 KiB (8 MiB over
// all ranks), so the text is never parsed twice. A non-seekable input is
// first copied to a temporary file. Memory is therefore proportional to
// ranks, not to file size; temporary disk space is about a quarter of the
// text (plus the text itself for standard input).
//
// The validating pass is a hand-written byte-level parser. Inside a rank
// block, the statement lines in exactly the shape WriteText and Schedgen
// print, with labels "lk" on operation k, go through one fused loop that
// parses, checks, tracks the labels (a bit per operation instead of a hash
// table), feeds the window and appends the binary record in a single scan,
// with its state in local variables; other common lines go through two
// line-level fast paths, and everything else (comments, wildcards, other
// labels, anything wrong) through the general tokenizer, which words every
// error. The fused loop hands a line it does not take whole to the general
// path, so errors and results are the general path's; fuzz tests check
// that, with the fused loop on and off. Texts of 4 MiB or more are split at
// "rank R {" lines into four stretches per CPU (up to 16), indexed by one
// worker per CPU, each stretch into its own spool; the result, including
// which error is reported first, is that of one sequential pass, to which
// Open falls back if a split was not really at a block boundary (inside a
// comment, say). On the project's 2-core VM Open reads and checks a 229 MB
// Schedgen-style file with 0.24 s of CPU (about 1 ns a byte, half of what
// it took before the fused loop), spread over both cores
// (BenchmarkOpenRing1024, BenchmarkIndexLines; see docs/goal.md for the
// measurements and how to repeat them).
//
// For exact streaming the simulator must know when it has read far enough:
// every operation's dependencies must be known before any of them starts,
// and every operation without dependencies must be known at time 0. Each
// rank's Window records the two bounds: Lookahead, the largest distance in
// statements between an operation named by a dependency and the last
// dependency of the waiting operation, and Roots, the extent of the
// operations without dependencies. Schedgen-style files, which put each
// dependency right after its operation, have windows of a few statements;
// a file that lists all dependencies at the end of a block still works,
// with that block held in memory.
//
// # Generators
//
// Ring (reduce-scatter + allgather), RecDoub (recursive-doubling
// allreduce), Bcast (binomial tree), Halo (2-D periodic halo exchange with
// compute) and AllToAll produce a Program directly, one rank at a time and
// without text; WriteText prints any Program as GOAL. ParsePattern builds a
// generator from a "name:key=value,..." string. The ring and
// recursive-doubling schedules chain each step's send and receive on the
// previous receive, so at most one receive per rank is posted at a time.
//
// # Differences from LogGOPSim's parser
//
// Every file both accept means the same. This reader is stricter where
// LogGOPSim's re2c scanner is lax or silently wraps: tokens must be
// separated by blanks ("8bto 1" is an error), "rank R {" and "}" stand on
// their own lines, num_ranks comes before the first block, nothing follows
// the last block, tags, ranks, sizes and cpu/nic indices out of range are
// errors rather than truncated, and duplicate labels, a label spelled like
// a keyword, a tag of -1 on a send (a wildcard in LogGOPSim) and a "}"
// following a comment on the same line are errors rather than silently
// accepted. It is more lenient in two ways: comments may end any line
// (LogGOPSim allows them only before a statement), and lines may be
// indented.
package goal
