package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// slurmStudy is a small study for the Slurm round trip: 2 × 2 × 4
// allreduce points, 2 × 3 latency points and the strategies table.
const slurmStudy = `name = "roundtrip"
set = ["allreduce.size=96KiB", "allreduce.nodes=2,3", "allreduce.strategies=CPU,HDN,GDS,GPUTN"]
sweep = ["link.bandwidth=50Gbps..100Gbps*2"]

[[experiment]]
name = "allreduce"

[[experiment]]
name = "latency"

[[experiment]]
name = "strategies"
`

// buildGpunetsim puts the command in dir as a file named gpunetsim: a
// hard link to (or copy of) this test binary, which testscript.Main (see
// TestMain) runs as the command when it is called by that name. No
// toolchain is needed, and Slurm tasks can run it like the real program.
func buildGpunetsim(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "gpunetsim")
	if os.Link(self, exe) == nil {
		return exe
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// runExe runs the built gpunetsim with a deadline and fails the test on
// error.
func runExe(t *testing.T, ctx context.Context, dir, exe string, args ...string) string {
	t.Helper()
	c := exec.CommandContext(ctx, exe, args...)
	c.Dir = dir
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		t.Fatalf("gpunetsim %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// waitSlurmNode waits until a node is idle, mixed or allocated: under a
// heavy load slurmctld marks a live slurmd "not responding" for a while
// and brings it back itself (ReturnToService=2).
func waitSlurmNode(patience time.Duration) ([]byte, error) {
	deadline := time.Now().Add(patience)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), slurmProbe)
		out, err := probeCommand(ctx, "sinfo", "-h", "-o", "%T").Output()
		cancel()
		if err == nil && regexp.MustCompile(`(?m)^(idle|mixed|allocated)$`).Match(out) {
			return out, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no node idle, mixed or allocated")
			}
			return out, err
		}
		time.Sleep(time.Second)
	}
}

// slurmProbe bounds one query of the Slurm controller: a controller that
// is down makes scontrol and sinfo retry for tens of seconds.
const slurmProbe = 3 * time.Second

// probeCommand is a Slurm query killed at ctx's deadline, its output
// abandoned a second later even if a child process still holds it.
func probeCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.WaitDelay = time.Second
	return c
}

// inCI reports whether the test runs in CI (.ci/run with CI=true), where
// a missing Slurm is a failure rather than a reason to skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// slurmUp makes sure a Slurm controller and node answer, within seconds:
// it pings the controller; if that fails it starts the one-node cluster
// with .ci/slurm-up when it may (in CI, or with GPUNETSIM_SLURM_UP=1: it
// writes /etc/slurm and starts daemons, so not on a developer's machine
// unasked), and otherwise skips the test with the reason.
func slurmUp(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slurmProbe)
	out, err := probeCommand(ctx, "scontrol", "ping").CombinedOutput()
	cancel()
	up := err == nil && strings.Contains(string(out), "UP")
	if !up {
		why := strings.TrimSpace(string(out))
		if err != nil {
			why = strings.TrimSpace(why + " " + err.Error())
		}
		if !inCI() && os.Getenv("GPUNETSIM_SLURM_UP") != "1" {
			t.Skipf("Slurm is installed but its controller does not answer (scontrol ping: %s): start it with .ci/slurm-up, or set GPUNETSIM_SLURM_UP=1 to let the test start it", why)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", ".ci", "slurm-up")).CombinedOutput(); err != nil {
			t.Fatalf("the Slurm controller does not answer (%s) and .ci/slurm-up failed: %v\n%s", why, err, out)
		}
	}
	patience := 10 * time.Second
	if inCI() {
		patience = 90 * time.Second // a loaded CI machine brings a node back slowly
	}
	if out, err := waitSlurmNode(patience); err != nil {
		if !inCI() {
			t.Skipf("the Slurm controller answers but no node is up after %v (sinfo: %q, %v): start one with .ci/slurm-up", patience, out, err)
		}
		t.Fatalf("sbatch is installed but no Slurm node is up (sinfo: %q, %v): start one with .ci/slurm-up", out, err)
	}
}

// TestSlurmRoundTrip submits a study as a real Slurm job array (one task
// per slice, all writing into one cache), waits for it, collects the
// report, and checks that every file equals a local run's byte for byte.
// It needs sbatch and a running cluster (.ci/study-deps installs Slurm
// and runs .ci/slurm-up); without sbatch, or with its daemons down outside
// CI, it is skipped within seconds, saying why (slurmUp).
func TestSlurmRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("sbatch not found: no Slurm here (.ci/study-deps installs it and runs .ci/slurm-up)")
	}
	slurmUp(t)
	dir := t.TempDir()
	exe := buildGpunetsim(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "s.toml"), []byte(slurmStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	out := runExe(t, ctx, dir, exe, "study", "submit", "s.toml", "--tasks", "3", "--cache", "shared", "--out", "slurm", "--wait")
	if !strings.Contains(out, "submitted Slurm job ") {
		t.Fatalf("submit printed %q", out)
	}
	for i := range 3 {
		logs, _ := filepath.Glob(filepath.Join(dir, "slurm", "slurm-*_"+string(rune('0'+i))+".out"))
		if len(logs) != 1 {
			t.Fatalf("task %d: logs %v", i, logs)
		}
		b, err := os.ReadFile(logs[0])
		if err != nil || !strings.Contains(string(b), "slice "+string(rune('0'+i))+"/3: ") {
			t.Fatalf("task %d log %s: %q, %v", i, logs[0], b, err)
		}
	}
	runExe(t, ctx, dir, exe, "study", "collect", "s.toml", "--cache", "shared", "--out", "slurm", "-q")
	runExe(t, ctx, dir, exe, "study", "run", "s.toml", "--cache", "local-cache", "--out", "local", "-q")

	files, _ := filepath.Glob(filepath.Join(dir, "local", "*"))
	if len(files) < 8 {
		t.Fatalf("local run wrote only %v", files)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "slurm", filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withoutProvenance(got), withoutProvenance(want)) {
			t.Errorf("%s: the Slurm study's file differs from the local run's (provenance aside)", filepath.Base(f))
		}
	}
}
