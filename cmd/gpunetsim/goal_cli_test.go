package main

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/loggops"
	"github.com/gpunetsim/gpunetsim/sim"
)

func TestCheckMemory(t *testing.T) {
	if err := checkMemory(loggops.EstimateRun(goal.Ring(1024, 8)), ""); err != nil {
		t.Errorf("1024 ranks: %v", err)
	}
	err := checkMemory(loggops.EstimateRun(goal.Ring(1<<26, 8)), "1GiB")
	if err == nil || !strings.Contains(err.Error(), "67108864 ranks holding about") {
		t.Errorf("2^26 ranks: err = %v, want a memory error", err)
	}
	// A 10,000-rank all-to-all holds 2·10^8 operations: more than the
	// ranks alone suggest.
	err = checkMemory(loggops.EstimateRun(goal.AllToAll(10000, 8)), "16GiB")
	if err == nil || !strings.Contains(err.Error(), "10000 ranks holding about 2e+08 operations at once") {
		t.Errorf("alltoall 10000: err = %v, want a memory error", err)
	}
}

func TestInUnits(t *testing.T) {
	for _, c := range []struct {
		t, unit sim.Time
		want    string
	}{
		{2920951440, sim.Nanosecond, "2920951.44"},
		{11300 * sim.Nanosecond, sim.Nanosecond, "11300"},
		{7, sim.Picosecond, "7"},
		{1500, sim.Microsecond, "0.0015"},
		{1, 3, "0.333333333333"},
		{0, sim.Nanosecond, "0"},
	} {
		if got := inUnits(c.t, c.unit); got != c.want {
			t.Errorf("inUnits(%d, %d) = %q, want %q", c.t, c.unit, got, c.want)
		}
	}
}

// A run estimated at more than announceEvents says so, with the estimate,
// and gets progress; a short one prints nothing.
func TestAnnounceWork(t *testing.T) {
	var b strings.Builder
	if !announceWork(&b, loggops.EstimateRun(goal.Ring(65536, 8<<20))) {
		t.Fatal("a 65,536-rank ring was not announced")
	}
	want := "gpunetsim: note: goal run: 65536 ranks, 3.44e+10 statements, about 3.4e+10 events (more than 2e+08): roughly 3h10m53s at 3 M events/s; progress every 10s (--progress)\n"
	if b.String() != want {
		t.Errorf("note %q, want %q", b.String(), want)
	}
	b.Reset()
	for _, g := range []*goal.Generated{goal.AllToAll(64, 8), goal.AllToAll(1000, 8)} {
		if announceWork(&b, loggops.EstimateRun(g)) || b.Len() > 0 {
			t.Errorf("%s was announced (its waits do not retry: ranks² events): %q", g, b.String())
		}
	}
}

// A streaming rate that makes hostcpu crawl is announced with its
// estimate (the run still goes ahead); the default is not.
func TestAnnounceRun(t *testing.T) {
	cfg, err := exp.DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if announceRun(&b, "hostcpu", cfg) || b.Len() > 0 {
		t.Errorf("default hostcpu announced: %q", b.String())
	}
	cfg.CPU.StreamBPC = 1e-6
	if !announceRun(&b, "hostcpu", cfg) || !strings.HasPrefix(b.String(), "gpunetsim: note: cpu.stream_bytes_per_cycle = 1e-06: about 1.3e+09 events") {
		t.Errorf("slow streaming: %q", b.String())
	}
	// A miss latency that makes Little's law the bound names it.
	cfg.CPU.StreamBPC, cfg.CPU.DRAMLatency = 16, 10*sim.Second
	b.Reset()
	if !announceRun(&b, "hostcpu", cfg) || !strings.HasPrefix(b.String(), "gpunetsim: note: cpu.dram_latency = 10s: about 3.9e+10 events") {
		t.Errorf("slow misses: %q", b.String())
	}
}
