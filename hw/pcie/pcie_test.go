package pcie

import (
	"strings"
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
	// A denormal penalty is > 0 but divides a request's serialization
	// into an infinite time: the range's lower end refuses it up front.
	for _, p := range []float64{1e-320, 1e-10, 0.000999} {
		s = spec()
		s.P2PReadPenalty = p
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "must be in [0.001, 1]") {
			t.Errorf("penalty %v: %v", p, err)
		}
	}
	s = spec()
	s.P2PReadPenalty = 0.001
	if err := s.Validate(); err != nil {
		t.Errorf("penalty 0.001 (the lower end) refused: %v", err)
	}
	s = spec()
	s.Bandwidth = 0
	if s.Validate() == nil {
		t.Error("zero bandwidth accepted")
	}
	s = spec()
	s.SwitchLatency = -1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "pcie.switch_latency") {
		t.Errorf("negative switch latency: %v", err)
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

// A switch between the devices and the root complex: a read of host
// memory crosses it both ways, a peer-to-peer read turns around in it
// and pays nothing more, and a host-bound posted write pays it once
// (HostWriteLatency, which the caller adds); the sampled instant is
// after the switch on the way there.
func TestSwitchLatencyOnHostPathsOnly(t *testing.T) {
	const x = 100 * sim.Nanosecond
	s := spec()
	s.SwitchLatency = x
	for _, p2p := range []bool{false, true} {
		base, sw := New(spec()).Read(Up, 0, 64, p2p), New(s).Read(Up, 0, 64, p2p)
		want := base
		if !p2p {
			want += 2 * x
		}
		if sw != want {
			t.Errorf("p2p=%v: read with the switch %v, want %v (without %v)", p2p, sw, want, base)
		}
		r1, r2 := New(spec()).ReadRequest(Up, 0, 64, p2p), New(s).ReadRequest(Up, 0, 64, p2p)
		if r2-r1 != want-base {
			t.Errorf("p2p=%v: read request pays %v for the switch, want %v", p2p, r2-r1, want-base)
		}
	}
	at0, _ := New(spec()).ReadSampled(Up, 0, 8, false)
	at1, _ := New(s).ReadSampled(Up, 0, 8, false)
	if at1-at0 != x {
		t.Errorf("sampled %v later with the switch, want %v", at1-at0, x)
	}
	if New(s).HostWriteLatency() != x || New(spec()).HostWriteLatency() != 0 {
		t.Errorf("HostWriteLatency: %v with the switch, %v without", New(s).HostWriteLatency(), New(spec()).HostWriteLatency())
	}
	oc := NewOnChip(s, DefaultSoC(), 80*sim.Nanosecond, unit.Rate(100e9))
	if oc.HostWriteLatency() != 0 {
		t.Errorf("on-chip link pays the switch: %v", oc.HostWriteLatency())
	}
}
