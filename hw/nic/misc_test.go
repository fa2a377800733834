package nic_test

import (
	"bytes"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestEQFull: without flow control a full EQ loses events (counted); with
// flow control the PT is disabled before the message is delivered.
func TestEQFull(t *testing.T) {
	for _, flow := range []bool{false, true} {
		t.Run(map[bool]string{false: "no flow control", true: "flow control"}[flow], func(t *testing.T) {
			v := newEnv(t, 2, true)
			tn := v.nics[0]
			eq := tn.NewEQ(2, v.alloc(0, 128, nil))
			pt := tn.PTAlloc(eq, flow)
			dst := v.alloc(0, 8, nil)
			tn.MEAppend(pt, nic.ME{Start: dst, Length: 8, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
			ieq := v.nics[1].NewEQ(0, 0)
			md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8, EQ: ieq, Options: nic.MDEventSendDisable}
			v.host(1, func(p *sim.Proc) {
				for range 4 {
					v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 0))
					ieq.Wait(p)
				}
			})
			v.run()
			s := tn.Stats()
			if flow {
				// Two PUTs fill the EQ; the third is refused (PT disabled;
				// its PT_DISABLED event is itself lost), the fourth dropped.
				if s.Drops != 2 || tn.PTEnabled(pt) || eq.Len() != 2 {
					t.Fatalf("drops %d, enabled %v, eq %d; want 2 false 2", s.Drops, tn.PTEnabled(pt), eq.Len())
				}
			} else if s.Drops != 0 || s.EQDrops != 2 || eq.Dropped() != 2 || eq.Len() != 2 {
				t.Fatalf("drops %d, eq drops %d/%d, eq len %d; want 0 2 2 2", s.Drops, s.EQDrops, eq.Dropped(), eq.Len())
			}
		})
	}
}

// TestGetDropped: a get that matches nothing gets a REPLY with
// FailDropped and counts a failure.
func TestGetDropped(t *testing.T) {
	v := newEnv(t, 2, true)
	pt := v.nics[0].PTAlloc(nil, false)
	ct := v.nics[1].NewCT()
	ieq := v.nics[1].NewEQ(0, 0)
	md := &nic.MD{Start: v.alloc(1, 64, nil), Length: 64, EQ: ieq, CT: ct, Options: nic.MDEventCTReply}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, nic.Command{Op: nic.CmdGet, MD: md, Length: 64, PT: pt}) })
	v.run()
	evs := drain(ieq)
	if len(evs) != 1 || evs[0].Type != nic.EventReply || evs[0].NIFail != nic.FailDropped || ct.Failure() != 1 {
		t.Fatalf("events %+v, ct failure %d", evs, ct.Failure())
	}
}

// TestAppendDuringArrival: an ME appended while an unexpected multi-packet
// message is still arriving gets its PUT_OVERFLOW only once the data has
// landed.
func TestAppendDuringArrival(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	over := v.alloc(0, 1<<16, nil)
	tn.MEAppend(pt, nic.ME{Start: over, Length: 1 << 16, MatchID: nic.AnyID, IgnoreBits: ^uint64(0), Options: nic.MEOpPut | nic.MEEventOverflowDisable}, nic.Overflow)
	md := &nic.MD{Start: v.alloc(1, 32<<10, func(k int) byte { return byte(k) }), Length: 32 << 10}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, putCmd(md, 32<<10, 0, pt, 3)) })
	var appendedAt sim.Time
	// Append once the header has been matched but before the data is in.
	v.e.SpawnAt(0, "node[0].poll", func(p *sim.Proc) {
		for tn.Unexpected(pt) == 0 && p.Now() < 100*sim.Microsecond {
			p.Sleep(10 * sim.Nanosecond)
		}
		appendedAt = p.Now()
		tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 64, nil), Length: 64, MatchID: nic.AnyID, MatchBits: 3, Options: nic.MEOpPut | nic.MEUseOnce}, nic.Priority)
	})
	v.run()
	evs := drain(eq)
	if len(evs) != 1 || evs[0].Type != nic.EventPutOverflow || evs[0].MLength != 32<<10 {
		t.Fatalf("events %+v, want one PUT_OVERFLOW of 32KiB", evs)
	}
	if evs[0].Time < appendedAt+2*sim.Microsecond {
		t.Fatalf("PUT_OVERFLOW at %v, appended at %v: before 32KiB could land", evs[0].Time, appendedAt)
	}
}

type recorder struct{ spans []string }

func (r *recorder) Span(track, name string, start, end sim.Time) {
	r.spans = append(r.spans, track+" "+name)
}

// TestTrace: with a tracer installed, the NIC emits command, transmit and
// delivery spans on its "<name>.nic" track.
func TestTrace(t *testing.T) {
	v := newEnv(t, 2, true)
	r := &recorder{}
	v.e.SetTracer(r)
	pt, _ := v.sink()
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 0)) })
	v.run()
	got := strings.Join(r.spans, "\n")
	for _, want := range []string{"node[1].nic cmd", "node[1].nic tx put", "node[0].nic rx put", "node[0].nic tx ack"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing span %q in\n%s", want, got)
		}
	}
}

// TestOutOfOrderFabric: on a fat-tree with random spine choice, packets
// of a message may overtake each other (and the header); puts and gets
// still land byte-exact and complete once.
func TestOutOfOrderFabric(t *testing.T) {
	v := newEnv(t, 4, true, func(s *cluster.Spec) {
		s.Topology.Kind, s.Topology.LeafSize, s.Topology.InOrder = "fattree", 2, false
	})
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	const size = 64 << 10
	dst := v.alloc(0, size, nil)
	tn.MEAppend(pt, nic.ME{Start: dst, Length: size, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
	src := v.alloc(3, size, func(k int) byte { return byte(k * 13 / 7) })
	back := v.alloc(3, size, nil)
	ieq := v.nics[3].NewEQ(0, 0)
	// Cross traffic 2 → 1 loads random spines so that packets of the
	// 3 → 0 messages take paths of different delay.
	pt1 := v.nics[1].PTAlloc(nil, false)
	v.nics[1].MEAppend(pt1, nic.ME{Start: v.alloc(1, 4096, nil), Length: 4096, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	bg := &nic.MD{Start: v.alloc(2, 4096, nil), Length: 4096}
	v.host(2, func(p *sim.Proc) {
		for range 64 {
			v.nics[2].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: bg, Length: 4096, Target: 1, PT: pt1, Ack: nic.NoAckReq})
		}
	})
	v.host(3, func(p *sim.Proc) {
		v.nics[3].Doorbell(p, putCmd(&nic.MD{Start: src, Length: size, EQ: ieq}, size, 0, pt, 0))
		for ev := ieq.Wait(p); ev.Type != nic.EventAck; ev = ieq.Wait(p) {
		}
		v.nics[3].Doorbell(p, nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: back, Length: size, EQ: ieq}, Length: size, PT: pt})
	})
	v.run()
	if got := types(drain(eq)); !slices.Equal(got, []nic.EventType{nic.EventPut, nic.EventGet}) {
		t.Fatalf("target events %v", got)
	}
	if !bytes.Equal(v.read(0, dst, size), v.read(3, src, size)) || !bytes.Equal(v.read(3, back, size), v.read(3, src, size)) {
		t.Fatal("data differs after out-of-order delivery")
	}
	t.Logf("payload packets that overtook their header: %d", tn.Stats().Overtaken)
}

// TestHeaderOvertaken feeds a three-packet put to the target with the
// header last: the payload packets are held until it is matched, and the
// message lands byte-exact and completes once.
func TestHeaderOvertaken(t *testing.T) {
	v := newEnv(t, 2, true)
	v.unchecked = true // the packets come past the fabric
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	mp := uint64(v.spec.Link.Payload)
	size := 2*mp + 100
	dst := v.alloc(0, size, nil)
	tn.MEAppend(pt, nic.ME{Start: dst, Length: size, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	want := make([]byte, size)
	for k := range want {
		want[k] = byte(k * 31)
	}
	hdr := &nic.Header{Op: nic.CmdPut, Initiator: 1, PT: pt, Length: size, Ack: nic.NoAckReq}
	pkt := func(i int) *nic.Packet {
		off := uint64(i) * mp
		l := min(mp, size-off)
		p := &nic.Packet{Src: 1, Dst: 0, Msg: 9, Index: i, Offset: off, Len: l, Last: i == 2, Data: want[off : off+l]}
		if i == 0 {
			p.Hdr = hdr
		}
		return p
	}
	for k, i := range []int{2, 1, 0} {
		v.e.At(sim.Time(k)*sim.Nanosecond, func() { tn.Receive(pkt(i)) })
	}
	v.run()
	if got := types(drain(eq)); !slices.Equal(got, []nic.EventType{nic.EventPut}) {
		t.Fatalf("events %v, want [PUT]", got)
	}
	if !bytes.Equal(v.read(0, dst, int(size)), want) || tn.Stats().Overtaken != 2 {
		t.Fatalf("data exact %v, overtaken %d (want 2)", bytes.Equal(v.read(0, dst, int(size)), want), tn.Stats().Overtaken)
	}
}
