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
