package pcie

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func spec() Spec {
	return Spec{Latency: 250 * sim.Nanosecond, Overhead: 10 * sim.Nanosecond, Gap: 4 * sim.Nanosecond,
		Bandwidth: 25e9, MPS: 256, MaxReadReq: 512, P2PReadPenalty: 0.5}
}

func TestPostedWriteAndRead(t *testing.T) {
	l := New(spec())
	free, vis := l.PostedWrite(Down, 0, 8)
	if free != 10*sim.Nanosecond+320 || vis != free+250*sim.Nanosecond {
		t.Errorf("posted write: free %v visible %v", free, vis)
	}
	// A read: request up (o + L), 2 KiB back down at 25 GB/s (81.92 ns), L back.
	done := l.Read(Up, 0, 2048, false)
	if want := 10*sim.Nanosecond + 500*sim.Nanosecond + 81920; done != want {
		t.Errorf("read done %v, want %v", done, want)
	}
	// The peer-to-peer penalty halves the read bandwidth.
	l2 := New(spec())
	if d := l2.Read(Up, 0, 2048, true); d != 10*sim.Nanosecond+500*sim.Nanosecond+2*81920 {
		t.Errorf("p2p read done %v", d)
	}
}

// Back-to-back posted writes respect the gap g and the byte server, and
// stay ordered.
func TestPostedWritesAreOrderedAndGapped(t *testing.T) {
	l := New(spec())
	var last sim.Time
	for i := range 10 {
		_, vis := l.PostedWrite(Down, 0, 8)
		if vis <= last {
			t.Fatalf("write %d visible at %v, not after the previous %v", i, vis, last)
		}
		if i > 0 && vis-last < 4*sim.Nanosecond {
			t.Fatalf("write %d only %v after the previous: gap g is 4ns", i, vis-last)
		}
		last = vis
	}
	if txns, bytes := l.Stats(Down); txns != 10 || bytes != 80 {
		t.Fatalf("stats %d txns %d bytes", txns, bytes)
	}
}

func TestBandwidthBoundsLargeTransfers(t *testing.T) {
	l := New(spec())
	free, _ := l.PostedWrite(Up, 0, unit.MiB)
	if want := 10*sim.Nanosecond + sim.Time(float64(unit.MiB)*40); free != want {
		t.Fatalf("1 MiB posted write frees the sender at %v, want %v", free, want)
	}
}

func TestValidate(t *testing.T) {
	s := spec()
	s.P2PReadPenalty = 0
	if s.Validate() == nil {
		t.Error("penalty 0 accepted")
	}
	s = spec()
	s.Bandwidth = 0
	if s.Validate() == nil {
		t.Error("zero bandwidth accepted")
	}
	if spec().Validate() != nil {
		t.Error("a valid spec rejected")
	}
}

// TestReadSampledAtTheTarget: a read samples the target's memory when its
// request arrives (o + L), and completes exactly as Read does; on a
// directory attachment an MMIO read samples after one store latency.
func TestReadSampledAtTheTarget(t *testing.T) {
	at, done := New(spec()).ReadSampled(Down, 0, 8, false)
	if want := New(spec()).Read(Down, 0, 8, false); done != want {
		t.Errorf("sampled read done %v, Read %v", done, want)
	}
	if want := 10*sim.Nanosecond + 250*sim.Nanosecond; at != want {
		t.Errorf("sampled at %v, want o + L = %v (not at the completion %v)", at, want, done)
	}
	oc := NewOnChip(spec(), DefaultSoC(), 80*sim.Nanosecond, unit.Rate(100e9))
	at, done = oc.ReadSampled(Down, 0, 8, false)
	if done != 100*sim.Nanosecond || at != 50*sim.Nanosecond {
		t.Errorf("on-chip MMIO read sampled %v done %v, want 50ns and 100ns", at, done)
	}
}
