package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A dGPU's load of host memory across PCIe costs the L2 lookup it passes
// through plus the link's round trip (and the switch both ways), never the
// GPU's own memory access (gpu.mem_latency, the part past the L2 that the
// PCIe read replaces: the test's 400 ns would show); the host side reads
// the word half a lookup and one way in; on an on-chip link the host
// memory is the GPU's and the load is the link's access alone; over
// NVLink-C2C, whose crossings leave out the far memory's own access, the
// load pays that access as well. A load issued for later (a fence's read
// behind posted stores) starts then.
func TestHostLoadPaysTheLoadPipelinePlusTheRoundTrip(t *testing.T) {
	ps := pcie.Spec{Latency: 250 * sim.Nanosecond, Overhead: 10 * sim.Nanosecond, Gap: 4 * sim.Nanosecond,
		Bandwidth: 16e9, MPS: 256, MaxReadReq: 512, P2PReadPenalty: 1, SwitchLatency: 100 * sim.Nanosecond}
	for _, c := range []struct {
		name  string
		link  func() *pcie.Link
		delay sim.Duration
	}{
		{"pcie", func() *pcie.Link { return pcie.New(ps) }, 0},
		{"pcie, issued later", func() *pcie.Link { return pcie.New(ps) }, sim.Microsecond},
		{"on-chip", func() *pcie.Link { return pcie.NewOnChip(ps, pcie.DefaultSoC(), 80*sim.Nanosecond, 100e9) }, 0},
		{"NVLink-C2C", func() *pcie.Link {
			return pcie.NewC2C(pcie.C2CSpec{On: true, Latency: 200 * sim.Nanosecond, Bandwidth: 450e9})
		}, 0},
	} {
		e := sim.New(1)
		spec := testSpec("dgpu")
		spec.MemLatency = 400 * sim.Nanosecond // a GDDR5 access: not on this path
		g := New(e, "node[0].gpu", spec, mem.New("node[0].mem", true), mem.NewServer(100e9))
		l, ref := c.link(), c.link()
		var start, sampled, done sim.Time
		op, _ := g.DispatchOp(Kernel{Name: "load", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			start = wg.Now()
			sampled, done = wg.HostLoad(l, start+c.delay, 8)
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		half := g.Spec().Cycles(g.Spec().L2Cycles) / 2
		if l.OnChip() {
			half = 0
		}
		at := start + c.delay
		var far sim.Duration
		if l.ChipToChip() {
			far = g.Spec().MemLatency // the C2C crossings leave out the far memory's access
		}
		back := ref.Read(pcie.Up, at+half+far, 8, false)
		if want := back + half; done != want {
			t.Errorf("%s: done %v after issue, want %v (pipeline %v + the read %v)", c.name, done-at, want-at, 2*half, back-at-half)
		}
		if want := back - l.Spec().Latency - l.HostWriteLatency(); sampled != want {
			t.Errorf("%s: sampled %v after issue, want %v", c.name, sampled-at, want-at)
		}
		// In numbers: 100 ns of L2 lookup, 2 × 250 ns, 10 ns, 2 × 100 ns
		// of switch and 8 B at 16 GB/s.
		if base := 100*sim.Nanosecond + 2*ps.Latency + ps.Overhead + 2*ps.SwitchLatency; !l.OnChip() && !l.ChipToChip() && (done-at < base || done-at > base+sim.Nanosecond) {
			t.Errorf("%s: %v per load, want %v and 8 B of serialization", c.name, done-at, base)
		}
		// Over NVLink-C2C: 100 ns of L2 lookup, 2 × 200 ns of crossing and
		// the far memory's 400 ns.
		if base := 900 * sim.Nanosecond; l.ChipToChip() && (done-at < base || done-at > base+sim.Nanosecond) {
			t.Errorf("%s: %v per load, want %v and 8 B of serialization", c.name, done-at, base)
		}
	}
}
