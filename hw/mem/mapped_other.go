//go:build !linux

package mem

// mapAnon returns nil where anonymous mappings are not used: allocations
// stay on the Go heap.
func mapAnon(int) []byte { return nil }

// unmapAnon does nothing.
func unmapAnon([]byte) {}
