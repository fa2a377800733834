package pcie

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func onChipLink() *Link {
	return NewOnChip(spec(), SoCSpec{NICAttach: AttachDirectory, MMIOLatency: 50 * sim.Nanosecond, DirLatency: 15 * sim.Nanosecond},
		80*sim.Nanosecond, unit.Rate(100e9))
}

// On the coherent directory no PCIe latency, overhead or per-byte time is
// charged: an MMIO store is visible mmio_latency later and leaves the
// issuer free at once; the device's reads and writes are coherent accesses
// (directory lookup + memory access) streaming at the memory's rate.
func TestOnChipCosts(t *testing.T) {
	l := onChipLink()
	free, vis := l.PostedWrite(Down, 1000, 8)
	if free != 1000 || vis != 1000+50*sim.Nanosecond {
		t.Errorf("MMIO store: free %v visible %v, want 1ns and 51ns", free, vis)
	}
	// A 2 KiB DMA read: 15 + 80 ns, then 2048 B at 100 GB/s (20.48 ns).
	if done := l.Read(Up, 0, 2048, true); done != 95*sim.Nanosecond+20480 {
		t.Errorf("DMA read done %v, want 115.48ns (no p2p penalty, no PCIe)", done)
	}
	l = onChipLink()
	if done, k := l.ReadSplit(Up, 0, 2048, 512, false); done != 95*sim.Nanosecond+20480 || k != 4 {
		t.Errorf("split DMA read done %v in %d requests, want 115.48ns in 4", done, k)
	}
	l = onChipLink()
	free, vis = l.PostedWrite(Up, 0, 64)
	if free != 640 || vis != 640+95*sim.Nanosecond {
		t.Errorf("DMA write: free %v visible %v, want 0.64ns and 95.64ns", free, vis)
	}
	if got := l.Read(Down, 0, 8, false); got != 100*sim.Nanosecond {
		t.Errorf("MMIO read %v, want twice mmio_latency", got)
	}
	// The same operations behind PCIe pay L, o and G.
	p := New(spec())
	if _, v := p.PostedWrite(Down, 0, 8); v <= 250*sim.Nanosecond {
		t.Errorf("PCIe doorbell visible at %v: the test's contrast is gone", v)
	}
}

// MMIO stores keep their order and the gap g of the issuer.
func TestOnChipMMIOOrderedAndGapped(t *testing.T) {
	l := onChipLink()
	var last sim.Time
	for i := range 5 {
		free, vis := l.PostedWrite(Down, 0, 8)
		if want := sim.Time(i) * 4 * sim.Nanosecond; free != want {
			t.Errorf("store %d free at %v, want %v", i, free, want)
		}
		if vis <= last {
			t.Errorf("store %d visible at %v, not after %v", i, vis, last)
		}
		last = vis
	}
}

func TestSoCValidate(t *testing.T) {
	if err := DefaultSoC().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := SoCSpec{NICAttach: "usb", MMIOLatency: -1, DirLatency: 2 * sim.Microsecond}
	err := bad.Validate()
	for _, want := range []string{"soc.nic_attach", "soc.mmio_latency", "soc.dir_latency"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
