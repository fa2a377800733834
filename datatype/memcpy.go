package datatype

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// runtimeNTMin is the size from which the Go runtime's copy on amd64
// switches to non-temporal stores (runtime/memmove_amd64.s, 0x100000).
const runtimeNTMin = 1 << 20

// Memcpy copies min(len(dst), len(src)) bytes from src to dst and returns
// that count, as copy does, but the way glibc's memcpy — the copy C MPI
// libraries make — runs on x86-64, so that a pack is compared with the
// limit a C program meets. The difference is the store kind for large
// copies: from 1 MiB the Go runtime's copy uses non-temporal stores,
// which bypass the caches and send every byte to memory, while glibc
// uses them only from its non-temporal threshold, 3/4 of the shared
// (last-level) cache (glibc 2.36's rule; sharedCacheThreshold). Between
// the two Memcpy runs the loop glibc runs there: 128 bytes per iteration,
// unaligned loads, aligned ordinary stores (kernel_amd64.s). Below 1 MiB
// and from the threshold up the runtime's copy already does what glibc
// does, and overlapping slices, builds without the assembly kernels
// (other architectures, -tags purego, -race) and CPUs without AVX use it
// throughout. docs/ddt.md gives the measured difference.
func Memcpy(dst, src []byte) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if n >= runtimeNTMin && n < sharedCacheThreshold() && !overlap(dst, src) && memcpyTemporal(dst, src) {
		return n
	}
	return copy(dst, src)
}

// overlap reports whether two non-empty slices share a byte.
func overlap(a, b []byte) bool {
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// defaultLLC is the last-level cache size assumed where the operating
// system does not report one: 32 MiB, the L3 of the development machine.
const defaultLLC = 32 << 20

// sharedCacheThreshold is glibc 2.36's non-temporal threshold, 3/4 of the
// last-level cache, with the cache size read once from Linux's sysfs
// (cpu0's highest cache level) or defaultLLC.
var sharedCacheThreshold = sync.OnceValue(func() int {
	return llcSize() / 4 * 3
})

// llcSize returns the size of cpu0's highest-level data or unified cache
// as Linux reports it, or defaultLLC.
func llcSize() int {
	best, size := 0, 0
	for i := 0; i < 8; i++ {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/"
		lv, err1 := os.ReadFile(dir + "level")
		typ, err2 := os.ReadFile(dir + "type")
		sz, err3 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		level, err := strconv.Atoi(strings.TrimSpace(string(lv)))
		if err != nil || strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		if b := parseCacheSize(strings.TrimSpace(string(sz))); b > 0 && level > best {
			best, size = level, b
		}
	}
	if size == 0 {
		return defaultLLC
	}
	return size
}

// parseCacheSize reads sysfs cache sizes such as "32768K" or "2M"; it
// returns 0 for anything else.
func parseCacheSize(s string) int {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 || v > 1<<30/mul {
		return 0
	}
	return v * mul
}
