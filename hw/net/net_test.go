package net

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

type pkt struct {
	src, dst int
	n        unit.Bytes
	id       int
}

func (p *pkt) Route() (int, int)        { return p.src, p.dst }
func (p *pkt) PayloadBytes() unit.Bytes { return p.n }

type sink struct {
	got []*pkt
	at  []sim.Time
	e   *sim.Engine
}

func (s *sink) Receive(p Packet) { s.got = append(s.got, p.(*pkt)); s.at = append(s.at, s.e.Now()) }

var (
	link100 = LinkSpec{Bandwidth: unit.Rate(100e9 / 8), Payload: 2 * unit.KiB, Header: 64}
	sw100   = SwitchSpec{Latency: 100 * sim.Nanosecond}
	star    = TopologySpec{Kind: "star", LeafSize: 4, InOrder: true}
	tree    = TopologySpec{Kind: "fattree", LeafSize: 2, InOrder: true}
)

func build(t *testing.T, n int, topo TopologySpec) (*sim.Engine, *Fabric, []*sink) {
	t.Helper()
	e := sim.New(1)
	f, err := New(e, n, link100, sw100, topo)
	if err != nil {
		t.Fatal(err)
	}
	sinks := make([]*sink, n)
	for i := range sinks {
		sinks[i] = &sink{e: e}
		f.Attach(i, sinks[i])
	}
	return e, f, sinks
}

// One 2 KiB packet through a star: serialise on the uplink, switch latency,
// serialise on the downlink (store and forward).
func TestStarLatencyIsTwoSerialisationsPlusSwitch(t *testing.T) {
	e, f, sinks := build(t, 2, star)
	f.Send(&pkt{src: 0, dst: 1, n: 2048})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ser := sim.Time(2112 * 80) // 2112 B at 12.5 GB/s = 168.96 ns
	if want := 2*ser + 100*sim.Nanosecond; sinks[1].at[0] != want {
		t.Fatalf("arrival %v, want %v", sinks[1].at[0], want)
	}
}

// Two senders to one destination contend for the switch's output port: the
// second packet waits a full serialisation behind the first.
func TestOutputPortContentionIsFIFO(t *testing.T) {
	e, f, sinks := build(t, 3, star)
	f.Send(&pkt{src: 0, dst: 2, n: 2048, id: 1})
	f.Send(&pkt{src: 1, dst: 2, n: 2048, id: 2})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ser := sim.Time(2112 * 80)
	if len(sinks[2].got) != 2 || sinks[2].got[0].id != 1 {
		t.Fatalf("got %v", sinks[2].got)
	}
	if d := sinks[2].at[1] - sinks[2].at[0]; d != ser {
		t.Fatalf("second packet %v behind the first, want one serialisation %v", d, ser)
	}
}

// A stream of packets from one source is limited by link bandwidth and
// arrives in order.
func TestStreamRunsAtLinkRateInOrder(t *testing.T) {
	e, f, sinks := build(t, 2, star)
	const n = 100
	for i := range n {
		f.Send(&pkt{src: 0, dst: 1, n: 2048, id: i})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for i, p := range sinks[1].got {
		if p.id != i {
			t.Fatalf("packet %d arrived at position %d", p.id, i)
		}
	}
	ser := sim.Time(2112 * 80)
	if last := sinks[1].at[n-1]; last != sim.Time(n+1)*ser+100*sim.Nanosecond {
		t.Fatalf("last arrival %v, want %v", last, sim.Time(n+1)*ser+100*sim.Nanosecond)
	}
}

// In a two-level fat tree, a packet between leaves crosses three switches,
// one within a leaf crosses one.
func TestFatTreeHops(t *testing.T) {
	e, f, sinks := build(t, 4, tree)
	f.Send(&pkt{src: 0, dst: 1, n: 0})
	f.Send(&pkt{src: 2, dst: 0, n: 0})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ser := sim.Time(64 * 80)
	if got, want := sinks[1].at[0], 2*ser+100*sim.Nanosecond; got != want {
		t.Errorf("same-leaf arrival %v, want %v", got, want)
	}
	if got, want := sinks[0].at[0], 4*ser+300*sim.Nanosecond; got != want {
		t.Errorf("cross-leaf arrival %v, want %v", got, want)
	}
}

func TestSpecValidation(t *testing.T) {
	bad := []struct {
		name string
		err  error
	}{
		{"zero bandwidth", LinkSpec{Payload: 2048}.Validate()},
		{"zero payload", LinkSpec{Bandwidth: 1e9}.Validate()},
		{"unknown topology", TopologySpec{Kind: "ring", LeafSize: 4}.Validate()},
		{"negative switch", SwitchSpec{Latency: -1}.Validate()},
	}
	for _, b := range bad {
		if b.err == nil {
			t.Errorf("%s accepted", b.name)
		}
	}
	if _, err := New(sim.New(1), 0, link100, sw100, star); err == nil {
		t.Error("a fabric of 0 endpoints was accepted")
	}
}
