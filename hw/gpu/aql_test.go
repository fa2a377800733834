package gpu

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// put writes a packet into slot w: the body first, the header at hdrAt.
func put(e *sim.Engine, q *AQLQueue, w uint64, pk AQLPacket, hdrAt, bellAt sim.Time) {
	m := q.g.mem
	b := pk.Encode()
	m.Write(q.Slot(w)+2, b[2:])
	e.At(hdrAt, func() { m.Write(q.Slot(w), b[:2]) })
	e.At(bellAt, func() { RingDoorbell(m, q.Doorbell(), w+1) })
}

// The packet processor waits for the doorbell, then for a valid header: a
// doorbell rung before the header is published does not launch garbage.
// Each kernel's signal is decremented once, after its last work-group.
func TestAQLQueueHeaderPublishedLast(t *testing.T) {
	e, g := newGPU("apu")
	g.spec.Launch, g.spec.Teardown = 0, 0
	q, err := g.NewAQLQueue("q", 4)
	if err != nil {
		t.Fatal(err)
	}
	m := g.mem
	var ranAt []sim.Time
	var args [][]uint64
	obj := g.LoadKernel(KernelCode{Name: "k", Body: func(wg *WG, kernarg mem.Addr) {
		args = append(args, wg.LoadArgs(kernarg, 2))
		ranAt = append(ranAt, wg.Now())
		wg.VALU(100)
	}})
	kernarg := m.AllocData(mem.Host, 16, "args")
	m.Store64(kernarg, 11)
	m.Store64(kernarg+8, 22)
	sig := g.NewSignal("s", 2)
	pk := AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj, Kernarg: kernarg, Signal: sig}
	// Packet 0: doorbell at 1us, header only at 5us. Packet 1: normal.
	put(e, q, 0, pk, 5*sim.Microsecond, sim.Microsecond)
	m.Store64(q.WriteIndex(), 2)
	put(e, q, 1, pk, 6*sim.Microsecond, 6*sim.Microsecond)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(ranAt) != 2 || ranAt[0] < 5*sim.Microsecond {
		t.Fatalf("kernels ran at %v, want two, the first after its header (5us)", ranAt)
	}
	if args[0][0] != 11 || args[0][1] != 22 {
		t.Errorf("kernel read args %v, want [11 22]", args[0])
	}
	st := q.Stats()
	if st.HeaderWait != 1 || st.Launched != 2 || m.Load64(sig) != 0 || m.Load64(q.ReadIndex()) != 2 {
		t.Errorf("stats %+v signal %d read index %d; want one header wait, 2 launches, signal 0, read index 2",
			st, m.Load64(sig), m.Load64(q.ReadIndex()))
	}
	if h := DecodeAQL(m.Bytes(q.Slot(0), 64)).Header; h != AQLTypeInvalid {
		t.Errorf("consumed slot header = %#x, want INVALID", h)
	}
	for _, r := range q.Runs() {
		if !r.Finished() || r.BodyStart < r.LaunchStart || r.Done <= r.BodyEnd {
			t.Errorf("timeline %+v out of order", r)
		}
	}
}

// A packet naming an unknown kernel object is skipped and counted; its
// signal is still decremented so a waiter does not hang.
func TestAQLQueueBadPacket(t *testing.T) {
	e, g := newGPU("apu")
	q, _ := g.NewAQLQueue("q", 2)
	sig := g.NewSignal("s", 1)
	g.mem.Store64(q.WriteIndex(), 1)
	put(e, q, 0, AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 64, KernelObject: 42, Signal: sig}, 0, 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if q.Stats().BadPackets != 1 || g.mem.Load64(sig) != 0 || len(q.Runs()) != 0 {
		t.Errorf("stats %+v signal %d: want one bad packet, signal 0", q.Stats(), g.mem.Load64(sig))
	}
}

// A queue told to keep no runs launches and times its kernels as one that
// keeps them, and its Runs stays empty.
func TestAQLQueueKeepRuns(t *testing.T) {
	var times [2][]sim.Time
	for i, keep := range []bool{true, false} {
		e, g := newGPU("apu")
		q, err := g.NewAQLQueue("q", 4)
		if err != nil {
			t.Fatal(err)
		}
		q.SetKeepRuns(keep)
		obj := g.LoadKernel(KernelCode{Name: "k", Body: func(wg *WG, kernarg mem.Addr) {
			times[i] = append(times[i], wg.Now())
			wg.VALU(100)
		}})
		sig := g.NewSignal("s", 3)
		pk := AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 128, KernelObject: obj, Signal: sig}
		g.mem.Store64(q.WriteIndex(), 3)
		for w := range uint64(3) {
			put(e, q, w, pk, 0, sim.Time(w+1)*sim.Microsecond)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want := 0
		if keep {
			want = 3
		}
		if n := len(q.Runs()); n != want || q.Stats().Launched != 3 || g.mem.Load64(sig) != 0 {
			t.Errorf("keep %v: %d runs kept, stats %+v, signal %d; want %d, 3 launched, signal 0",
				keep, n, q.Stats(), g.mem.Load64(sig), want)
		}
	}
	if len(times[0]) != 6 || !slices.Equal(times[0], times[1]) {
		t.Errorf("work-groups started at %v keeping runs, %v not: want the same six", times[0], times[1])
	}
}

func TestAQLQueueSize(t *testing.T) {
	_, g := newGPU("apu")
	for _, n := range []int{0, 3, 1 << 17} {
		if _, err := g.NewAQLQueue("q", n); err == nil {
			t.Errorf("size %d accepted", n)
		}
	}
}

func TestAQLPacketRoundTrip(t *testing.T) {
	p := AQLPacket{Header: DispatchHeader, Setup: 1, WGSize: 256, QueueIndex: 42, Grid: 4096, GroupSize: 1024,
		KernelObject: 1<<40 + 3, Kernarg: 0x1234, Signal: 0x5678}
	b := p.Encode()
	if got := DecodeAQL(b[:]); got != p {
		t.Errorf("round trip: %+v, want %+v", got, p)
	}
}
