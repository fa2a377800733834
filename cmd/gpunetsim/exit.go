package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Exit codes, the one place they are defined. A script can trust them:
// 0 means every requested output was written; 2 means nothing ran.
const (
	// exitOK: success.
	exitOK = 0
	// exitFailure: the run started and failed (a deadlock, a failed
	// verification, an invariant violation, simulated time overflowing,
	// running out of memory, an output that could not be written at the end).
	exitFailure = 1
	// exitBadInput: bad input found before any work (unknown command,
	// experiment, preset, parameter or flag; a missing or unreadable input
	// file; a malformed or out-of-range value; an unwritable output path;
	// a run that cannot fit in memory).
	exitBadInput = 2
	// exitInternal: a bug in gpunetsim (a Go panic). One line on stderr,
	// the stack in a file named on that line.
	exitInternal = 3
	// exitInterrupted: SIGINT, SIGTERM or SIGPIPE; 128 + the signal
	// number, as a shell reports it (130 for SIGINT, 143 for SIGTERM, 141
	// when standard output was closed under the run).
	exitInterrupted = 128
)

// usageError marks errors caused by bad input; they exit with code 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// badInput wraps err as a usage error (exit code 2).
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// internalError is a Go panic recovered anywhere in a command: a bug.
type internalError struct {
	msg   string // one line: what panicked and where
	stack string
}

func (e *internalError) Error() string { return "internal error: " + e.msg }

// asInternal returns the internal error in err's chain: a recovered panic,
// or a simulated process or event that panicked (sim.PanicError).
func asInternal(err error) (*internalError, bool) {
	var ie *internalError
	if errors.As(err, &ie) {
		return ie, true
	}
	var pe *sim.PanicError
	if errors.As(err, &pe) {
		line, _, _ := strings.Cut(err.Error(), "\n") // the context before the stack
		return &internalError{msg: line, stack: pe.Stack}, true
	}
	return nil, false
}

// panicError turns a recovered panic value into an internal error with the
// current goroutine's stack.
func panicError(r any) *internalError {
	line, _, _ := strings.Cut(fmt.Sprint(r), "\n")
	return &internalError{msg: "panic: " + line, stack: string(debug.Stack())}
}

// exitCode classifies err (nil: success).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if _, ok := asInternal(err); ok {
		return exitInternal
	}
	var ue usageError
	var fe flagError
	if errors.As(err, &ue) || errors.As(err, &fe) {
		return exitBadInput
	}
	if errors.Is(err, sim.ErrConfig) {
		// A model found at setup that the configuration cannot run the
		// workload (sim.ErrConfig): bad input, though found in the run.
		return exitBadInput
	}
	return exitFailure
}

// maxErrorLines bounds how many problems one failed command prints.
const maxErrorLines = 10

// reportError prints err on stderr as "gpunetsim: ..." lines and returns the
// exit code. An internal error prints one line naming the file that holds
// the stack; the stack never goes to the terminal.
func reportError(err error, args []string, stderr io.Writer) int {
	code := exitCode(err)
	if code == exitOK {
		return code
	}
	if ie, ok := asInternal(err); ok {
		where := writeCrashReport(ie, args)
		fmt.Fprintf(stderr, "gpunetsim: internal error (a bug: please report it with %s): %s\n", where, ie.msg)
		return code
	}
	// One line per problem (errors.Join separates them by newlines), at
	// most maxErrorLines of them.
	lines := strings.Split(err.Error(), "\n")
	if _, ok := errors.AsType[*sim.DeadlockError](err); ok {
		// Its first line says who waits on what; the indented lines
		// after it (one per process) are detail a script need not parse.
		lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  ") })
	}
	if code == exitBadInput {
		lines = dropDerived(lines)
	}
	for i, line := range lines {
		if i == maxErrorLines && len(lines) > maxErrorLines+1 {
			fmt.Fprintf(stderr, "gpunetsim: ... and %d more problems\n", len(lines)-i)
			break
		}
		fmt.Fprintln(stderr, "gpunetsim:", shortenWords(line))
	}
	return code
}

// maxErrorWord bounds one word (a run of bytes without a space) of an
// error line, and errorWordEnd how much of each end of a longer one is
// shown. A value is echoed where it is refused: a --set value holding a
// file's contents ($(cat f)) made a 100 KB line, in which the parameter's
// range was lost. 512 bytes keep any plausible path or value whole.
const (
	maxErrorWord = 512
	errorWordEnd = 64
)

// shortenWords returns line with each word longer than maxErrorWord shown
// by its first and last errorWordEnd bytes (at rune boundaries) and the
// number of bytes between them.
func shortenWords(line string) string {
	if len(line) <= maxErrorWord {
		return line
	}
	words := strings.SplitAfter(line, " ")
	for i, w := range words {
		if len(w) <= maxErrorWord {
			continue
		}
		head, tail := errorWordEnd, len(w)-errorWordEnd
		for head > 0 && !utf8.RuneStart(w[head]) {
			head--
		}
		for tail < len(w) && !utf8.RuneStart(w[tail]) {
			tail++
		}
		words[i] = fmt.Sprintf("%s…[%d more bytes]…%s", w[:head], tail-head, w[tail:])
	}
	return strings.Join(words, "")
}

// paramName matches what may be a parameter's name in an error line
// (section.name, section.sub.name); paramNames says which are.
var paramName = regexp.MustCompile(`[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+`)

// dropDerived keeps, of a bad input's problem lines, those that name no
// parameter an earlier kept line names: one bad value is one line, not
// one more for each value checked against it (node.gpus = 2^63−1 with
// every moe.ep entry, a fft2d.n with every fft2d.procs, a jacobi.
// strategies without its baseline, each entry of a list). Two values bad
// on their own still give two lines; a problem hidden behind the first
// one's is reported once that one is fixed.
func dropDerived(lines []string) []string {
	known := paramNames()
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		var names []string
		derived := false
		for _, n := range paramName.FindAllString(l, -1) {
			if known[n] {
				names = append(names, n)
				derived = derived || seen[n]
			}
		}
		if derived {
			continue
		}
		for _, n := range names {
			seen[n] = true
		}
		out = append(out, l)
	}
	return out
}

// paramNames is the set of every parameter's name.
func paramNames() map[string]bool {
	m := map[string]bool{}
	for _, n := range params.Names() {
		m[n] = true
	}
	return m
}

// writeCrashReport saves the stack, the command line and the build of an
// internal error in a new file in the temporary directory and returns its
// name (or a note that it could not be written).
func writeCrashReport(ie *internalError, args []string) string {
	f, err := os.CreateTemp("", "gpunetsim-crash-*.txt")
	if err != nil {
		return "the output of 'gpunetsim " + strings.Join(args, " ") + "' (the crash report could not be saved: " + err.Error() + ")"
	}
	defer f.Close()
	fmt.Fprintf(f, "gpunetsim internal error, %s\ncommand: gpunetsim %s\nerror: %s\n\n", time.Now().UTC().Format(time.RFC3339), strings.Join(args, " "), ie.msg)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(f, "build: %s %s\n", bi.GoVersion, bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(f, "  %s=%s\n", s.Key, s.Value)
			}
		}
	}
	fmt.Fprintf(f, "\n%s\n", ie.stack)
	return f.Name()
}
