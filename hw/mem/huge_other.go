//go:build !linux

package mem

// adviseHuge does nothing where transparent huge pages are not available.
func adviseHuge([]byte) {}
