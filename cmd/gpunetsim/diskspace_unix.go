//go:build unix

package main

import "syscall"

// freeDisk returns the bytes free for an unprivileged user in the file
// system holding dir (0 when unknown).
func freeDisk(dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return uint64(st.Bavail) * uint64(st.Bsize)
}
