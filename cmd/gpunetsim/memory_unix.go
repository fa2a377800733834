//go:build unix

package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
)

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
		{syscall.RLIMIT_AS, "VmSize:", addressSlack(), "address space left under the limit (ulimit -v)"},
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

// arenaEnv caps the C library's malloc arenas (glibc reads it when the
// process starts).
const arenaEnv = "MALLOC_ARENA_MAX"

// capArenas re-executes the program with one malloc arena when it runs
// under an address-space limit (ulimit -v) on Linux with the C library
// linked: every thread the runtime starts through cgo otherwise reserves
// a 64 MiB arena of address space it barely uses (gpunetsim allocates
// nothing through the C library), which put the smallest ulimit -v a run
// could start under at about 2.5 GiB (1.65 GiB mapped at start, 512 MiB
// of slack); with one arena it maps 1.3 GiB at start and needs 128 MiB of
// slack. It returns only when it does not re-execute (no limit, the
// variable already set, no cgo, or the exec failed: the run goes on with
// the larger slack). The process keeps its pid, arguments, descriptors
// and the rest of its environment.
func capArenas() {
	if runtime.GOOS != "linux" || os.Getenv(arenaEnv) != "" || !cgoLinked() {
		return
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) || r.Cur == 0 {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, append(os.Environ(), arenaEnv+"=1"))
}

// cgoLinked reports whether the binary was built with cgo (its threads
// then start through the C library); true when unknown.
func cgoLinked() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return true
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value != "0"
		}
	}
	return true
}

// addressSlack is asSlack, or asSlackCapped when the C library's arenas
// cannot grow with the threads (capped to at most 2, or no cgo).
func addressSlack() uint64 {
	if n, err := strconv.Atoi(os.Getenv(arenaEnv)); err == nil && n >= 1 && n <= 2 || !cgoLinked() {
		return asSlackCapped
	}
	return asSlack
}
