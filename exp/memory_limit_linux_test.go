//go:build linux

package exp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// cliDataSlack is what the CLI keeps aside under ulimit -d for the threads
// a run adds (cmd/gpunetsim's dataSlack).
const cliDataSlack = 128 << 20

// limitDataAtEstimate sets this process's data limit (ulimit -d: the Go
// heap, its arenas and thread stacks) to the smallest at which the CLI
// lets a run of need bytes through: what the process maps now, the CLI's
// slack and the estimate. A run that outgrows its estimate by more than
// the slack then fails its allocation instead of completing.
func limitDataAtEstimate(need float64) (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	_, after, ok := strings.Cut(string(status), "VmData:")
	kb, err := strconv.ParseUint(strings.Fields(after + " x")[0], 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("no VmData in /proc/self/status: %v", err)
	}
	lim := kb*1024 + cliDataSlack + uint64(need)
	return lim, syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: lim, Max: lim})
}
