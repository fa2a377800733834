package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/study"
	"github.com/gpunetsim/gpunetsim/unit"
)

// memoryLimit is the memory a run may use: run.mem_limit when set, else
// MemAvailable of /proc/meminfo (0 when unknown: no check).
func memoryLimit(cfg exp.Config) (avail uint64, what string) {
	if cfg.Run.MemLimit > 0 {
		// What the process's own limits leave still bounds it: past
		// them the runtime crashes, whatever the user allowed.
		if left, lim, ok := limitLeft(); ok && left < uint64(cfg.Run.MemLimit) {
			return left, lim
		}
		return uint64(cfg.Run.MemLimit), "run.mem_limit"
	}
	return availableMemory()
}

// asSlack and dataSlack are what a run maps beyond what the process
// holds when it checks its estimate and beyond the estimate itself,
// under an address-space and a data limit: thread stacks (8 MiB each) for
// the threads the runtime adds, and under an address-space limit the
// C library's per-thread arenas (64 MiB reservations) of the threads the
// runtime's cgo starts (gpunetsim's flags package pulls in net), unless
// the arenas are capped (arenasCapped: main re-executes itself so under
// ulimit -v); the address-space figures are the VmPeak−VmSize of small
// runs on 2 and 16 threads (about 220 MiB past the estimate with an
// arena per thread, under 20 MiB with one arena).
const (
	asSlack       = 512 << 20
	asSlackCapped = 128 << 20
	dataSlack     = 128 << 20
)

// availableMemory is the least of MemAvailable of /proc/meminfo, the
// cgroup's memory.max and what the process's limits (ulimit -v, -d) leave
// (limitLeft), in bytes, and which it is (0 when none is known).
func availableMemory() (uint64, string) {
	avail, what := procKB("/proc/meminfo", "MemAvailable:")*1024, "memory available (MemAvailable)"
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if max, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && max > 0 && (avail == 0 || max < avail) {
			avail, what = max, "memory limit of the cgroup (memory.max)"
		}
	}
	if left, lim, ok := limitLeft(); ok && (avail == 0 || left < avail) {
		avail, what = left, lim
	}
	return avail, what
}

// checkRunMemory refuses, as bad input, a run of experiment name on cfg
// that exp.EstimateMemory says cannot fit, before any work: the operating
// system would otherwise kill it part way.
func checkRunMemory(name string, cfg exp.Config) error {
	// A run that would crawl to the end of the clock is refused too.
	if err := exp.EstimateWork(name, cfg).PastClock(); err != nil {
		return badInput(err)
	}
	avail, what := memoryLimit(cfg)
	if avail == 0 {
		return nil
	}
	need := exp.EstimateMemory(name, cfg)
	if !need.Fits(avail) {
		return badInput(need.Refusal(avail, what))
	}
	raiseSoftLimit(need.Bytes, avail)
	// The points the experiment's own lists cross into, listed before
	// the first simulation runs.
	return badInput(study.ListRefusal(name, cfg, need.Bytes, study.MemLimit{Bytes: avail, What: what}))
}

// raiseSoftLimit raises the Go runtime's soft heap limit to a run's
// estimate when the estimate is above it (never past avail, what the run
// may use), unless GOMEMLIMIT set it. Why: a heap that outgrows the soft
// limit makes the collector run again as soon as it ends, and at the
// CLI's default of 4 GiB (defaultMemLimit) every run whose heap passed
// it paid that: GHN_APU's halo3d weak 26 on 8,192 GPUs (7.67 GB peak, an
// estimate of 11.3 GiB) took 1,002.9 CPU-s, 16 times the 2,048-GPU run,
// and a 1,024-GPU run under GOMEMLIMIT=500MiB took 4.5 times its CPU. The
// estimate is an upper bound of the peak (docs/memory.md), so a heap
// within it is one the run was allowed.
func raiseSoftLimit(need float64, avail uint64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(softLimit(need, avail, debug.SetMemoryLimit(-1)))
}

// softLimit is the soft heap limit for a run estimated to need need bytes
// with avail bytes it may use, the limit being cur: the least of need and
// avail, when that is above cur; else cur.
func softLimit(need float64, avail uint64, cur int64) int64 {
	want := min(need, float64(avail))
	if want > float64(cur) {
		return int64(want)
	}
	return cur
}

// expandPlan expands a study within the memory available (a sweep cross
// product too large to plan is bad input, refused before its
// configurations are made) and checks each of its runs' memory.
//
// note, when not nil, is told of an entry whose sweeps cross into at least
// planNoteConfigs configurations once its plan is known to fit: planning
// them takes minutes, which passed without a word.
func expandPlan(s study.Study, version string, note io.Writer) (*study.Plan, error) {
	avail, what := availableMemory()
	lim := study.MemLimit{Bytes: avail, What: what}
	if note != nil {
		lim.Planning = func(e study.Entry, n float64) {
			if n < planNoteConfigs {
				return
			}
			var names []string
			for _, sw := range e.Sweeps {
				names = append(names, fmt.Sprintf("%s (%d values)", sw.Name, len(sw.Values)))
			}
			fmt.Fprintf(note, "gpunetsim: note: %s: --sweep %s: %.0f configurations to plan before the first point runs (minutes); then progress on stderr\n",
				e.Label, strings.Join(names, " × "), n)
		}
	}
	lim.Run = func(name string, cfg exp.Config) error {
		// What gpunetsim run refuses before any work (run.partitions > 1
		// for an experiment on one engine, GPU counts a partitioned run
		// cannot take, a NIC without a strategy the experiment always
		// runs), a study refuses too, instead of failing at its first
		// point (exit 1).
		if e, err := exp.Lookup(name); err == nil {
			if err := e.CheckRun(cfg); err != nil {
				return err
			}
		}
		return checkRunMemory(name, cfg) // before the run's points are listed
	}
	plan, err := study.ExpandWithin(s, version, lim)
	if err != nil {
		return nil, badInput(err)
	}
	if err := checkPlanMemory(plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// planNoteConfigs is the number of configurations of one study entry from
// which planning them is announced: about 1–3 ms each (90,000 took over
// 90 s at load 15).
const planNoteConfigs = 10000

// checkPlanMemory checks every run of a study plan (each runs alone).
func checkPlanMemory(plan *study.Plan) error {
	for _, r := range plan.Runs {
		name := plan.Study.Entries[r.Entry].Experiment.Name
		if err := checkRunMemory(name, r.Config); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// addMemLimitFlag adds --mem-limit to a command without a configuration
// (goal run, ddt bench), the run.mem_limit of the others.
func addMemLimitFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "mem-limit", "", "memory the command may use, e.g. 8GiB; a run estimated to need more is refused before it starts (default: the memory available now)")
}

// flagMemoryLimit is --mem-limit when given, else the memory available.
func flagMemoryLimit(flag string) (uint64, string, error) {
	if flag == "" {
		avail, what := availableMemory()
		return avail, what, nil
	}
	b, err := unit.ParseBytes(flag)
	if err != nil || b <= 0 {
		if err == nil {
			err = errors.New("must be positive")
		}
		return 0, "", fmt.Errorf("--mem-limit %s: %w", flag, err)
	}
	return uint64(b), "--mem-limit", nil
}

// benchFactor is the bytes ddt bench holds per byte of --size at its
// peak: the memcpy source and destination kept for comparison, and a
// vector row's strided user buffer (twice the packed size) with its
// packed buffer.
const benchFactor = 5

// checkBenchMemory refuses a ddt bench whose buffers cannot fit.
func checkBenchMemory(size unit.Bytes, memLimit string) error {
	avail, what, err := flagMemoryLimit(memLimit)
	if err != nil || avail == 0 {
		return err
	}
	need := float64(size) * benchFactor
	if need <= float64(avail) {
		return nil
	}
	return fmt.Errorf("--size %v: ddt bench needs about %s of memory (%d× the size), more than the %s %s",
		size, exp.FormatBytes(need), benchFactor, exp.FormatBytes(float64(avail)), what)
}

// announceRunEvents is the estimated events above which a run says so
// before it starts (about a minute at a few million events per second).
const announceRunEvents = 2e8

// announceRun prints, for a run whose estimated events (exp.EstimateWork)
// pass announceRunEvents, one note with the estimate and the parameter
// that makes it long, and reports whether it did: the run then shows
// progress. Valid inputs that merely take long still run.
func announceRun(w io.Writer, name string, cfg exp.Config) bool {
	work := exp.EstimateWork(name, cfg)
	if work.Events < announceRunEvents {
		return false
	}
	fmt.Fprintf(w, "gpunetsim: note: %s = %s: about %.2g events (more than %.2g; %s): this run takes long; progress on stderr\n",
		work.Param, work.Value, work.Events, float64(announceRunEvents), work.Why)
	return true
}

// progressLines reports finished simulations as plain lines (stderr not a
// terminal, where no bar is drawn), at most one per ten seconds.
func progressLines(w io.Writer) func(done, total int) {
	var mu sync.Mutex
	last := time.Now()
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done < total && time.Since(last) < 10*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "progress: %d of %d units of work done\n", done, total)
	}
}
