package nic_test

import (
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
	for _, want := range []string{"node[1].nic cmd put", "node[1].nic tx put", "node[0].nic rx put", "node[0].nic tx ack"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing span %q in\n%s", want, got)
		}
	}
}
