package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestCheckMemory(t *testing.T) {
	if err := checkMemory(1024, ""); err != nil {
		t.Errorf("1024 ranks: %v", err)
	}
	err := checkMemory(1<<40, "")
	if runtime.GOOS != "linux" {
		return
	}
	if err == nil || !strings.Contains(err.Error(), "1099511627776 ranks need about") {
		t.Errorf("2^40 ranks: err = %v, want a memory error", err)
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
