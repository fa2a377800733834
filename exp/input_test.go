package exp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadInputFile reads small files and refuses, within bounded time and
// memory, what would never end or is too large.
func TestReadInputFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.toml")
	if err := os.WriteFile(small, []byte("[run]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	hasFIFO := syscall.Mkfifo(fifo, 0o644) == nil
	for _, tc := range []struct {
		path  string
		want  string // "" for success
		bytes int
	}{
		{small, "", 6},
		{big, "too large", 0},
		{"/dev/zero", "too large", 0},
		{"/dev/null", "", 0},
		{dir, "is a directory", 0},
		{filepath.Join(dir, "none"), "no such file", 0},
		{fifo, "is a pipe", 0}, // read again by each point: refused, at once
	} {
		if tc.path == fifo && !hasFIFO {
			continue
		}
		done := make(chan struct{})
		var b []byte
		var err error
		go func() { b, err = ReadInputFile(tc.path, 1000); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading blocked", tc.path)
		}
		if tc.want == "" {
			if err != nil || len(b) != tc.bytes {
				t.Errorf("%s: %d bytes, %v; want %d bytes", tc.path, len(b), err, tc.bytes)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.path, err, tc.want)
		}
		if tc.want == "too large" && !errors.Is(err, ErrInputTooLarge) {
			t.Errorf("%s: %v does not wrap ErrInputTooLarge", tc.path, err)
		}
	}
}

// An input read once (--config, validate --file) that is a FIFO waits for
// its writer, as cat does, and reads what it writes: opened non-blocking,
// a FIFO without a writer yet read as empty, and a configuration of
// nothing ran the defaults with exit 0.
func TestReadInputOnceWaitsForFIFOWriter(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		b, err := ReadInputOrStdin(fifo, nil, 1000)
		got <- result{b, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("read %q, %v before any writer opened the FIFO", r.b, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := os.WriteFile(fifo, []byte("[run]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil || string(r.b) != "[run]\n" {
			t.Errorf("read %q, %v; want the writer's \"[run]\\n\"", r.b, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after the writer wrote and closed")
	}
}
