package exp

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
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
	// SimSeconds is the longest simulated time of one of its
	// simulations, when known.
	SimSeconds float64
}

// EstimateWork estimates the events of running experiment name on cfg
// where a parameter can make them grow without bound while the memory
// stays small (a crawl rather than a refusal); zero CrawlWork elsewhere.
//
// hostcpu: a core streams its share of hostcpu.size at most at
// cpu.stream_bytes_per_cycle × cpu.freq, under the mlp model at most at
// Little's law's cpu.l1d_misses (plus prefetches) × line / cpu.dram_latency,
// and the cores together at most at cpu.dram_bandwidth; a thread sharing
// a core (the polling-helper variant, teams larger than cpu.cores) is
// rescheduled every cpu.time_slice of that time, so a slow streaming rate
// makes the region's simulated time, and its scheduling events, grow as 1
// / rate. The parameter named is the bound that decides the configured
// variant's rate.
func EstimateWork(name string, cfg Config) CrawlWork {
	switch name {
	case "hostcpu":
		h, c := cfg.HostCPU, cfg.CPU
		if c.StreamBPC <= 0 || c.Freq <= 0 || c.TimeSlice <= 0 || c.DRAMBandwidth <= 0 {
			return CrawlWork{}
		}
		w := CrawlWork{}
		longest := -1.0 // the configured variant's longest region decides the parameter named
		for _, n := range h.Threads {
			active := float64(max(1, min(n, c.Cores)))
			for _, v := range hostVariants {
				s := c
				switch v {
				case "prefetch flipped":
					s.Prefetch = !s.Prefetch
				case "flat rate":
					s.ComputeModel = cpu.ModelFlat
				}
				rate := min(active*s.CoreStreamRate(), float64(c.DRAMBandwidth)) // B/s, the team
				region := float64(h.Size) / rate                                 // seconds
				w.SimSeconds = max(w.SimSeconds, region)
				slices := region / (float64(c.TimeSlice) / float64(sim.Second))
				w.Events += reschedEvents*slices + float64(h.Size)/streamSliceBytes
				if v == hostVariants[0] && region > longest {
					longest = region
					switch {
					case rate == float64(c.DRAMBandwidth):
						w.Param, w.Value = "cpu.dram_bandwidth", c.DRAMBandwidth.String()
					case s.CoreStreamRate() < s.StreamBPC*float64(s.Freq):
						w.Param, w.Value = "cpu.dram_latency", c.DRAMLatency.String()
					default:
						w.Param, w.Value = "cpu.stream_bytes_per_cycle", fmt.Sprint(c.StreamBPC)
					}
				}
			}
		}
		w.Why = fmt.Sprintf("each region streams hostcpu.size = %v at most at %.3g B/s per core (cpu.stream_bytes_per_cycle × cpu.freq, Little's law over cpu.dram_latency) and %v for all, rescheduled every cpu.time_slice = %v",
			h.Size, c.CoreStreamRate(), c.DRAMBandwidth, c.TimeSlice)
		return w
	}
	return CrawlWork{}
}

// PastClock is the error of a run whose estimated simulated time passes
// the end of the int64-picosecond clock (it would crawl through its
// scheduling events for days before failing there); nil otherwise.
func (w CrawlWork) PastClock() error {
	if w.SimSeconds <= sim.MaxTime.Seconds() {
		return nil
	}
	return fmt.Errorf("%s = %s: a region would take about %.3g s of simulated time, past the end of the clock (%.3g s); %s",
		w.Param, w.Value, w.SimSeconds, sim.MaxTime.Seconds(), w.Why)
}

// reschedEvents is the engine events one time slice of a shared core
// costs (preemption, hand-over, the stream's retry): hostcpu at
// cpu.stream_bytes_per_cycle = 1e-4 estimates 1.3e6 slices and runs in
// 2.6 s, about ten events per slice at a few million events per second.
const reschedEvents = 10

// streamSliceBytes is the bytes a core streams per event (hw/cpu's
// streamSlice).
const streamSliceBytes = 16 << 10
