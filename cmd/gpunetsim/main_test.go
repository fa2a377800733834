package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the scripts run "gpunetsim" through run, in a copy of the
// test binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpunetsim": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
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
// following checks, and fails unless it exits with status N.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("GPUNETSIM_UPDATE_SCRIPTS") == "1",
		Cmds:          map[string]func(*testscript.TestScript, bool, []string){"exits": exits},
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
