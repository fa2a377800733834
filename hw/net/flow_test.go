package net

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

type testMsg struct {
	src, dst int
	n        unit.Bytes
	id       int
}

func (p testMsg) Route() (int, int)        { return p.src, p.dst }
func (p testMsg) PayloadBytes() unit.Bytes { return p.n }

type recorder struct {
	e   *sim.Engine
	at  map[int]sim.Time
	seq []int
}

func (r *recorder) Receive(p Packet) {
	m := p.(testMsg)
	r.at[m.id] = r.e.Now()
	r.seq = append(r.seq, m.id)
}

// flowFabric returns a flow-model fabric of n endpoints on 100 Gbps links
// (12.5 B/ns), 2 KiB packets with 64 B headers, 100 ns switches and no
// link latency, all delivering to one recorder.
func flowFabric(t *testing.T, n int, topo TopologySpec) (*sim.Engine, *Fabric, *recorder) {
	t.Helper()
	e := sim.New(1)
	f, err := New(e, n, LinkSpec{Bandwidth: unit.Rate(100e9 / 8), Payload: 2048, Header: 64},
		SwitchSpec{Latency: 100 * sim.Nanosecond}, topo)
	if err != nil {
		t.Fatal(err)
	}
	f.UseFlows()
	r := &recorder{e: e, at: map[int]sim.Time{}}
	for i := range n {
		f.Attach(i, r)
	}
	return e, f, r
}

var starTopo = TopologySpec{Kind: "star", LeafSize: 16, InOrder: true}

// wireNs is the wire time in ns of an n-byte message at 12.5 B/ns with one
// 64 B header per 2 KiB packet.
func wireNs(n int) float64 {
	pk := max(1, (n+2047)/2048)
	return float64(n+64*pk) / 12.5
}

func near(t *testing.T, what string, got sim.Time, wantNs float64) {
	t.Helper()
	if d := float64(got)/1000 - wantNs; d > 1 || d < -1 {
		t.Errorf("%s: %v, want %.1fns", what, got, wantNs)
	}
}

func TestFlowAloneRunsAtLinkRate(t *testing.T) {
	e, f, r := flowFabric(t, 2, starTopo)
	f.Send(testMsg{0, 1, 1 << 20, 1})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	// Wire time, then the switch latency and one packet's store-and-forward.
	near(t, "1 MiB alone", r.at[1], wireNs(1<<20)+100+wireNs(2048))
}

func TestFlowsShareABottleneckFairly(t *testing.T) {
	// Two senders into one receiver: its downlink is shared, each flow gets
	// half the rate; when the short one ends the long one speeds up.
	e, f, r := flowFabric(t, 3, starTopo)
	f.Send(testMsg{0, 2, 256 << 10, 1})
	f.Send(testMsg{1, 2, 1 << 20, 2})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	short := 2 * wireNs(256<<10)
	near(t, "short flow at half rate", r.at[1], short+100+wireNs(2048))
	long := short + (wireNs(1<<20) - wireNs(256<<10))
	near(t, "long flow speeds up after", r.at[2], long+100+wireNs(2048))
}

func TestFlowMaxMinFairness(t *testing.T) {
	// Flows A: 0→3, B: 1→3, C: 1→4. The downlink of 3 carries A and B; the
	// uplink of 1 carries B and C. Max-min: each gets half, none can grow.
	// With A alone on 2→4 added the downlink of 4 carries C and D: still
	// half each. Equal sizes end together.
	e, f, r := flowFabric(t, 5, starTopo)
	for i, m := range []testMsg{{0, 3, 64 << 10, 1}, {1, 3, 64 << 10, 2}, {1, 4, 64 << 10, 3}, {2, 4, 64 << 10, 4}} {
		_ = i
		f.Send(m)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 4; id++ {
		near(t, "max-min half rate", r.at[id], 2*wireNs(64<<10)+100+wireNs(2048))
	}
}

func TestFlowPairStaysInOrder(t *testing.T) {
	e, f, r := flowFabric(t, 2, starTopo)
	f.Send(testMsg{0, 1, 1 << 20, 1})
	f.Send(testMsg{0, 1, 8, 2})
	f.Send(testMsg{0, 1, 64 << 10, 3})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(r.seq) != 3 || r.seq[0] != 1 || r.seq[1] != 2 || r.seq[2] != 3 {
		t.Fatalf("delivery order %v, want [1 2 3]", r.seq)
	}
	if f.ActiveFlows() != 0 {
		t.Fatalf("%d flows still active", f.ActiveFlows())
	}
}

func TestFlowFatTreeCrossesFourPorts(t *testing.T) {
	e, f, r := flowFabric(t, 8, TopologySpec{Kind: "fattree", LeafSize: 4, InOrder: true})
	f.Send(testMsg{0, 5, 64 << 10, 1})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	near(t, "two leaves apart", r.at[1], wireNs(64<<10)+3*(100+wireNs(2048)))
}

// TestFlowEventsPerMessage checks the flow model's point: a message costs
// a few events, not a few per packet: its completion, its delivery and
// the reallocation of the instant it ends (the next one starts then), plus
// the first start's.
func TestFlowEventsPerMessage(t *testing.T) {
	e, f, _ := flowFabric(t, 2, starTopo)
	for i := range 10 {
		f.Send(testMsg{0, 1, 1 << 20, i})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if ev := e.Events(); ev > 3*10+1 {
		t.Fatalf("%d events for 10 messages of 512 packets each", ev)
	}
}

func TestNetworkSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		spec NetworkSpec
		want string // "" when valid, else the field the error names
	}{
		{NetworkSpec{ModelPacket, BundleExact, 0}, ""},
		{NetworkSpec{ModelFlow, BundleExact, 0}, ""},
		{NetworkSpec{ModelFlow, BundleAggregate, 0}, ""},
		{NetworkSpec{ModelFlow, BundleExact, MaxFlowInterval}, ""},
		{NetworkSpec{"fluid", BundleExact, 0}, "network.model"},
		{NetworkSpec{ModelFlow, "sum", 0}, "network.flow_bundle"},
		{NetworkSpec{ModelFlow, "", 0}, "network.flow_bundle"},
		{NetworkSpec{ModelPacket, BundleAggregate, 0}, "network.flow_bundle"},
		{NetworkSpec{ModelFlow, BundleExact, -1}, "network.flow_interval"},
		{NetworkSpec{ModelFlow, BundleExact, MaxFlowInterval + 1}, "network.flow_interval"},
		{NetworkSpec{ModelPacket, BundleExact, sim.Microsecond}, "network.flow_interval"},
	} {
		err := tc.spec.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want one naming %q", tc.spec, err, tc.want)
		}
	}
	// Each value bad on its own is named beside a bad model (Validate
	// returned at the model's problem); a bundle or interval valid on its
	// own is not checked against a bad model.
	err := NetworkSpec{"fluid", "sum", -1}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("three bad values: %v, want three lines", err)
	}
	if err := (NetworkSpec{"fluid", BundleAggregate, sim.Microsecond}).Validate(); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a bad model beside valid values: %v, want its line alone", err)
	}
}

// TestGivenUpFillRestoresBottlenecks checks that a fill given up over an
// unsafe floor (fill's unmark) gives every port it reached its bottleneck
// mark, and every flow its bottleneck port, as they were before the try:
// a filling before the give-up re-marks them for rates that are then
// taken back, and the next try's search crosses only marked ports (moe
// under COMPNET at EP 64 lost a full port's mark that way).
func TestGivenUpFillRestoresBottlenecks(t *testing.T) {
	e, f, _ := flowFabric(t, 4, starTopo)
	for i, m := range []testMsg{{0, 1, 1 << 20, 1}, {2, 1, 1 << 20, 2}, {0, 3, 1 << 20, 3}, {3, 2, 1 << 20, 4}} {
		m.id = i
		f.Send(m)
	}
	if err := e.RunUntil(sim.Microsecond); err != nil {
		t.Fatal(err)
	}
	fs := f.fl
	neck := map[*port]bool{}
	at := map[*flow]*port{}
	for _, pt := range fs.all {
		neck[pt] = pt.neck
		for _, fl := range pt.flows {
			at[fl] = fl.at
		}
	}
	fs.epoch++
	fs.ports, fs.flows, fs.floor = fs.ports[:0], fs.flows[:0], 0
	for _, pt := range fs.all {
		f.collect(pt)
	}
	necks := 0
	for _, pt := range fs.ports {
		if pt.neck {
			necks++
		}
		pt.neck = !pt.neck // what a filling of the try may leave
	}
	for _, fl := range fs.flows {
		fl.at = nil
	}
	if necks == 0 || len(fs.flows) == 0 {
		t.Fatalf("the try reached %d bottleneck ports and %d flows: nothing to restore", necks, len(fs.flows))
	}
	f.unmark()
	for pt, was := range neck {
		if pt.neck != was {
			t.Errorf("port %s: bottleneck mark %v after the give-up, %v before the try", pt.name, pt.neck, was)
		}
	}
	for fl, was := range at {
		if fl.at != was {
			t.Errorf("flow %v: bottleneck port changed by the give-up", fl.p)
		}
	}
}
