//go:build !linux

package mem

// populate does nothing where MADV_POPULATE_WRITE is not available: the
// pages fault in on first touch.
func populate([]byte) {}

// discard keeps b's pages where madvise is not available.
func discard([]byte) {}
