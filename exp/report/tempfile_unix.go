//go:build unix

package report

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// umask returns the process's file-creation mask, read from
// /proc/self/status (Linux 4.7 and later) without changing it (umask(2)
// can only read it by setting it, a window in which another goroutine's
// file would be made with the wrong mask); 022, the common default, where
// the system does not tell.
func umask() os.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o022
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
			if m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32); err == nil {
				return os.FileMode(m) & os.ModePerm
			}
		}
	}
	return 0o022
}

// processAlive reports whether a process with this pid exists (signal 0
// checks without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
