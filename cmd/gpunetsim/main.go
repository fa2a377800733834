package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// defaultMemLimit is the soft heap limit when GOMEMLIMIT is unset: sweeps
// run several functional simulations at once, each holding its nodes'
// memories, and the garbage of finished ones should be collected before the
// heap doubles.
const defaultMemLimit = 4 << 30

func main() {
	capArenas() // under ulimit -v: see memory_unix.go
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the process exit code (see
// exit.go): 0 on success, 2 on bad input, 1 on a failure during the run, 3
// on an internal error; exit ends the process on SIGINT/SIGTERM.
func run(args []string, stdout, stderr io.Writer) int {
	return runExit(args, stdout, stderr, os.Exit)
}

// runExit is run with the function that ends the process on an interrupt.
func runExit(args []string, stdout, stderr io.Writer, exit func(int)) int {
	out := &outWriter{w: stdout}
	root := newRootCmd(out, stderr)
	root.SetArgs(args)
	err := withSession(root, stderr, exit, args...)
	if werr := out.failed(); werr != nil && (err == nil || errors.Is(err, werr)) {
		// A failed write is no bad input, though --version's (before
		// the session starts) came back as one.
		fmt.Fprintf(stderr, "gpunetsim: writing standard output: %v\n", unwrapPath(werr))
		return exitFailure
	}
	return reportError(err, args, stderr)
}

// outWriter is standard output, remembering its first write error: cobra
// writes help and usage without checking, so --help > /dev/full exited 0
// with nothing written.
type outWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// failed returns the first write error.
func (o *outWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
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
				return badInput(fmt.Errorf("unknown command %q: want one of run, study, today, report, sensitivity, validate, experiments, presets, params, config, ddt, goal, help (or no arguments for the default run)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDefault(cmd, stdout, stderr)
		},
	}
	root.Version = "x" // makes cobra add --version; the template prints versionText
	root.SetVersionTemplate(versionText())
	// Flag descriptions wrap within 120 columns, as every text the
	// program prints does (cobra's own template leaves them one line each).
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", ".LocalFlags.FlagUsagesWrapped 120",
		".InheritedFlags.FlagUsages", ".InheritedFlags.FlagUsagesWrapped 120").Replace(root.UsageTemplate()))
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(newDDTCmd(stdout), newGoalCmd(stdout, stderr))
	addSimCommands(root, stdout, stderr)
	// cobra's completion command, made now rather than when it runs, is
	// a group like ddt and goal: an unknown shell printed the help with
	// exit 0.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			groupCmd(c)
		}
	}
	return root
}

// newHelpCmd is cobra's help command, refusing a topic that names no
// command: cobra's own printed the root's help with exit 0 for "help
// bogus" (the root takes arguments, so it "found" it) and the run
// command's for "help run extra".
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command in the application.\nSimply type gpunetsim help [path to command] for full details.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return badInput(fmt.Errorf("help: no command %q: want one of run, study, today, report, sensitivity, validate, experiments, presets, params, config, ddt, goal, completion, help, and their subcommands (e.g. gpunetsim help study run)", strings.Join(args, " ")))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}
