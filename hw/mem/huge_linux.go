//go:build linux

package mem

import "syscall"

// madvHugepage is MADV_HUGEPAGE from <sys/mman.h>.
const madvHugepage = 14

// adviseHuge asks the kernel to back b with transparent huge pages. Node
// memories are large and touched once per simulated byte; with 4 KiB pages
// the first-touch page faults alone cost as much as the simulation. The
// advice is best effort: errors (no THP, madvise mode off) are ignored.
func adviseHuge(b []byte) {
	if len(b) >= hugeThreshold {
		_ = syscall.Madvise(b, madvHugepage)
	}
}
