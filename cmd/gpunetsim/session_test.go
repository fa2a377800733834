package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeString returns a pending write of s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// leftovers lists the hidden temporaries in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// A run's outputs appear together or not at all: when the second output's
// content fails, neither final file changes and no temporary is left.
func TestCommitAllWritesNothingWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	csv, js := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json")
	for _, f := range []string{csv, js} {
		if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &session{stderr: io.Discard}
	a, err := s.reserve("--csv", csv)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.reserve("--json", js)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = s.commitAll([]pending{{a, writeString("new")}, {b, func(io.Writer) error { return boom }}})
	if !errors.Is(err, boom) {
		t.Fatalf("commitAll: %v, want the write's error", err)
	}
	if got := readFile(t, csv) + "," + readFile(t, js); got != "old,old" {
		t.Fatalf("after a failed commit the files hold %q, want old,old", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("temporaries left: %v", l)
	}
}

// Should a rename fail part way (here the second output's path became a
// directory after it was reserved), the outputs already renamed are put
// back: the earlier file's old content returns, a new file goes.
func TestCommitAllUndoesRenamesWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	old, fresh, blocked := filepath.Join(dir, "old.csv"), filepath.Join(dir, "new.svg"), filepath.Join(dir, "r.json")
	if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &session{stderr: io.Discard}
	var outs []*outFile
	for _, p := range []string{old, fresh, blocked} {
		o, err := s.reserve("--out", p)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blocked, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := s.commitAll([]pending{{outs[0], writeString("new")}, {outs[1], writeString("new")}, {outs[2], writeString("new")}})
	if err == nil || !strings.Contains(err.Error(), "r.json") {
		t.Fatalf("commitAll: %v, want the failed rename of r.json", err)
	}
	if got := readFile(t, old); got != "old" {
		t.Errorf("old.csv holds %q after the undo, want old", got)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("new.svg stayed after the undo")
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("temporaries or backups left: %v", l)
	}
}

// Success replaces every file and leaves no temporary or backup.
func TestCommitAllReplacesAll(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.json")
	if err := os.WriteFile(a, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &session{stderr: io.Discard}
	oa, err := s.reserve("--csv", a)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := s.reserve("--json", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.commitAll([]pending{{oa, writeString("A")}, {ob, writeString("B")}}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, a) + readFile(t, b); got != "AB" {
		t.Fatalf("files hold %q, want AB", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("temporaries or backups left: %v", l)
	}
}

// An input registered after an output, or an output reserved after an
// input, is compared as a file: a hard link or another spelling is the
// same file.
func TestInputsAndOutputsCompareByFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l.toml")
	if err := os.Link(cfg, link); err != nil {
		t.Skip(err)
	}
	s := &session{stderr: io.Discard}
	if err := s.input("--config", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reserve("--csv", link); err == nil || exitCode(err) != exitBadInput {
		t.Fatalf("an output hard-linked to the config was reserved: %v", err)
	}
	if _, err := s.reserve("--csv", filepath.Join(dir, ".", "sub", "..", "c.toml")); err == nil {
		t.Fatal("an output spelled another way than the config was reserved")
	}
	s2 := &session{stderr: io.Discard}
	if _, err := s2.reserve("--json", filepath.Join(dir, "new.json")); err != nil {
		t.Fatal(err)
	}
	if err := s2.input("ml.table", filepath.Join(dir, "./new.json")); err == nil {
		t.Fatal("an input equal to a reserved (not yet existing) output was accepted")
	}
	s2.discard()
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("temporaries left: %v", l)
	}
}

// outDir creates the missing directories and the session removes them
// again, deepest first, while they are empty.
func TestOutDirRemovedWhileEmpty(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b")
	s := &session{stderr: io.Discard}
	if err := s.outDir("--out", out); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		t.Fatalf("outDir did not create %s: %v", out, err)
	}
	s.discard()
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Fatal("the created directories stayed, empty")
	}
	s = &session{stderr: io.Discard}
	if err := s.outDir("--out", out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "kept"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.discard()
	if _, err := os.Stat(filepath.Join(out, "kept")); err != nil {
		t.Fatal("a directory holding a file was removed")
	}
}
