//go:build linux

package mem

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE from <sys/mman.h> (Linux 5.14).
const madvPopulateWrite = 23

// populate faults b's pages in on another goroutine, so on the other core,
// while the simulation goes on: a functional run's node memories are a
// gigabyte touched for the first time, and the page faults (system time
// 0.4-0.6 s on the reference VM) otherwise all land on the simulation's
// thread. The kernel maps zeroed pages without the program writing, so the
// simulation's own accesses do not race with it; pages the simulation
// touches first are left as they are. Best effort: a kernel without
// MADV_POPULATE_WRITE refuses, and the pages fault in on first touch.
func populate(b []byte) {
	if len(b) < populateMin {
		return
	}
	go func() { _ = syscall.Madvise(b, madvPopulateWrite) }()
}

// discard gives b's pages back to the system (MADV_DONTNEED: they read
// as zeros and fault in again on the next write). b is page-aligned, in
// a private anonymous mapping. Best effort: a refusal keeps the bytes.
func discard(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
