package power

import (
	"math"
	"testing"
)

// The model's numbers for the dissertation's two cores, worked by hand
// from the coefficients: host 8-wide at 4 GHz: logic 0.08 × 4^1.5 = 0.64
// W, clock 0.05 × 4 × 8 = 1.6 W, SRAM 0.3 mW × (64 + 64 + 1024) KiB =
// 0.3456 W; CP 2-wide at 2 GHz: 0.08 + 0.1 + 0.3 mW × 48 KiB. A 32 KiB
// array costs 3.54 pJ × √32 × 0.39 ≈ 7.8 pJ per access at 22 nm.
func TestProfiles(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3*want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	h, c := Host().Profile(), CP().Profile()
	near("host static", h.Static, 0.64+1.6+0.3456)
	near("CP static", c.Static, 0.08+0.1+0.0144)
	near("CP L1", c.L1, 3.54*math.Sqrt(32)*scale22/1000)
	near("scale 45→22 nm", scale22, 0.3862)
	if !(h.Instr > c.Instr && h.L2 > c.L2 && h.Static > 10*c.Static) {
		t.Errorf("host %+v vs CP %+v: the wider, faster core with its own L2 must cost more per instruction, per L2 access and in static power", h, c)
	}
	if h.DRAM != c.DRAM || h.PCIe != c.PCIe {
		t.Errorf("memory and PCIe energies are not the core's: host %v/%v, CP %v/%v", h.DRAM, h.PCIe, c.DRAM, c.PCIe)
	}
}

func TestValidate(t *testing.T) {
	if err := Host().Validate(); err != nil {
		t.Fatal(err)
	}
	c := CP()
	c.Tech = 45
	if c.Validate() == nil {
		t.Fatal("a 45 nm description passed the 22 nm model")
	}
	c = CP()
	c.Width = 0
	if c.Validate() == nil {
		t.Fatal("a zero-width core passed")
	}
}
