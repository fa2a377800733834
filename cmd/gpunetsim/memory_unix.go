//go:build unix

package main

import "syscall"

// limitLeft is what the process's resource limits leave a run: an
// address-space limit (ulimit -v, RLIMIT_AS) less what the process has
// mapped already (VmSize) and a data limit (ulimit -d, RLIMIT_DATA, which
// counts writable private memory: the Go heap, thread stacks) less what
// it holds already (VmData), each less the slack a run adds beyond its
// estimate; the smaller of the two and which limit it is. ok is false
// when neither limit is set. Why: under either limit the Go runtime's
// first failed mapping is a crash with a stack, so the estimate must be
// compared with what is left of the limit, not with the free memory.
func limitLeft() (left uint64, what string, ok bool) {
	for _, l := range []struct {
		res   int
		key   string
		slack uint64
		what  string
	}{
		{syscall.RLIMIT_AS, "VmSize:", asSlack, "address space left under the limit (ulimit -v)"},
		{syscall.RLIMIT_DATA, "VmData:", dataSlack, "data memory left under the limit (ulimit -d)"},
	} {
		var r syscall.Rlimit
		if err := syscall.Getrlimit(l.res, &r); err != nil || r.Cur == ^uint64(0) || r.Cur == 0 {
			continue
		}
		n := uint64(1) // nothing left: every estimate is refused
		if used := procKB("/proc/self/status", l.key)*1024 + l.slack; used < r.Cur {
			n = r.Cur - used
		}
		if !ok || n < left {
			left, what, ok = n, l.what, true
		}
	}
	return left, what, ok
}
