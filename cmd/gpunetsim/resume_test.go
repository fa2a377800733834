package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cacheEntries returns the cache's entry files (temporary files, which
// start with a dot, excluded).
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestKilledStudyResumes kills (SIGKILL) a study process part way, checks
// the cache holds only whole entries, re-runs the study into the same
// directory, and checks that it simulates only the missing points, writes
// exactly what an uninterrupted run writes, and removes the temporaries
// the killed run had reserved its outputs in.
func TestKilledStudyResumes(t *testing.T) {
	dir := t.TempDir()
	exe := buildGpunetsim(t, dir)
	args := []string{"study", "run", "allreduce", "--set", "allreduce.nodes=2-9", "--set", "allreduce.size=256KiB", "--set", "allreduce.strategies=CPU,HDN,GDS,GPUTN",
		"--set", "run.parallel=1", "--sweep", "link.bandwidth=50Gbps,100Gbps"} // 8 × 4 × 2 = 64 points
	const total = 64
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	c := exec.CommandContext(ctx, exe, append(args, "--cache", "c", "--out", "killed", "-q")...)
	c.Dir = dir
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for len(cacheEntries(t, filepath.Join(dir, "c"))) < 3 {
		if ctx.Err() != nil {
			t.Fatal("the study wrote no cache entries")
		}
		time.Sleep(2 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	entries := cacheEntries(t, filepath.Join(dir, "c"))
	if len(entries) >= total {
		t.Fatalf("the study finished (%d entries) before it was killed", len(entries))
	}
	for _, e := range entries {
		b, err := os.ReadFile(e)
		var v struct{ Key, Result json.RawMessage }
		if err != nil || json.Unmarshal(b, &v) != nil || len(v.Result) == 0 {
			t.Fatalf("entry %s is damaged: %v", e, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "killed", "allreduce.csv")); err == nil {
		t.Fatal("the killed study wrote its report")
	}

	var stderr bytes.Buffer
	killedTemps, _ := filepath.Glob(filepath.Join(dir, "killed", ".*.tmp*"))
	if len(killedTemps) == 0 {
		t.Fatal("the killed study had reserved no outputs")
	}
	c = exec.CommandContext(ctx, exe, append(args, "--cache", "c", "--out", "killed")...)
	c.Dir, c.Stderr = dir, &stderr
	if out, err := c.Output(); err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, out, stderr.String())
	}
	m := regexp.MustCompile(`(\d+)/(\d+) points \((\d+) cached, (\d+) simulated\)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no progress line: %q", stderr.String())
	}
	cached, _ := strconv.Atoi(m[3])
	if m[2] != strconv.Itoa(total) || cached != len(entries) {
		t.Fatalf("resumed: %s, want %d cached of %d", m[0], len(entries), total)
	}

	runExe(t, ctx, dir, exe, append(args, "--cache", "fresh-cache", "--out", "whole", "-q")...)
	for _, f := range []string{"allreduce.csv", "allreduce.json", "allreduce.svg", "report.html"} {
		want, err := os.ReadFile(filepath.Join(dir, "whole", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "killed", f))
		// Equal but for the provenance (command line, start, wall time).
		if err != nil || !bytes.Equal(withoutProvenance(got), withoutProvenance(want)) {
			t.Errorf("%s: the resumed study's file differs from an uninterrupted run's (%v)", f, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "killed", ".*")); len(left) > 0 {
		t.Errorf("the killed run's temporaries stay after the resumed run: %v", left)
	}
}

// Ctrl-C ends a study at once with exit code 130 and a line saying how
// far it got and how to resume.
func TestInterruptedStudySaysHowToResume(t *testing.T) {
	dir := t.TempDir()
	exe := buildGpunetsim(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, exe, "study", "run", "allreduce", "--set", "allreduce.nodes=2-17", "--set", "allreduce.size=512KiB",
		"--set", "run.parallel=1", "--cache", "c", "--out", "o")
	c.Dir = dir
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for len(cacheEntries(t, filepath.Join(dir, "c"))) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the study wrote no cache entries")
		}
		time.Sleep(2 * time.Millisecond)
	}
	c.Process.Signal(os.Interrupt)
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`gpunetsim: interrupted: \d+ of \d+ points are in the cache c; run the same command again to resume(; removed \d+ unfinished output file\(s\))?\n$`).MatchString(stderr.String()) {
		t.Fatalf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); err == nil {
		t.Fatal("the interrupted study left its output directory (created for it)")
	}
}

// provenanceParts match an output's provenance: the JSON object and the
// HTML report's line.
var provenanceParts = regexp.MustCompile(`(?s)"provenance": \{.*?\},\n\s*|<p class="prov">.*?</p>\n`)

// withoutProvenance returns b without its provenance.
func withoutProvenance(b []byte) []byte { return provenanceParts.ReplaceAll(b, nil) }
