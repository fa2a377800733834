package peer

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// rig is two nodes of two GPUs on a star; every endpoint's NIC is a sink
// that must receive nothing, since peer access bypasses the NICs.
type rig struct {
	e     *sim.Engine
	f     *net.Fabric
	mems  []*mem.Memory
	ports []*Port
	nics  []*nicSink
}

type nicSink struct{ got int }

func (s *nicSink) Receive(net.Packet) { s.got++ }

var (
	link = net.LinkSpec{Bandwidth: unit.Rate(12.5e9), Latency: 100 * sim.Nanosecond, Payload: 2048, Header: 64}
	node = net.NodeSpec{GPUs: 2, Fabric: "switch", Bandwidth: unit.Rate(400e9), Latency: 500 * sim.Nanosecond,
		CopyEngines: 1, CopyLaunch: 2 * sim.Microsecond}
)

func newRig(t *testing.T, spec net.NodeSpec, flows bool) *rig {
	t.Helper()
	e := sim.New(1)
	f, err := net.New(e, 4, link, net.SwitchSpec{}, net.TopologySpec{Kind: "star", LeafSize: 16, InOrder: true, Rails: 1,
		NodesPerRouter: 16, RoutersPerGroup: 32, GlobalPerRouter: 17, Radix: 64, Routing: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.UseNodeFabric(spec); err != nil {
		t.Fatal(err)
	}
	if flows {
		f.UseFlows()
	}
	r := &rig{e: e, f: f}
	for i := range 4 {
		r.mems = append(r.mems, mem.New("m", true))
		r.nics = append(r.nics, &nicSink{})
		f.Attach(i, r.nics[i])
	}
	for i := range 4 {
		r.ports = append(r.ports, New(e, f, i, func(j int) *mem.Memory { return r.mems[j] }, spec))
	}
	return r
}

func (r *rig) run(t *testing.T) {
	t.Helper()
	if err := r.e.Run(); err != nil {
		t.Fatal(err)
	}
	if v := r.f.Invariants(r.e.Now()); len(v) > 0 {
		t.Fatal(v)
	}
	for i, s := range r.nics {
		if s.got != 0 {
			t.Errorf("NIC %d received %d packets of peer access", i, s.got)
		}
		if p, _ := r.f.Delivered(i); p != 0 {
			t.Errorf("endpoint %d counts %d NIC packets", i, p)
		}
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// fabricTime is the arrival of a transfer of n bytes (whole packets but
// for the last, which must not be shorter than the others' down-link
// time allows) through the switch: every packet serialised on the
// sender's link, the last one also on the receiver's, plus the fabric's
// latency once.
func fabricTime(n int) sim.Time {
	per := node.Bandwidth.PerByte()
	pk := max(1, (n+2047)/2048)
	last := n - (pk-1)*2048
	return sim.FromPicoseconds(float64(n+64*pk)*per) + sim.FromPicoseconds(float64(last+64)*per) + node.Latency
}

// A store of 6 KiB lands byte for byte in the peer's memory after
// the fabric's serialisation and latency, without touching a NIC.
func TestWriteLandsInPeerMemory(t *testing.T) {
	r := newRig(t, node, false)
	src := r.mems[0].Alloc(mem.GPU, 8192, "src")
	dst := r.mems[1].Alloc(mem.GPU, 8192, "dst")
	want := pattern(6144)
	r.mems[0].Write(src, want)
	var at sim.Time
	r.ports[0].Write(1, dst, src, 6144, func() { at = r.e.Now() })
	r.run(t)
	got := make([]byte, 6144)
	r.mems[1].Read(dst, got)
	if !bytes.Equal(got, want) {
		t.Fatal("peer memory differs from what was stored")
	}
	if want := fabricTime(6144); at != want {
		t.Fatalf("landed at %v, want %v (fabric serialisation and latency)", at, want)
	}
}

// A load brings the peer's bytes back after a request and a response.
func TestReadFetchesPeerBytes(t *testing.T) {
	r := newRig(t, node, false)
	src := r.mems[1].Alloc(mem.GPU, 4096, "src")
	dst := r.mems[0].Alloc(mem.GPU, 4096, "dst")
	want := pattern(4096)
	r.mems[1].Write(src, want)
	var at sim.Time
	r.ports[0].Read(1, dst, src, 4096, func() { at = r.e.Now() })
	r.run(t)
	got := make([]byte, 4096)
	r.mems[0].Read(dst, got)
	if !bytes.Equal(got, want) {
		t.Fatal("local memory differs from the peer's bytes")
	}
	if want := fabricTime(0) + fabricTime(4096); at != want {
		t.Fatalf("done at %v, want request plus response %v", at, want)
	}
}

// An atomic is applied once at the peer and returns the old value.
func TestAtomicAppliesAtPeer(t *testing.T) {
	r := newRig(t, node, false)
	a := r.mems[1].Alloc(mem.GPU, 64, "word")
	r.mems[1].Store64(a, 40)
	var old uint64
	r.ports[0].Atomic(1, a, 8, func(v uint64) uint64 { return v + 2 }, func(v uint64) { old = v })
	r.run(t)
	if old != 40 || r.mems[1].Load64(a) != 42 {
		t.Fatalf("fetch-add returned %d, word %d; want 40 and 42", old, r.mems[1].Load64(a))
	}
}

// One copy engine serves copies one after another, each after its launch
// time; two engines overlap them (their packets then share the fabric).
func TestCopyEnginesQueue(t *testing.T) {
	for _, tc := range []struct {
		engines int
		serial  bool
	}{{1, true}, {2, false}} {
		spec := node
		spec.CopyEngines = tc.engines
		r := newRig(t, spec, false)
		src := r.mems[0].Alloc(mem.GPU, 1<<16, "src")
		dst := r.mems[1].Alloc(mem.GPU, 1<<16, "dst")
		r.mems[0].Write(src, pattern(1<<16))
		var ends []sim.Time
		for i := range 2 {
			off := mem.Addr(i * 1 << 15)
			r.ports[0].Copy(0, 1, dst+off, src+off, 1<<15, func() { ends = append(ends, r.e.Now()) })
		}
		r.run(t)
		one := node.CopyLaunch + fabricTime(1<<15)
		if tc.serial && ends[1] != 2*one {
			t.Errorf("1 engine: second copy ends at %v, want %v (after the first, plus its own launch)", ends[1], 2*one)
		}
		if !tc.serial && ends[1] >= 2*one {
			t.Errorf("2 engines: second copy ends at %v, not before %v", ends[1], 2*one)
		}
		got := make([]byte, 1<<16)
		r.mems[1].Read(dst, got)
		if !bytes.Equal(got, pattern(1<<16)) {
			t.Errorf("%d engines: copied bytes differ", tc.engines)
		}
	}
}

// The flow model carries a transfer as one flow with the same bytes.
func TestWriteInFlowModel(t *testing.T) {
	r := newRig(t, node, true)
	src := r.mems[0].Alloc(mem.GPU, 1<<20, "src")
	dst := r.mems[1].Alloc(mem.GPU, 1<<20, "dst")
	r.mems[0].Write(src, pattern(1<<20))
	done := false
	r.ports[0].Write(1, dst, src, 1<<20, func() { done = true })
	r.run(t)
	got := make([]byte, 1<<20)
	r.mems[1].Read(dst, got)
	if !done || !bytes.Equal(got, pattern(1<<20)) {
		t.Fatal("flow-model peer write did not land its bytes")
	}
}

// Only GPUs of one node reach each other.
func TestReachesOnlyTheNode(t *testing.T) {
	r := newRig(t, node, false)
	for _, tc := range []struct {
		a, b int
		want bool
	}{{0, 1, true}, {1, 0, true}, {0, 0, false}, {0, 2, false}, {3, 2, true}} {
		if got := r.ports[tc.a].Reaches(tc.b); got != tc.want {
			t.Errorf("Reaches(%d → %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a store to another node's GPU did not panic")
		}
	}()
	r.ports[0].Write(2, 0, 0, 8, func() {})
}

// From a payload-free memory a transfer carries only the control lines'
// bytes (a flag word at the end arrives with its value), not the payload.
func TestPayloadFreeCarriesControlLines(t *testing.T) {
	r := newRig(t, node, false)
	r.mems[0], r.mems[1] = mem.New("pf0", false), mem.New("pf1", false)
	src := r.mems[0].Alloc(mem.GPU, 1<<16, "src")
	dst := r.mems[1].Alloc(mem.GPU, 1<<16, "dst")
	flag := mem.Addr(1<<16 - 8)
	r.mems[0].MarkControl(src+flag, 8)
	r.mems[1].MarkControl(dst+flag, 8)
	r.mems[0].Store64(src+flag, 77)
	r.ports[0].Write(1, dst, src, 1<<16, func() {})
	r.run(t)
	if got := r.mems[1].Load64(dst + flag); got != 77 {
		t.Fatalf("flag word %d after a payload-free transfer, want 77", got)
	}
}
