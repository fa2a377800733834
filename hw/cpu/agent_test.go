package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The agent thread waits for the doorbell, then for a valid header: a
// doorbell rung before the header is published runs nothing until the
// header is there. A packet naming an unknown function is skipped and
// counted, its signal still decremented; known functions get the
// packet's arguments, in queue order.
func TestAgentQueueHeaderLastAndBadPackets(t *testing.T) {
	e := sim.New(1)
	m := mem.New("m", true)
	c := New(e, "cpu", spec(), m, mem.NewServer(100e9))
	q, err := c.NewAgentQueue("q", 4)
	if err != nil {
		t.Fatal(err)
	}
	var calls []sim.Time
	var args [][AgentArgs]uint64
	ptr := c.LoadFunction(Function{Name: "f", Body: func(th *Thread, a [AgentArgs]uint64) {
		calls = append(calls, th.Now())
		args = append(args, a)
		th.Instr(100)
	}})
	sig := m.AllocData(mem.Host, 8, "sig")
	m.Store64(sig, 3)
	put := func(w uint64, pk AgentPacket, hdrAt, bellAt sim.Time) {
		b := pk.Encode()
		m.Write(q.Slot(w)+2, b[2:])
		e.At(hdrAt, func() { m.Write(q.Slot(w), b[:2]) })
		e.At(bellAt, func() {
			if w+1 > m.Load64(q.Doorbell()) {
				m.Store64(q.Doorbell(), w+1)
			}
		})
	}
	m.Store64(q.WriteIndex(), 3)
	put(0, AgentPacket{Header: AgentDispatchHeader, Function: ptr, Args: [4]uint64{1, 2, 3, 4}, Signal: sig}, 5*sim.Microsecond, sim.Microsecond)
	put(1, AgentPacket{Header: AgentDispatchHeader, Function: ptr + 7, Signal: sig}, 6*sim.Microsecond, 6*sim.Microsecond)
	put(2, AgentPacket{Header: AgentDispatchHeader, Function: ptr, Args: [4]uint64{5}, Signal: sig}, 7*sim.Microsecond, 7*sim.Microsecond)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := q.Stats()
	if len(calls) != 2 || calls[0] < 5*sim.Microsecond || st.HeaderWait == 0 || st.BadPackets != 1 || st.Calls != 2 {
		t.Fatalf("calls at %v, stats %+v: want 2 calls, the first after its header (5us), one header wait, one bad packet", calls, st)
	}
	if args[0] != [4]uint64{1, 2, 3, 4} || args[1][0] != 5 {
		t.Errorf("arguments %v, want the packets' in order", args)
	}
	if m.Load64(sig) != 0 || m.Load64(q.ReadIndex()) != 3 {
		t.Errorf("signal %d, read index %d: want 0 (every packet decremented it) and 3", m.Load64(sig), m.Load64(q.ReadIndex()))
	}
	for _, r := range q.Runs() {
		if !(r.Seen <= r.Start && r.Start <= r.End && r.End < r.Done) {
			t.Errorf("run %+v out of order", r)
		}
	}
	if _, err := c.NewAgentQueue("bad", 3); err == nil {
		t.Error("a 3-slot agent queue was accepted")
	}
}

// FuzzAgentPacket: decoding an encoded packet gives every field back
// (no two fields overlap in the layout).
func FuzzAgentPacket(f *testing.F) {
	f.Add(uint16(AgentDispatchHeader), uint16(7), uint32(42), uint64(1<<41), uint64(1), uint64(2), uint64(0x1000))
	f.Fuzz(func(t *testing.T, hdr, typ uint16, qidx uint32, fn, a0, a3, sig uint64) {
		p := AgentPacket{Header: hdr, Type: typ, QueueIndex: qidx, Function: fn, Args: [4]uint64{a0, 0, 0, a3}, Signal: mem.Addr(sig)}
		b := p.Encode()
		if got := DecodeAgent(b[:]); got != p {
			t.Fatalf("round trip: %+v, want %+v", got, p)
		}
	})
}
