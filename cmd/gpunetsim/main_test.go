package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the scripts run "gpunetsim" through run, in a copy of the
// test binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpunetsim": func() { capArenas(); os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar. Set GPUNETSIM_UPDATE_SCRIPTS=1
// to rewrite the expected output of failing cmp commands in place.
//
// Besides the standard commands, scripts have
//
//	exits N prog args...
//
// which runs prog like exec, keeps its stdout and stderr for the
// following checks, and fails unless it exits with status N;
//
//	interrupt SIGNAL WAIT prog args...
//
// which starts prog with a standard input that never ends, waits until
// WAIT holds (a glob in $WORK matching a file, or a duration such as 1s),
// sends SIGNAL (INT or TERM), and fails unless prog exits with 128 + the
// signal's number having printed "gpunetsim: interrupted"; and
//
//	nofiles GLOB...
//
// which fails if any GLOB (relative to $WORK) matches a file; and
//
//	closedout prog args...
//
// which runs prog with its standard output a pipe whose reading end is
// already closed (as `prog | head -0` leaves it) and fails unless prog
// exits with 1 having said "broken pipe", or with 141 (128 + SIGPIPE)
// having said "gpunetsim: interrupted".
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("GPUNETSIM_UPDATE_SCRIPTS") == "1",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits": exits, "interrupt": interrupt, "nofiles": nofiles, "closedout": closedOut,
		},
	})
}

func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d; want %d", args[1], got, want)
	}
}

func closedOut(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: closedout prog args...")
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		ts.Fatalf("closedout: %v", err)
	}
	r, w, err := os.Pipe()
	ts.Check(err)
	r.Close() // every write to the pipe fails (EPIPE, SIGPIPE)
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "TMPDIR="+ts.Getenv("TMPDIR"), "PATH="+ts.Getenv("PATH"))
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	ts.Logf("stderr: %s", stderr.String())
	// The failed write ends the command (status 1, "broken pipe"), unless
	// the SIGPIPE handler records the signal first (141, "interrupted").
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 && ee.ExitCode() != 128+int(syscall.SIGPIPE) {
		ts.Fatalf("%s with its standard output closed: %v; want exit status 1 or %d", args[0], err, 128+int(syscall.SIGPIPE))
	}
	if out := stderr.String(); !strings.Contains(out, "broken pipe") && !strings.Contains(out, "gpunetsim: interrupted") {
		ts.Fatalf("%s did not say why it stopped:\n%s", args[0], out)
	}
}

func interrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: interrupt INT|TERM WAIT prog args...")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM}[args[0]]
	if sig == 0 {
		ts.Fatalf("interrupt: unknown signal %q", args[0])
	}
	path, err := exec.LookPath(args[2])
	if err != nil {
		ts.Fatalf("interrupt: %v", err)
	}
	cmd := exec.Command(path, args[3:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "TMPDIR="+ts.Getenv("TMPDIR"), "PATH="+ts.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // open until the end: a reader of stdin keeps waiting
	ts.Check(err)
	defer stdin.Close()
	ts.Check(cmd.Start())
	if d, err := time.ParseDuration(args[1]); err == nil {
		time.Sleep(d)
	} else {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if m, _ := filepath.Glob(filepath.Join(cmd.Dir, args[1])); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				ts.Fatalf("interrupt: %s never appeared", args[1])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	ts.Check(cmd.Process.Signal(sig))
	err = cmd.Wait()
	ts.Logf("stderr: %s", stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
		ts.Fatalf("%s after SIG%s: %v; want exit status %d", args[2], args[0], err, 128+int(sig))
	}
	if !strings.Contains(stderr.String(), "gpunetsim: interrupted") {
		ts.Fatalf("stderr does not say it was interrupted: %q", stderr.String())
	}
}

func nofiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nofiles GLOB...")
	}
	for _, g := range args {
		if m, _ := filepath.Glob(filepath.Join(ts.Getenv("WORK"), g)); len(m) > 0 {
			ts.Fatalf("left behind: %v", m)
		}
	}
}
