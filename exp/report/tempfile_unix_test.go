//go:build unix

package report

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A writer killed between reserving and renaming (SIGKILL) leaves its
// temporary; the next write of the same output removes it, and keeps the
// temporaries of live writers, of other hosts and of other outputs.
func TestOutputTempRemovesOrphans(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	host := tempHost()
	names := []struct {
		name string
		keep bool
	}{
		{fmt.Sprintf(".out.csv.tmp-%s-%d-123", host, dead.Process.Pid), false},
		{fmt.Sprintf(".out.csv.tmp-%s-%d-123.old", host, dead.Process.Pid), false},
		{fmt.Sprintf(".out.csv.tmp-%s-%d-456", host, os.Getppid()), true}, // a live process
		{fmt.Sprintf(".out.csv.tmp-other_host-%d-123", dead.Process.Pid), true},
		{fmt.Sprintf(".out.json.tmp-%s-%d-123", host, dead.Process.Pid), true},
		{fmt.Sprintf(".out.csv.tmp-%s-x-123", host), true},
		{".out.csv.tmp123", true}, // no writer named: cannot tell
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n.name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "out.csv"), func(w io.Writer) error { _, err := io.WriteString(w, "x\n"); return err }); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	for _, n := range names {
		if slices.Contains(left, n.name) != n.keep {
			t.Errorf("%s: kept %v, want %v (left: %v)", n.name, !n.keep, n.keep, left)
		}
	}
	if !slices.Contains(left, "out.csv") {
		t.Errorf("out.csv not written: %v", left)
	}
}
