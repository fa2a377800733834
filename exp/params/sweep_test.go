package params

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

func TestParseSweep(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []string
	}{
		{"link.bandwidth=25Gbps..400Gbps*2", []string{"25Gbps", "50Gbps", "100Gbps", "200Gbps", "400Gbps"}},
		{"link.bandwidth=25Gbps..300Gbps*2", []string{"25Gbps", "50Gbps", "100Gbps", "200Gbps"}},
		{"gpu.launch=1us..4us+1us", []string{"1us", "2us", "3us", "4us"}},
		{"gpu.launch=1.5us, 500ns", []string{"1.5us", "500ns"}},
		{"allreduce.size=1KiB..8KiB*2,64KiB", []string{"1KiB", "2KiB", "4KiB", "8KiB", "64KiB"}},
		{"run.seed=1..3+1", []string{"1", "2", "3"}},
		{"run.functional=true,false", []string{"true", "false"}},
		// A range ending below zero keeps its last value (the float
		// tolerance hi·(1+1e-12) lay below a negative hi).
		{"gpu.l2_cycles=-8..-4+2", []string{"-8", "-6", "-4"}},
		{"today.factor=-3..-1+1", []string{"-3", "-2", "-1"}},
		// Integers near 2^53 are still exact.
		{"run.seed=9007199254740989..9007199254740991+1", []string{"9007199254740989", "9007199254740990", "9007199254740991"}},
	} {
		sw, err := ParseSweep(c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if !slices.Equal(sw.Values, c.want) {
			t.Errorf("%s: got %v, want %v", c.spec, sw.Values, c.want)
		}
	}
}

func TestParseSweepRejects(t *testing.T) {
	for spec, want := range map[string]error{
		"link.bandwith=1Gbps":              ErrUnknown,
		"link.bandwidth=":                  ErrBadValue,
		"link.bandwidth=25Gbps..400Gbps":   ErrBadValue,
		"link.bandwidth=400Gbps..25Gbps*2": ErrBadValue,
		"link.bandwidth=25Gbps..400Gbps*1": ErrBadValue,
		"link.bandwidth=25..400Gbps*2":     ErrBadValue,
		"link.bandwidth=1Gbps,1Gbps":       ErrBadValue,
		"run.functional=true..false+1":     ErrBadValue,
		"allreduce.nodes=2,4":              ErrBadValue,
		"gpu.launch=1us..2us+0s":           ErrBadValue,
		"run.seed=1..100000+1":             ErrBadValue,
		// Beyond 2^53 a stepped value wrapped through float64 (to -2^63).
		"allreduce.wgs=9223372036854770000..9223372036854775807+4096": ErrBadValue,
		"allreduce.wgs=-9223372036854775808..-9223372036854775807+1":  ErrBadValue,
		"run.seed=18446744073709550000..18446744073709551615+8192":    ErrBadValue,
		"run.seed=9007199254740990..9007199254740992+1":               ErrBadValue,
		"nonsense": ErrBadValue,
	} {
		_, err := ParseSweep(spec)
		if !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", spec, err, want)
		}
	}
}

func FuzzParseSweep(f *testing.F) {
	f.Add("link.bandwidth=25Gbps..400Gbps*2")
	f.Add("gpu.launch=1us..4us+1us,7us")
	f.Fuzz(func(t *testing.T, spec string) {
		sw, err := ParseSweep(spec)
		if err != nil {
			return
		}
		// Every value parses back as the parameter and prints the same.
		for _, v := range sw.Values {
			f, _ := fieldNamed(sw.Name)
			got, err := canonical(f, v)
			if err != nil || got != v {
				t.Fatalf("%s: value %q reparses as %q, %v", spec, v, got, err)
			}
		}
	})
}

// A swept value with a unit becomes a number in that unit for the CSV,
// its text unchanged; a unitless one stays text (a loader reads "4" as a
// number anyway).
func TestSweepCell(t *testing.T) {
	for _, c := range []struct {
		name, s string
		want    any
	}{
		{"link.bandwidth", "25Gbps", report.Quantity{Text: "25Gbps", Value: 25, Unit: "Gbps"}},
		{"cpu.dram_bandwidth", "136.512GB/s", report.Quantity{Text: "136.512GB/s", Value: 136.512 * 8, Unit: "Gbps"}},
		{"gpu.launch", "1.5us", report.Quantity{Text: "1.5us", Value: 1.5, Unit: "us"}},
		{"allreduce.size", "64KiB", report.Quantity{Text: "64KiB", Value: 65536, Unit: "B"}},
		{"gpu.freq", "1.5GHz", report.Quantity{Text: "1.5GHz", Value: 1.5, Unit: "GHz"}},
		{"run.seed", "7", "7"},
		{"no.such", "1us", "1us"},
	} {
		if got := SweepCell(c.name, c.s); got != c.want {
			t.Errorf("SweepCell(%s, %s) = %#v, want %#v", c.name, c.s, got, c.want)
		}
	}
}
