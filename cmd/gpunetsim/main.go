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
// Exit status: 0 on success; 2 on bad input (unknown experiment, preset,
// parameter or flag; malformed value; a value Validate rejects; an output
// path that cannot be written), reported before anything runs as one line
// "gpunetsim: ..." per problem; 1 on any other failure.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// defaultMemLimit is the soft heap limit when GOMEMLIMIT is unset: sweeps
// run several functional simulations at once, each holding its nodes'
// memories, and the garbage of finished ones should be collected before the
// heap doubles.
const defaultMemLimit = 4 << 30

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks errors caused by bad input; they exit with code 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// badInput wraps err as a usage error (exit code 2).
func badInput(err error) error { return usageError{err} }

// maxErrorLines bounds how many problems one failed command prints.
const maxErrorLines = 10

// run executes the CLI with args and returns the process exit code:
// 0 on success, 2 on bad input, 1 on any other failure.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	// One line per problem (errors.Join separates them by newlines), at
	// most maxErrorLines of them.
	lines := strings.Split(err.Error(), "\n")
	for i, line := range lines {
		if i == maxErrorLines && len(lines) > maxErrorLines+1 {
			fmt.Fprintf(stderr, "gpunetsim: ... and %d more problems\n", len(lines)-i)
			break
		}
		fmt.Fprintln(stderr, "gpunetsim:", line)
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
	}
	return 1
}

// isCobraUsage reports whether err came from cobra's own argument or flag
// parsing, which is always bad input.
func isCobraUsage(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

// flagError wraps errors from flag parsing.
type flagError struct{ err error }

func (f flagError) Error() string { return f.err.Error() }
func (f flagError) Unwrap() error { return f.err }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "gpunetsim",
		Short:         "Simulate who should drive the network when GPUs do the computing",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badInput(fmt.Errorf("unknown command %q: want one of run, study, report, experiments, presets, params, ddt, goal, help (or no arguments for the default run)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDefault(cmd, stdout, stderr)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.AddCommand(newDDTCmd(stdout), newGoalCmd(stdout, stderr))
	addSimCommands(root, stdout, stderr)
	return root
}
