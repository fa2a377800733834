package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunLocallyStopsItsTaskOnInterrupt: study submit --local runs each
// task as a child process; an interrupt of gpunetsim alone (a SIGTERM from
// kill, timeout or a batch system, which cancels the command's context)
// must reach the running task, not leave it running with no parent.
func TestRunLocallyStopsItsTaskOnInterrupt(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := filepath.Join(dir, "task.sbatch")
	if err := os.WriteFile(script, []byte("echo $$ > "+pidFile+"\nexec sleep 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runLocally(ctx, script, 1, true, io.Discard, io.Discard) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(b)) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task never started")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("runLocally = nil after an interrupt; want the task's error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("runLocally still waits for its task 5 s after the interrupt: the task was not stopped")
	}
}
