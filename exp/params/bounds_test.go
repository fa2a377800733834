package params

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

func TestPresetsWithinBounds(t *testing.T) {
	for _, name := range cluster.PresetNames() {
		cfg, err := exp.DefaultConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckBounds(cfg); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

func TestBoundsNameTheParameter(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"link.bandwidth=1e-30Gbps", "link.bandwidth = 1.25e-31GB/s: must be in [1Mbps, 1000TB/s]"},
		{"pcie.bandwidth=1e30Gbps", "pcie.bandwidth = "},
		{"switch.latency=9223372036854775807ps", "switch.latency = 9223372.036854775807s: must be in [0s, 3600s]"},
		{"cpu.freq=1Hz", "cpu.freq = 1e-06MHz: must be in [1MHz, 1000GHz]"},
		{"gpu.l1_cycles=3000000000000", "gpu.l1_cycles = 3000000000000: must be in [-1e12, 1e12]"},
		{"gpu.lds_per_cu=2TiB", "gpu.lds_per_cu = 2048GiB: must be in [0B, 1024GiB]"},
	} {
		_, err := Load(Options{Sets: []string{c.set}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v; want %q", c.set, err, c.want)
		}
		if err != nil && strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("--set %s: more than one line: %v", c.set, err)
		}
	}
}

func TestBoundsReportEachParameterOnce(t *testing.T) {
	_, err := Load(Options{Sets: []string{"sw.mpi_match=9223372036854775807"}})
	if err == nil || strings.Count(err.Error(), "sw.mpi_match") != 1 {
		t.Fatalf("error %v; want sw.mpi_match named once (by its own Validate)", err)
	}
}

// TestGroupedValidateNamesOnce: a value of a group of like parameters that
// its Validate names ("pcie.overhead = -1ns: must be ≥ 0") gets no second
// line from the type-wide bound ("pcie.overhead = -1ns: must be in [0s,
// 3600s]"): one line per bad value.
func TestGroupedValidateNamesOnce(t *testing.T) {
	for _, set := range []string{"pcie.latency=-1ns", "pcie.overhead=-1ns", "pcie.gap=-1ns", "gpu.teardown=-1ns",
		"gpu.mem_latency=-1ns", "cpu.cache_hit=-1ns", "nic.trig_pop=-1ns", "nic.match_cost=-1ns", "nic.xtq_rewrite=-1ns"} {
		_, err := Load(Options{Sets: []string{set}})
		if err == nil || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("--set %s: error %q; want one line", set, err)
		}
	}
}

// Like durations checked together were one line for the group showing
// every value ("pcie.latency/overhead/gap = -1ns/10ns/-2ns: must be ≥ 0"):
// two bad values in one line, good values in it too. Each bad value is
// now its own line naming it and its value alone.
func TestGroupedBadValuesEachOwnLine(t *testing.T) {
	groups := [][]string{
		{"pcie.latency", "pcie.overhead", "pcie.gap"},
		{"cpu.dram_latency", "cpu.cache_hit"},
		{"gpu.launch", "gpu.teardown", "gpu.mem_latency"},
		{"nic.cmd_latency", "nic.match_cost", "nic.trig_eval_cost", "nic.trig_pop"},
		{"nic.xtq_lookup", "nic.xtq_rewrite"},
		{"gnn.field_store", "gnn.db_record", "gnn.fence"},
		{"gnn.reorder_mean", "gnn.reorder_window"},
		{"shmem.gio.field_store", "shmem.gio.db_record", "shmem.gio.ppb_flush"},
		{"fft2d.L", "fft2d.o", "fft2d.g"},
	}
	for _, g := range groups {
		var sets []string
		for _, name := range g {
			sets = append(sets, name+"=-1ns")
		}
		_, err := Load(Options{Sets: sets})
		if err == nil {
			t.Fatalf("%v: accepted", sets)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(g) {
			t.Errorf("%v: %d lines, want %d:\n%v", sets, len(lines), len(g), err)
			continue
		}
		for i, name := range g {
			if want := name + " = -1ns: must be "; !strings.HasPrefix(lines[i], want) {
				t.Errorf("%v: line %d = %q; want it to start %q", sets, i+1, lines[i], want)
			}
		}
	}
}
