//go:build linux

package mem

import "syscall"

// mapAnon maps n bytes of private anonymous memory (zeroed, faulted in on
// first touch), or returns nil.
func mapAnon(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// unmapAnon unmaps b, which mapAnon returned.
func unmapAnon(b []byte) { _ = syscall.Munmap(b) }
