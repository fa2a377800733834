package nic_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestMatchingOrder checks §2.2: priority before overflow, first match in
// append order, ignore bits and the source filter. Each ME has its own
// buffer and UserPtr; the test checks which one the message landed in.
func TestMatchingOrder(t *testing.T) {
	type me struct {
		name   string
		list   nic.List
		id     int
		bits   uint64
		ignore uint64
	}
	cases := []struct {
		name string
		src  int // initiator node (1 or 2)
		bits uint64
		mes  []me
		want string // "" = dropped
	}{
		{"priority before overflow", 1, 7, []me{{"over", nic.Overflow, nic.AnyID, 7, 0}, {"prio", nic.Priority, nic.AnyID, 7, 0}}, "prio"},
		{"first match in append order", 1, 7, []me{{"a", nic.Priority, nic.AnyID, 7, 0}, {"b", nic.Priority, nic.AnyID, 7, 0}}, "a"},
		{"bits mismatch skipped", 1, 7, []me{{"a", nic.Priority, nic.AnyID, 6, 0}, {"b", nic.Priority, nic.AnyID, 7, 0}}, "b"},
		{"ignore bits", 1, 0xff07, []me{{"a", nic.Priority, nic.AnyID, 0x0007, 0x00ff}, {"b", nic.Priority, nic.AnyID, 0x0007, 0xff00}}, "b"},
		{"source filter", 2, 7, []me{{"from1", nic.Priority, 1, 7, 0}, {"from2", nic.Priority, 2, 7, 0}}, "from2"},
		{"overflow when priority misses", 1, 7, []me{{"p", nic.Priority, nic.AnyID, 8, 0}, {"o", nic.Overflow, nic.AnyID, 7, 0}}, "o"},
		{"no match drops", 1, 7, []me{{"p", nic.Priority, nic.AnyID, 8, 0}, {"o", nic.Overflow, 2, 7, 0}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 3, true)
			tn := v.nics[0]
			eq := tn.NewEQ(0, 0)
			pt := tn.PTAlloc(eq, false)
			bufs := map[string]mem.Addr{}
			for _, m := range c.mes {
				bufs[m.name] = v.alloc(0, 64, nil)
				tn.MEAppend(pt, nic.ME{Start: bufs[m.name], Length: 64, MatchID: m.id, MatchBits: m.bits, IgnoreBits: m.ignore,
					Options: nic.MEOpPut, UserPtr: m.name}, m.list)
			}
			src := v.alloc(c.src, 8, func(k int) byte { return byte(0xa0 + k) })
			ieq := v.nics[c.src].NewEQ(0, 0)
			md := &nic.MD{Start: src, Length: 8, EQ: ieq}
			v.host(c.src, func(p *sim.Proc) { v.nics[c.src].Doorbell(p, putCmd(md, 8, 0, pt, c.bits)) })
			v.run()
			evs := drain(eq)
			acks := drain(ieq)
			if c.want == "" {
				if len(evs) != 0 {
					t.Fatalf("dropped message produced target events %v", types(evs))
				}
				if got := acks[len(acks)-1]; got.Type != nic.EventAck || got.NIFail != nic.FailDropped {
					t.Fatalf("initiator's last event = %v/%v, want ACK/DROPPED", got.Type, got.NIFail)
				}
				if tn.Stats().Drops != 1 {
					t.Fatalf("drops = %d, want 1", tn.Stats().Drops)
				}
				return
			}
			if len(evs) != 1 || evs[0].Type != nic.EventPut || evs[0].UserPtr != c.want {
				t.Fatalf("target events %+v, want one PUT on %q", evs, c.want)
			}
			for name, a := range bufs {
				got := v.read(0, a, 8)
				landed := got[0] == 0xa0
				if landed != (name == c.want) {
					t.Errorf("buffer %q = % x (landed=%v), want landed only in %q", name, got, landed, c.want)
				}
			}
			if got := types(acks); !slices.Equal(got, []nic.EventType{nic.EventSend, nic.EventAck}) || acks[1].NIFail != nic.FailOK {
				t.Fatalf("initiator events %v (fail %v), want [SEND ACK] OK", got, acks[len(acks)-1].NIFail)
			}
		})
	}
}

// TestUnexpectedThenAppend: a message matching only the overflow list
// lands in the overflow buffer at its managed offset; a later priority
// append matches the unexpected header (PUT_OVERFLOW with Start in the
// overflow buffer), and a non-matching append does not.
func TestUnexpectedThenAppend(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	over := v.alloc(0, 4096, nil)
	tn.MEAppend(pt, nic.ME{Start: over, Length: 4096, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEManageLocal, MinFree: 100, UserPtr: "over"}, nic.Overflow)
	src := v.alloc(1, 300, func(k int) byte { return byte(k) })
	md := &nic.MD{Start: src, Length: 300}
	v.host(1, func(p *sim.Proc) {
		v.nics[1].Doorbell(p, putCmd(md, 100, 0, pt, 5))
		c := putCmd(md, 200, 0, pt, 6)
		c.LocalOffset = 100
		c.HdrData = 42
		v.nics[1].Doorbell(p, c)
	})
	v.run()
	evs := drain(eq)
	if got := types(evs); !slices.Equal(got, []nic.EventType{nic.EventPut, nic.EventPut}) {
		t.Fatalf("overflow events %v, want two PUT", got)
	}
	if evs[0].Start != over || evs[1].Start != over+100 {
		t.Fatalf("managed offsets: starts %#x %#x, want %#x %#x", evs[0].Start, evs[1].Start, over, over+100)
	}
	if !bytes.Equal(v.read(0, over, 300), v.read(1, src, 300)) {
		t.Fatal("overflow buffer does not hold both messages back to back")
	}
	if tn.Unexpected(pt) != 2 || tn.Stats().Unexpected != 2 {
		t.Fatalf("unexpected list %d, stats %d, want 2", tn.Unexpected(pt), tn.Stats().Unexpected)
	}
	// A non-matching append stays linked and sees nothing.
	ct := tn.NewCT()
	miss := tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 64, nil), Length: 64, MatchID: nic.AnyID, MatchBits: 9,
		Options: nic.MEOpPut | nic.MEUseOnce | nic.MEEventCTOverflow, CT: ct}, nic.Priority)
	// The matching use-once append consumes the second header only.
	hit := tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 512, nil), Length: 512, MatchID: 1, MatchBits: 6,
		Options: nic.MEOpPut | nic.MEUseOnce | nic.MEEventCTOverflow, CT: ct, UserPtr: "recv"}, nic.Priority)
	v.run()
	evs = drain(eq)
	if len(evs) != 1 || evs[0].Type != nic.EventPutOverflow || evs[0].UserPtr != "recv" {
		t.Fatalf("after appends: events %+v, want one PUT_OVERFLOW for recv", evs)
	}
	if ev := evs[0]; ev.Start != over+100 || ev.MLength != 200 || ev.HdrData != 42 || ev.MatchBits != 6 || ev.Initiator != 1 {
		t.Fatalf("PUT_OVERFLOW %+v: want start %#x, mlength 200, hdr_data 42", ev, over+100)
	}
	if !miss.Linked() || hit.Linked() || tn.Unexpected(pt) != 1 || ct.Success() != 1 {
		t.Fatalf("miss linked %v, hit linked %v, unexpected %d, ct %d; want true false 1 1",
			miss.Linked(), hit.Linked(), tn.Unexpected(pt), ct.Success())
	}
}

// TestUseOnce: a USE_ONCE ME takes the first message (PUT, AUTO_UNLINK);
// the second goes to the next ME; the third is dropped and acked DROPPED,
// counted as a failure on the MD's CT.
func TestUseOnce(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	a, b := v.alloc(0, 8, nil), v.alloc(0, 8, nil)
	ma := tn.MEAppend(pt, nic.ME{Start: a, Length: 8, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce, UserPtr: "a"}, nic.Priority)
	tn.MEAppend(pt, nic.ME{Start: b, Length: 8, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce | nic.MEEventUnlinkDisable, UserPtr: "b"}, nic.Priority)
	src := v.alloc(1, 8, func(k int) byte { return 1 })
	ct := v.nics[1].NewCT()
	ieq := v.nics[1].NewEQ(0, 0)
	md := &nic.MD{Start: src, Length: 8, EQ: ieq, CT: ct, Options: nic.MDEventCTAck | nic.MDEventSendDisable}
	v.host(1, func(p *sim.Proc) {
		for range 3 {
			v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 0))
		}
		ct.Wait(p, 3)
	})
	v.run()
	evs := drain(eq)
	want := []nic.EventType{nic.EventPut, nic.EventAutoUnlink, nic.EventPut}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("target events %v, want %v", got, want)
	}
	if evs[0].UserPtr != "a" || evs[2].UserPtr != "b" || ma.Linked() {
		t.Fatalf("first to %v, second to %v, a linked %v", evs[0].UserPtr, evs[2].UserPtr, ma.Linked())
	}
	acks := drain(ieq)
	fails := []nic.FailType{}
	for _, ev := range acks {
		fails = append(fails, ev.NIFail)
	}
	if !slices.Equal(fails, []nic.FailType{nic.FailOK, nic.FailOK, nic.FailDropped}) {
		t.Fatalf("acks %v, want OK OK DROPPED", fails)
	}
	if s, f := ct.Get(); s != 2 || f != 1 {
		t.Fatalf("ct = {%d, %d}, want {2, 1}", s, f)
	}
}

// TestFlowControl: with flow control, an undeliverable message disables
// the PT (PT_DISABLED at the target, ack PT_DISABLED); later messages are
// dropped until PTEnable.
func TestFlowControl(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, true)
	src := v.alloc(1, 8, func(int) byte { return 3 })
	ieq := v.nics[1].NewEQ(0, 0)
	md := &nic.MD{Start: src, Length: 8, EQ: ieq, Options: nic.MDEventSendDisable}
	dst := v.alloc(0, 8, nil)
	v.host(1, func(p *sim.Proc) {
		v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 1)) // no ME: disables
		ieq.Wait(p)
		tn.MEAppend(pt, nic.ME{Start: dst, Length: 8, MatchID: nic.AnyID, MatchBits: 1, Options: nic.MEOpPut}, nic.Priority)
		v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 1)) // PT still disabled
		ieq.Wait(p)
		tn.PTEnable(pt)
		v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 1))
	})
	v.run()
	if got := types(drain(eq)); !slices.Equal(got, []nic.EventType{nic.EventPTDisabled, nic.EventPut}) {
		t.Fatalf("target events %v, want [PT_DISABLED PUT]", got)
	}
	acks := drain(ieq)
	if len(acks) != 1 || acks[0].NIFail != nic.FailOK {
		t.Fatalf("last ack %+v", acks)
	}
	if tn.Stats().Drops != 2 || v.read(0, dst, 1)[0] != 3 {
		t.Fatalf("drops %d (want 2), data %d (want 3)", tn.Stats().Drops, v.read(0, dst, 1)[0])
	}
}

// TestZeroLengthPut: zero-length puts are legal synchronization messages.
func TestZeroLengthPut(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	ct := tn.NewCT()
	pt := tn.PTAlloc(nil, false)
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 8, nil), Length: 8, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEEventCTComm, CT: ct}, nic.Priority)
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, putCmd(md, 0, 0, pt, 0)) })
	v.run()
	if ct.Success() != 1 {
		t.Fatalf("ct = %d, want 1", ct.Success())
	}
}
