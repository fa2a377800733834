package exp

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// CrawlWork is the estimated work of a run, before it starts: the events its
// simulations take and the parameter that makes them many.
type CrawlWork struct {
	// Param names the deciding parameter as --set takes it, Value its value.
	Param, Value string
	// Events estimates the engine events of the whole run.
	Events float64
	// Why says how the estimate is made, for the note printed with it.
	Why string
}

// EstimateWork estimates the events of running experiment name on cfg
// where a parameter can make them grow without bound while the memory
// stays small (a crawl rather than a refusal); zero CrawlWork elsewhere.
//
// hostcpu: a core streams its share of hostcpu.size at most at
// cpu.stream_bytes_per_cycle × cpu.freq; a thread sharing a core (the
// polling-helper variant, teams larger than cpu.cores) is rescheduled every
// cpu.time_slice of that time, so a slow streaming rate makes the region's
// simulated time, and its scheduling events, grow as 1 / rate.
func EstimateWork(name string, cfg Config) CrawlWork {
	switch name {
	case "hostcpu":
		h, c := cfg.HostCPU, cfg.CPU
		rate := c.StreamBPC * float64(c.Freq)
		if rate <= 0 || c.TimeSlice <= 0 {
			return CrawlWork{}
		}
		events := 0.0
		for _, n := range h.Threads {
			region := float64(h.Size) / float64(max(n, 1)) / rate // seconds, issue bound
			slices := region / (float64(c.TimeSlice) / float64(sim.Second))
			events += float64(len(hostVariants)) * (reschedEvents*slices + float64(h.Size)/streamSliceBytes)
		}
		return CrawlWork{Param: "cpu.stream_bytes_per_cycle", Value: fmt.Sprint(c.StreamBPC), Events: events,
			Why: fmt.Sprintf("each region streams hostcpu.size = %v at most at %.3g B/s per core, rescheduled every cpu.time_slice = %v", h.Size, rate, c.TimeSlice)}
	}
	return CrawlWork{}
}

// reschedEvents is the engine events one time slice of a shared core
// costs (preemption, hand-over, the stream's retry): hostcpu at
// cpu.stream_bytes_per_cycle = 1e-4 estimates 1.3e6 slices and runs in
// 2.6 s, about ten events per slice at a few million events per second.
const reschedEvents = 10

// streamSliceBytes is the bytes a core streams per event (hw/cpu's
// streamSlice).
const streamSliceBytes = 16 << 10
