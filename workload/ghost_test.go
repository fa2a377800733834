package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// A GHN host helper's empty polls that stand in marks (model/shmem's
// ghost.go) are its polls: GHN_APU's and GHN_DGPU_HOSTQ's allreduce ends
// at the same times per node, verified, with the same service reports
// (each thread's polls, counts, time on its core, energy), with marks
// and without (a tracer, which needs every poll's span), only in fewer
// events: one fewer per mark passed. With several queues per thread
// (rounds that end on a mark, quiets that find nothing done as marks:
// their mutex, CT read and unlock, the lock count in the report), one
// queue per thread, one thread (no mutex), and two helpers time-sliced
// on one core (a stretch never crosses the slice's end). It fails
// without the poll count, the quiet clock or the lock count in
// ghostSettle.
func TestGhostPollsArePolls(t *testing.T) {
	for _, c := range []struct {
		name    string
		s       strategy.Strategy
		mode    string
		threads int
		cores   int
		wgs     int
	}{
		{"GHN_APU", strategy.GHNAPU, "apu", 0, 0, 0},
		{"GHN_DGPU_HOSTQ", strategy.GHNDGPUHostQ, "dgpu", 0, 0, 0},
		{"GHN_APU one thread", strategy.GHNAPU, "apu", 1, 0, 0},
		{"GHN_APU one queue per thread", strategy.GHNAPU, "apu", 0, 0, 2},
		{"GHN_APU 2 threads on 1 core", strategy.GHNAPU, "apu", 2, 1, 0},
	} {
		run := func(trace bool) (string, uint64, uint64) {
			hw := cluster.CompNet()
			hw.GPU.Mode = c.mode
			hw.CPU.TimeSlice = 20 * sim.Microsecond // slice ends within the run
			sp := shmem.DefaultSpec()
			if c.threads > 0 {
				sp.Threads = c.threads
			}
			sp.HostCores = c.cores
			out, events, marks, _ := pollRun(t, c.name, hw, c.s, sp, c.wgs, trace)
			return out, events, marks
		}
		polls, e0, m0 := run(true)
		ghosts, e1, m1 := run(false)
		if polls != ghosts {
			t.Errorf("%s: polls %s\nas marks %s", c.name, polls, ghosts)
		}
		if m1 <= m0 || e0-e1 != m1-m0 {
			t.Errorf("%s: %d events and %d marks with a tracer, %d and %d without: want more marks, each one event fewer", c.name, e0, m0, e1, m1)
		}
	}
}
