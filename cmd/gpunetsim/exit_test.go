package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
)

// checkInternal asserts that stderr is one line reporting an internal
// error with a crash file that holds want (and the stack).
func checkInternal(t *testing.T, code int, stderr string, want string) {
	t.Helper()
	if code != exitInternal {
		t.Fatalf("exit %d; want %d", code, exitInternal)
	}
	m := regexp.MustCompile(`^gpunetsim: internal error \(a bug: please report it with (\S+)\): .*\n$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q; want one line naming the crash file", stderr)
	}
	if strings.Contains(stderr, "goroutine") {
		t.Errorf("the stack reached the terminal: %q", stderr)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{want, "goroutine", "command: gpunetsim"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("crash file lacks %q:\n%s", w, b)
		}
	}
}

func TestPanicInCommandIsInternalError(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	root := &cobra.Command{Use: "gpunetsim", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(&cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error {
		var m map[string]int
		m["x"] = 1 // a nil-map write: a real runtime panic
		return nil
	}})
	root.SetArgs([]string{"boom"})
	var stderr bytes.Buffer
	code := reportError(withSession(root, &stderr, func(int) { t.Fatal("exit called") }), []string{"boom"}, &stderr)
	checkInternal(t, code, stderr.String(), "assignment to entry in nil map")
}

func TestSimulatedPanicIsInternalError(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	boom := exp.Experiment{Name: "boom", Run: func(exp.Config, exp.Env) (*report.Result, error) {
		return nil, fmt.Errorf("HDN on 2 nodes: %w", &sim.PanicError{Proc: "node[0].nic", At: 5, Value: "index out of range", Stack: "goroutine 7 [running]:\nmain.nic()"})
	}}
	var stdout, stderr bytes.Buffer
	err := testRunWith(boom, runOptions{csv: dir + "/out.csv"}, &stdout, &stderr)
	code := reportError(err, []string{"run", "boom"}, &stderr)
	checkInternal(t, code, stderr.String(), "main.nic()")
	if !strings.Contains(stderr.String(), "boom: HDN on 2 nodes: process node[0].nic panicked at 5ps: index out of range") {
		t.Errorf("stderr lacks the context: %q", stderr.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v behind", ents)
	}
}

func TestExitCodeClasses(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("deadlock"), exitFailure},
		{fmt.Errorf("x: %w", &sim.TimeOverflowError{Agent: "a", At: 1}), exitFailure},
		{badInput(errors.New("bad")), exitBadInput},
		{fmt.Errorf("ctx: %w", badInput(errors.New("bad"))), exitBadInput},
		{flagError{errors.New("unknown flag")}, exitBadInput},
		{panicError("boom"), exitInternal},
		{fmt.Errorf("ctx: %w", &sim.PanicError{Proc: "p"}), exitInternal},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

// A deadlock is reported in one line (exit 1): who waits on what and
// what the busy pollers poll, without the engine's line per process.
func TestDeadlockIsOneLine(t *testing.T) {
	dl := &sim.DeadlockError{At: 6, Blocked: []sim.BlockedProc{{Name: "wg[0]", Waits: "a flag"}, {Name: "wg[1]", Waits: "a flag"}},
		Polling: 1, Pollers: []sim.BlockedProc{{Name: "svc[0]", Waits: "queue 0's next slot"}}}
	var stderr bytes.Buffer
	code := reportError(fmt.Errorf("allreduce: CPU n=2: %w", dl), []string{"run", "allreduce"}, &stderr)
	want := "gpunetsim: allreduce: CPU n=2: deadlock at 6ps: 2 process(es) blocked with no pending event but 1 polling agent(s) that find nothing to do: 2 wait on a flag (wg[0], ...); svc[0] polls queue 0's next slot\n"
	if code != exitFailure || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, stderr.String(), want)
	}
}

// TestShortenWords checks that an error line's words past maxErrorWord
// bytes are shown by their ends, cut at rune boundaries, and that shorter
// lines and words are left whole.
func TestShortenWords(t *testing.T) {
	short := "gpunetsim: --set x=1: unknown parameter"
	if got := shortenWords(short); got != short {
		t.Errorf("short line changed: %q", got)
	}
	long := strings.Repeat("ü", 1000) // 2,000 bytes of 2-byte runes
	got := shortenWords("p = " + long + ": must be")
	if !utf8.ValidString(got) {
		t.Errorf("shortened line is not valid UTF-8: %q", got)
	}
	want := "p = " + strings.Repeat("ü", 32) + "…[1874 more bytes]…" + strings.Repeat("ü", 31) + ": must be"
	if got != want {
		t.Errorf("shortenWords = %q, want %q", got, want)
	}
	path := strings.Repeat("d/", 250) // 500 bytes: a deep path stays whole
	if got := shortenWords("open " + path + ": " + long); !strings.HasPrefix(got, "open "+path+": ") {
		t.Errorf("a 500-byte word was shortened: %q", got[:80])
	}
}
