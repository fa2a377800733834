package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestTimeOverflowStopsTheRun(t *testing.T) {
	for _, c := range []struct {
		name  string
		agent string
		setup func(e *Engine)
	}{
		{"callback after MaxTime", "a callback event", func(e *Engine) {
			e.At(10, func() { e.After(MaxTime, func() { t.Error("ran past the end of the clock") }) })
		}},
		{"sleep past the end", "process p", func(e *Engine) {
			e.Spawn("p", func(p *Proc) { p.Sleep(5); p.Sleep(FromPicoseconds(1e30)) })
		}},
		{"wrapped sleep", "process p", func(e *Engine) {
			e.Spawn("p", func(p *Proc) { p.Sleep(math.MinInt64) })
		}},
		{"sleep until a wrapped time", "process p", func(e *Engine) {
			e.Spawn("p", func(p *Proc) { p.Sleep(7); p.SleepUntil(p.Now() + MaxTime) })
		}},
		{"saturated sum", "process p", func(e *Engine) {
			e.Spawn("p", func(p *Proc) { p.SleepUntil(p.Now().Add(MaxTime).Add(1)) })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := New(1)
			c.setup(e)
			err := e.Run()
			var oe *TimeOverflowError
			if !errors.As(err, &oe) || !errors.Is(err, ErrTimeOverflow) || oe.Agent != c.agent {
				t.Fatalf("Run() = %v; want a time overflow by %s", err, c.agent)
			}
		})
	}
}

func TestCallbackPanicIsReported(t *testing.T) {
	e := New(1)
	e.At(3, func() { panic("broken model") })
	err := e.Run()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Proc != "a callback event" || pe.At != 3 || !strings.Contains(pe.Stack, "overflow_test.go") {
		t.Fatalf("Run() = %v; want a PanicError from the callback with its stack", err)
	}
}

func TestFromPicosecondsAndAdd(t *testing.T) {
	for _, c := range []struct {
		ps   float64
		want Time
	}{{1.4, 1}, {1.5, 2}, {1e30, MaxTime}, {math.NaN(), MaxTime}, {math.Inf(1), MaxTime}, {-1e30, -MaxTime}} {
		if got := FromPicoseconds(c.ps); got != c.want {
			t.Errorf("FromPicoseconds(%g) = %d; want %d", c.ps, got, c.want)
		}
	}
	if got := Time(5).Add(MaxTime); got != MaxTime {
		t.Errorf("5 + MaxTime = %d; want saturation", got)
	}
	if got := Time(5).Add(7); got != 12 {
		t.Errorf("5 + 7 = %d", got)
	}
}

func TestCheckedArithmetic(t *testing.T) {
	if d, ok := CheckedPicoseconds(1.4); !ok || d != 1 {
		t.Errorf("CheckedPicoseconds(1.4) = %v, %v", d, ok)
	}
	for _, ps := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e19, -1e19, float64(MaxTime)} {
		if d, ok := CheckedPicoseconds(ps); ok {
			t.Errorf("CheckedPicoseconds(%g) = %v, ok; want not ok", ps, d)
		}
	}
	if s, ok := (MaxTime - 5).CheckedAdd(5); !ok || s != MaxTime {
		t.Errorf("CheckedAdd to MaxTime = %v, %v", s, ok)
	}
	if _, ok := (MaxTime - 5).CheckedAdd(6); ok {
		t.Error("CheckedAdd past MaxTime is ok")
	}
	if _, ok := (-MaxTime + 5).CheckedAdd(-6); ok {
		t.Error("CheckedAdd below -MaxTime is ok")
	}
	if p, ok := CheckedMul(3*Second, 1000); !ok || p != 3000*Second {
		t.Errorf("CheckedMul(3s, 1000) = %v, %v", p, ok)
	}
	for _, c := range []struct {
		d Duration
		n int64
	}{{MaxTime/2 + 1, 2}, {Second, 1 << 40}, {-MaxTime - 1, -1}, {MaxTime, -2}} {
		if p, ok := CheckedMul(c.d, c.n); ok {
			t.Errorf("CheckedMul(%d, %d) = %d, ok; want not ok", c.d, c.n, p)
		}
	}
	if err := OverflowOf("fft"); !errors.Is(err, ErrTimeOverflow) {
		t.Errorf("OverflowOf does not wrap ErrTimeOverflow: %v", err)
	}
}
