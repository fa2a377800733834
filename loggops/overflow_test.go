package loggops

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/sim"
)

func TestParamsBoundedByTheClock(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"L", "9223372036854775807ps", "L = 9223372.036854775807s: must be at most 3600s"},
		{"o", "3601s", "o = 3601s: must be at most 3600s"},
		{"g", "4000s", "g = 4000s: must be at most 3600s"},
		{"calc", "9223372036854775807ps", "calc = 9223372.036854775807s: must be at most 3600s"},
	} {
		p := DefaultParams()
		if err := p.Set(c.name, c.value); err != nil {
			t.Fatalf("Set(%s, %s): %v", c.name, c.value, err)
		}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: Validate() = %v; want %q", c.name, c.value, err, c.want)
		}
	}
	p := DefaultParams()
	p.L = MaxParam
	if err := p.Validate(); err != nil {
		t.Errorf("L = MaxParam: %v", err)
	}
}

func TestScheduleOverflowingTheClockFails(t *testing.T) {
	var b strings.Builder
	b.WriteString("num_ranks 1\nrank 0 {\n")
	for i := range 10 {
		fmt.Fprintf(&b, "l%d: calc 4000000000000000000\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "l%d requires l%d\n", i, i-1)
		}
	}
	b.WriteString("}\n")
	f, err := goal.Open(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := DefaultParams()
	p.CalcUnit = sim.Picosecond
	if res, err := Run(f, p); !errors.Is(err, sim.ErrTimeOverflow) {
		t.Fatalf("Run = %v, %v; want a time overflow", res, err)
	}
}

// TestHorizonFailsNamingTheOperation: a time at or past 2^60 ps is a
// failure naming the operation, never a clamped time (a calc of 2·10^15 ns
// used to report exactly 2^60 ps), while a time just below it is exact.
func TestHorizonFailsNamingTheOperation(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
		input            bool // the statement's own value is past the horizon
	}{
		{"one calc past it", "num_ranks 1\nrank 0 {\nl1: calc 2000000000000000\n}\n", "rank 0 line 3: calc 2000000000000000 × calc unit 1ns", true},
		{"two calcs past it", "num_ranks 1\nrank 0 {\nl1: calc 600000000000000\nl2: calc 600000000000000\nl2 requires l1\n}\n", "rank 0 line 4: calc of", false},
		{"a send's bytes", "num_ranks 2\nrank 0 {\nl1: send 100000000000000000b to 1\n}\nrank 1 {\nl1: recv 100000000000000000b from 0\n}\n", "send of 100000000000000000 bytes", true},
		{"a send after a calc", "num_ranks 2\nrank 0 {\nl1: calc 1100000000000000\nl2: send 10000000000000000b to 1\nl2 requires l1\n}\nrank 1 {\nl1: recv 10000000000000000b from 0\n}\n", "send of 10000000000000000 bytes starting at 1100000s", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := goal.Open(strings.NewReader(c.text))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p := DefaultParams()
			p.GapPerByte = 40000 // 0.04 ns per byte: 10^17 bytes take 4·10^18 ps
			res, err := Run(f, p)
			var he *HorizonError
			if !errors.As(err, &he) || !errors.Is(err, sim.ErrTimeOverflow) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, %v; want a *HorizonError containing %q", res, err, c.want)
			}
			if he.Input != c.input {
				t.Fatalf("%v: Input = %v, want %v", err, he.Input, c.input)
			}
		})
	}
	f, err := goal.Open(strings.NewReader("num_ranks 1\nrank 0 {\nl1: calc 1152921504606846\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Run(f, DefaultParams())
	if err != nil || res.Max != 1152921504606846*sim.Nanosecond {
		t.Fatalf("calc just below the horizon: %v, %v; want exactly 1152921504606846ns", res, err)
	}
}
