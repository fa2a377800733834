package nic_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// enc encodes float64 values as elements of type t.
func enc(t nic.AtomicType, vals []float64) []byte {
	var b []byte
	for _, x := range vals {
		switch t {
		case nic.Int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
		case nic.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
		case nic.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		case nic.Float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b
}

// TestAtomics checks the target read-modify-write and the fetched old
// values for sum/min/max on int32/int64/float32/float64, plus swap and
// compare-and-swap, against values computed here.
func TestAtomics(t *testing.T) {
	target := []float64{5, -3, 2.5, -1e9, 0}
	incoming := []float64{-7, 4, 2.5, 3e9, -0.5}
	typs := []nic.AtomicType{nic.Int32, nic.Int64, nic.Float32, nic.Float64}
	ops := []struct {
		op nic.AtomicOp
		f  func(a, b float64) float64
	}{
		{nic.Sum, func(a, b float64) float64 { return a + b }},
		{nic.Min, math.Min},
		{nic.Max, math.Max},
	}
	for _, typ := range typs {
		for _, o := range ops {
			for _, fetch := range []bool{false, true} {
				name := fmt.Sprintf("type=%d/op=%d/fetch=%v", typ, o.op, fetch)
				t.Run(name, func(t *testing.T) {
					isInt := typ == nic.Int32 || typ == nic.Int64
					tv, iv := slices.Clone(target), slices.Clone(incoming)
					if isInt {
						for i := range tv {
							tv[i], iv[i] = math.Trunc(tv[i]), math.Trunc(iv[i])
						}
						if typ == nic.Int32 {
							tv[3], iv[3] = -1e8, 3e8 // stay in range
						}
					}
					want := make([]float64, len(tv))
					for i := range tv {
						want[i] = o.f(tv[i], iv[i])
					}
					got, old := runAtomic(t, typ, o.op, enc(typ, tv), enc(typ, iv), fetch, 0)
					if !bytes.Equal(got, enc(typ, want)) {
						t.Fatalf("target = % x, want % x", got, enc(typ, want))
					}
					if fetch && !bytes.Equal(old, enc(typ, tv)) {
						t.Fatalf("fetched = % x, want old % x", old, enc(typ, tv))
					}
				})
			}
		}
	}
	t.Run("swap", func(t *testing.T) {
		got, old := runAtomic(t, nic.Int64, nic.Swap, enc(nic.Int64, []float64{11}), enc(nic.Int64, []float64{22}), true, 0)
		if u64(got) != 22 || u64(old) != 11 {
			t.Fatalf("swap: target %d old %d, want 22 11", u64(got), u64(old))
		}
	})
	for _, c := range []struct {
		cmp  uint64
		want uint64
	}{{11, 22}, {12, 11}} {
		t.Run(fmt.Sprintf("cswap cmp=%d", c.cmp), func(t *testing.T) {
			got, old := runAtomic(t, nic.Int64, nic.CSwap, enc(nic.Int64, []float64{11}), enc(nic.Int64, []float64{22}), true, c.cmp)
			if u64(got) != c.want || u64(old) != 11 {
				t.Fatalf("cswap: target %d old %d, want %d 11", u64(got), u64(old), c.want)
			}
		})
	}
}

// runAtomic applies incoming to target on node 0 from node 1 and returns
// the target bytes and (fetch) the returned old bytes.
func runAtomic(t *testing.T, typ nic.AtomicType, op nic.AtomicOp, target, incoming []byte, fetch bool, operand uint64) (got, old []byte) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	n := uint64(len(target))
	dst := v.alloc(0, n, func(k int) byte { return target[k] })
	tn.MEAppend(pt, nic.ME{Start: dst, Length: n, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
	src := v.alloc(1, n, func(k int) byte { return incoming[k] })
	res := v.alloc(1, n, nil)
	ieq := v.nics[1].NewEQ(0, 0)
	cmd := nic.Command{Op: nic.CmdAtomic, MD: &nic.MD{Start: src, Length: n, EQ: ieq}, Length: n, PT: pt,
		AtomicOp: op, AtomicType: typ, Operand: operand}
	if op == nic.Swap || op == nic.CSwap {
		cmd.Op = nic.CmdSwap
	} else if fetch {
		cmd.Op = nic.CmdFetchAtomic
	}
	if fetch {
		cmd.ResultMD = &nic.MD{Start: res, Length: n, EQ: ieq}
	}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, cmd) })
	v.run()
	evs := drain(eq)
	wantEv := nic.EventAtomic
	if fetch {
		wantEv = nic.EventFetchAtomic
	}
	if len(evs) != 1 || evs[0].Type != wantEv || evs[0].MLength != n || evs[0].AtomicOp != op {
		t.Fatalf("target events %+v, want one %v", evs, wantEv)
	}
	want := []nic.EventType{nic.EventSend, nic.EventAck}
	if fetch {
		want = []nic.EventType{nic.EventSend, nic.EventReply}
	}
	if got := types(drain(ieq)); !slices.Equal(got, want) {
		t.Fatalf("initiator events %v, want %v", got, want)
	}
	return v.read(0, dst, int(n)), v.read(1, res, int(n))
}

// TestMultiPacket: 10 KiB puts and gets over 2 KiB packets land
// byte-exact, in 5 packets each, including at an offset and truncated.
func TestMultiPacket(t *testing.T) {
	const size = 10 * 1024
	cases := []struct {
		name         string
		op           nic.Op
		length       uint64
		meLen        uint64
		remoteOffset uint64
		wantM        uint64
		wantPkts     uint64 // data packets of the message
	}{
		{"put 10KiB", nic.CmdPut, size, size, 0, size, 5},
		{"put 10KiB+1 at offset 3", nic.CmdPut, size + 1, size + 8, 3, size + 1, 6},
		{"put truncated to 5000", nic.CmdPut, size, 5000, 0, 5000, 5},
		{"get 10KiB", nic.CmdGet, size, size, 0, size, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 2, true)
			tn := v.nics[0]
			eq := tn.NewEQ(0, 0)
			pt := tn.PTAlloc(eq, false)
			pattern := func(k int) byte { return byte(k*7 + k/251) }
			var me, md = v.alloc(0, c.meLen, nil), v.alloc(1, c.length, nil)
			if c.op == nic.CmdGet {
				me = v.alloc(0, c.meLen, pattern)
			} else {
				md = v.alloc(1, c.length, pattern)
			}
			tn.MEAppend(pt, nic.ME{Start: me, Length: c.meLen, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
			flag := v.mems[1].AllocData(0, 8, "flag")
			ieq := v.nics[1].NewEQ(0, 0)
			cmd := nic.Command{Op: c.op, MD: &nic.MD{Start: md, Length: c.length, EQ: ieq}, Length: c.length, PT: pt,
				RemoteOffset: c.remoteOffset, CompletionFlag: flag}
			var flagAt sim.Time
			v.host(1, func(p *sim.Proc) {
				v.nics[1].Doorbell(p, cmd)
				p.WaitUntil(v.mems[1].Watch(flag), "flag", func() bool { return v.mems[1].Load64(flag) == 1 })
				flagAt = p.Now()
			})
			v.run()
			evs := drain(eq)
			if len(evs) != 1 || evs[0].MLength != c.wantM || evs[0].RLength != c.length {
				t.Fatalf("target events %+v, want one with mlength %d", evs, c.wantM)
			}
			if c.op == nic.CmdGet {
				if !bytes.Equal(v.read(1, md, int(c.wantM)), v.read(0, me, int(c.wantM))) {
					t.Fatal("get data differs")
				}
			} else if !bytes.Equal(v.read(0, me+mem.Addr(c.remoteOffset), int(c.wantM)), v.read(1, md, int(c.wantM))) {
				t.Fatal("put data differs")
			}
			s0, s1 := v.nics[0].Stats(), v.nics[1].Stats()
			var pkts uint64 = s1.PacketsTx
			if c.op == nic.CmdGet {
				pkts = s0.PacketsTx
			}
			if pkts != c.wantPkts {
				t.Fatalf("data packets %d, want %d", pkts, c.wantPkts)
			}
			// The reads of all packets are in flight together (pipelined).
			reader := s1
			if c.op == nic.CmdGet {
				reader = s0
			}
			if reader.DMAFIFOMax < int(c.wantPkts) {
				t.Fatalf("DMA FIFO max %d, want ≥ %d (pipelined packet reads)", reader.DMAFIFOMax, c.wantPkts)
			}
			iev := drain(ieq)
			last := iev[len(iev)-1]
			if flagAt == 0 || (c.op == nic.CmdGet && flagAt < last.Time) {
				t.Fatalf("completion flag at %v, last initiator event %v at %v", flagAt, last.Type, last.Time)
			}
		})
	}
}

// TestPayloadFreeTiming: a payload-free memory gives the same event times
// as a functional one.
func TestPayloadFreeTiming(t *testing.T) {
	times := func(functional bool) []sim.Time {
		v := newEnv(t, 2, functional)
		tn := v.nics[0]
		eq := tn.NewEQ(0, 0)
		pt := tn.PTAlloc(eq, false)
		tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 1<<16, nil), Length: 1 << 16, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
		ieq := v.nics[1].NewEQ(0, 0)
		md := &nic.MD{Start: v.alloc(1, 1<<16, nil), Length: 1 << 16, EQ: ieq}
		v.host(1, func(p *sim.Proc) {
			v.nics[1].Doorbell(p, putCmd(md, 40000, 0, pt, 0))
			v.nics[1].Doorbell(p, nic.Command{Op: nic.CmdGet, MD: md, Length: 30000, PT: pt})
		})
		v.run()
		var out []sim.Time
		for _, ev := range append(drain(eq), drain(ieq)...) {
			out = append(out, ev.Time)
		}
		return out
	}
	f, pf := times(true), times(false)
	if len(f) != 5 || !slices.Equal(f, pf) {
		t.Fatalf("functional %v, payload-free %v: want the same 5 event times", f, pf)
	}
}

// TestPutLatency bounds a one-packet put's latency from the components of
// the timing model: doorbell posted write (o + L), descriptor fetch
// (2L + o), CmdLatency, payload DMA read (2L + o), two wire hops and the
// switch, and the target's posted write (o + L) for the data, the event's
// right behind it on the same ordered path. (The bound fails on a NIC that
// issues the event only once the data is visible: one more o + L.)
func TestPutLatency(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			v := newEnv(t, 2, true, func(s *cluster.Spec) { s.NIC.InlineCmd = inline })
			tn := v.nics[0]
			eq := tn.NewEQ(0, 0)
			pt := tn.PTAlloc(eq, false)
			tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 64, nil), Length: 64, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
			md := &nic.MD{Start: v.alloc(1, 64, nil), Length: 64}
			v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, putCmd(md, 8, 0, pt, 0)) })
			v.run()
			evs := drain(eq)
			s := v.spec
			L, o := s.PCIe.Latency, s.PCIe.Overhead
			lo := (o + L) + (2*L + o) + s.NIC.CmdLatency + (2*L + o) + s.Switch.Latency + (o + L) + s.NIC.MatchCost
			if inline {
				lo -= 2*L + o
			}
			hi := lo + 100*sim.Nanosecond // bytes·G, wire serialisation, gaps
			if len(evs) != 1 || evs[0].Time < lo || evs[0].Time > hi {
				t.Fatalf("PUT event at %v, want in [%v, %v]", evs[0].Time, lo, hi)
			}
		})
	}
}

// scenario runs a mixed workload and returns every event time and the
// engine's event count.
func scenario(t *testing.T) ([]sim.Time, uint64) {
	v := newEnv(t, 3, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 1<<20, nil), Length: 1 << 20, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEOpGet | nic.MEManageLocal}, nic.Priority)
	var ieqs []*nic.EQ
	for i := 1; i <= 2; i++ {
		ieq := v.nics[i].NewEQ(0, 0)
		ieqs = append(ieqs, ieq)
		md := &nic.MD{Start: v.alloc(i, 1<<16, func(k int) byte { return byte(k + i) }), Length: 1 << 16, EQ: ieq}
		v.host(i, func(p *sim.Proc) {
			for k := range 20 {
				v.nics[i].Doorbell(p, putCmd(md, uint64(1000*k+i), 0, pt, 0))
				p.Sleep(sim.Time(50*i) * sim.Nanosecond)
			}
		})
	}
	v.run()
	var out []sim.Time
	for _, q := range append([]*nic.EQ{eq}, ieqs...) {
		for _, ev := range drain(q) {
			out = append(out, ev.Time)
		}
	}
	return out, v.e.Events()
}

// TestDeterminism: the same setup twice gives the same events and times.
func TestDeterminism(t *testing.T) {
	a, na := scenario(t)
	b, nb := scenario(t)
	if len(a) != 20*2+40*2 || !slices.Equal(a, b) || na != nb {
		t.Fatalf("runs differ: %d/%d events (%d/%d engine events)", len(a), len(b), na, nb)
	}
}

// BenchmarkPutStream streams 4 KiB puts from node 1 to node 0 and reports
// simulated packets per wall-clock second.
func BenchmarkPutStream(b *testing.B) {
	v := newEnv(b, 2, false)
	tn := v.nics[0]
	pt := tn.PTAlloc(nil, false)
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 4096, nil), Length: 4096, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	md := &nic.MD{Start: v.alloc(1, 4096, nil), Length: 4096}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		v.nics[1].Execute(nic.Command{Op: nic.CmdPut, MD: md, Length: 4096, PT: pt, Ack: nic.NoAckReq})
		if v.e.Pending() > 4096 {
			if err := v.e.RunUntil(v.e.Now() + sim.Microsecond); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := v.e.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(v.nics[0].Stats().PacketsRx)/b.Elapsed().Seconds(), "packets/s")
}

// LastIssue is when the initiator's NIC began the put (its doorbell seen,
// its command fetched, the command latency spent), LastLanded when the
// target's NIC had every byte of it in memory: between the two lie the
// payload's read and the wire, and the PUT event is posted after the
// landing (the event write), never before.
func TestLastIssueAndLanded(t *testing.T) {
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 4096, nil), Length: 4096, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	md := &nic.MD{Start: v.alloc(1, 4096, nil), Length: 4096}
	var rung sim.Time
	v.host(1, func(p *sim.Proc) {
		rung = p.Now()
		v.nics[1].Doorbell(p, putCmd(md, 4096, 0, pt, 0))
	})
	v.run()
	issue, landed := v.nics[1].LastIssue(), tn.LastLanded()
	s := v.spec
	if issue < rung+s.NIC.CmdLatency {
		t.Errorf("issue at %v, before the doorbell (%v) plus the command latency (%v)", issue, rung, s.NIC.CmdLatency)
	}
	if wire := s.Link.Bandwidth.TransferTime(4096); landed < issue+wire {
		t.Errorf("landed at %v, less than the 4 KiB's wire time %v after the issue at %v", landed, wire, issue)
	}
	evs := drain(eq)
	if len(evs) != 1 || evs[0].Time <= landed {
		t.Fatalf("events %v: want one PUT event after the landing at %v", types(evs), landed)
	}
	if v.nics[0].LastIssue() != 0 || v.nics[1].LastLanded() != 0 {
		t.Errorf("the target issued (%v) or the initiator landed (%v) something", v.nics[0].LastIssue(), v.nics[1].LastLanded())
	}
}

// TestCompletionSeesPayload: a target's PUT event and count are written
// behind the payload on one ordered path, not after it is visible, so a
// host that reads the buffer the moment it sees either must find every
// byte. The PCIe switch latency, which a write into host memory pays and
// the model's event write does not, makes the event's own write arrive
// first: only the ordering keeps it behind the payload.
func TestCompletionSeesPayload(t *testing.T) {
	for _, c := range []struct {
		name string
		n    uint64
		sw   sim.Duration
	}{
		{"64B", 64, 0},
		{"64B-switch", 64, 400 * sim.Nanosecond},
		{"3pkt-switch", 3*4096 + 5, 400 * sim.Nanosecond},
		{"64KiB-switch", 1 << 16, 400 * sim.Nanosecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 2, true, func(s *cluster.Spec) { s.PCIe.SwitchLatency = c.sw })
			tn := v.nics[0]
			eq := tn.NewEQ(0, 0)
			ct := tn.NewCT()
			pt := tn.PTAlloc(eq, false)
			dst := v.alloc(0, c.n, nil)
			tn.MEAppend(pt, nic.ME{Start: dst, Length: c.n, MatchID: nic.AnyID, CT: ct,
				Options: nic.MEOpPut | nic.MEEventCTComm}, nic.Priority)
			want := func(k int) byte { return byte(k*7 + 1) }
			md := &nic.MD{Start: v.alloc(1, c.n, want), Length: c.n}
			v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, putCmd(md, c.n, 0, pt, 0)) })
			check := func(what string) {
				got := v.read(0, dst, int(c.n))
				for k := range got {
					if got[k] != want(k) {
						t.Fatalf("%s visible at %v with byte %d of the payload not: %d, want %d", what, v.e.Now(), k, got[k], want(k))
					}
				}
			}
			var evAt, ctAt sim.Time
			v.host(0, func(p *sim.Proc) { eq.Wait(p); evAt = v.e.Now(); check("PUT event") })
			v.host(0, func(p *sim.Proc) { ct.Wait(p, 1); ctAt = v.e.Now(); check("count") })
			v.run()
			if evAt == 0 || ctAt == 0 {
				t.Fatalf("event at %v, count at %v: want both", evAt, ctAt)
			}
			if l := tn.LastLanded(); evAt < l || ctAt < l {
				t.Fatalf("event at %v, count at %v before the payload landed at %v", evAt, ctAt, l)
			}
		})
	}
}

// TestFailureEventFollowsEarlierPayload: a failure event (PT_DISABLED) is a
// posted write like any other, so it does not pass the payload writes the
// NIC issued before it (PCI Express ordering): a host that sees it finds
// the earlier put's every byte. The earlier put lands in host memory
// behind a slow PCIe switch, which the event's own write does not cross.
func TestFailureEventFollowsEarlierPayload(t *testing.T) {
	const n = 1 << 16
	v := newEnv(t, 2, true, func(s *cluster.Spec) { s.PCIe.SwitchLatency = 400 * sim.Nanosecond })
	tn := v.nics[0]
	pt := tn.PTAlloc(nil, false)
	feq := tn.NewEQ(0, 0)
	fpt := tn.PTAlloc(feq, true) // flow control, no ME: disabled by the second put
	dst := v.alloc(0, n, nil)
	tn.MEAppend(pt, nic.ME{Start: dst, Length: n, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	want := func(k int) byte { return byte(k*5 + 3) }
	md := &nic.MD{Start: v.alloc(1, n, want), Length: n}
	v.host(1, func(p *sim.Proc) {
		v.nics[1].Doorbell(p, putCmd(md, n, 0, pt, 0))
		v.nics[1].Doorbell(p, putCmd(md, 8, 0, fpt, 0))
	})
	var at sim.Time
	v.host(0, func(p *sim.Proc) {
		at = waitSeesBytes(t, v, p, feq, nic.EventPTDisabled, 0, dst, n, want)
	})
	v.run()
	if at == 0 {
		t.Fatal("no PT_DISABLED event")
	}
}

// waitSeesBytes waits on eq for an event of type typ and checks that n
// bytes at a on node i then hold want: the event did not pass the data
// the NIC wrote before it. It returns when the event was seen.
func waitSeesBytes(t *testing.T, v *env, p *sim.Proc, eq *nic.EQ, typ nic.EventType, i int, a mem.Addr, n int, want func(int) byte) sim.Time {
	t.Helper()
	ev := eq.Wait(p)
	at := v.e.Now()
	if ev.Type != typ {
		t.Errorf("event %v, want %v", ev.Type, typ)
	}
	got := v.read(i, a, n)
	for k := range got {
		if got[k] != want(k) {
			t.Fatalf("%v visible at %v with byte %d of the earlier data not: %d, want %d", typ, at, k, got[k], want(k))
		}
	}
	return at
}

// TestAckEventFollowsEarlierReply: an initiator's ACK event is a posted
// write like the reply data the NIC wrote before it, so it does not pass
// them (PCI Express ordering): a host that sees the ACK of a put issued
// right after a one-packet get finds the get's every byte. The target
// sends the reply before the ack, and the reply lands in host memory
// behind a slow PCIe switch (2 us), which the event's own write does not
// cross: unordered, the ACK would be visible first.
func TestAckEventFollowsEarlierReply(t *testing.T) {
	const n = 4096
	v, pt, want := slowReplyTarget(t, n, 3, 1)
	ieq := v.nics[1].NewEQ(0, 0)
	dst := v.alloc(1, n, nil)
	get := nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: dst, Length: n, Options: nic.MDEventSuccessDisable}, Length: n, PT: pt}
	put := putCmd(&nic.MD{Start: v.alloc(1, 8, nil), Length: 8, EQ: ieq, Options: nic.MDEventSendDisable}, 8, 0, pt, 0)
	put.RemoteOffset = n // (beside what the get reads)
	var at sim.Time
	v.host(1, func(p *sim.Proc) {
		v.nics[1].Doorbell(p, get)
		v.nics[1].Doorbell(p, put)
		at = waitSeesBytes(t, v, p, ieq, nic.EventAck, 1, dst, n, want)
	})
	v.run()
	if at == 0 {
		t.Fatal("no ACK event")
	}
}

// TestAckCountFollowsEarlierReply: a counting event's change is seen by a
// host (CTWait, an MMIO read of the NIC's counter, or the NIC's write-back
// to memory) no earlier than the posted writes the NIC issued before it,
// as a full event is (TestAckEventFollowsEarlierReply): a read completion
// does not pass an earlier posted write (PCI Express ordering), and the
// write-back is itself one. So a host that sees the count of a put's ACK
// (MDEventCTAck or a CT_ACK request) issued right after a one-packet get
// finds the get's every byte. The reply lands behind a slow PCIe switch (2
// us): a count that changed at once was seen first.
func TestAckCountFollowsEarlierReply(t *testing.T) {
	const n = 4096
	for _, c := range []struct {
		name   string
		ack    nic.AckType
		opts   nic.MDOptions
		mirror bool
	}{
		{"ct-ack", nic.AckReq, nic.MDEventCTAck, false},
		{"ct-ack-req", nic.CTAckReq, 0, false},
		{"ct-ack-mirrored", nic.CTAckReq, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, pt, want := slowReplyTarget(t, n, 5, 3)
			ct := v.nics[1].NewCT()
			var mirror mem.Addr
			if c.mirror {
				mirror = v.alloc(1, 16, nil)
				ct.Mirror(mirror)
			}
			dst := v.alloc(1, n, nil)
			get := nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: dst, Length: n, Options: nic.MDEventSuccessDisable}, Length: n, PT: pt}
			put := putCmd(&nic.MD{Start: v.alloc(1, 8, nil), Length: 8, CT: ct, Options: c.opts | nic.MDEventSuccessDisable}, 8, 0, pt, 0)
			put.RemoteOffset, put.Ack = n, c.ack
			var at sim.Time
			v.host(1, func(p *sim.Proc) {
				v.nics[1].Doorbell(p, get)
				v.nics[1].Doorbell(p, put)
				if c.mirror {
					p.WaitUntil(v.mems[1].Watch(mirror), "the CT's write-back", func() bool { return v.mems[1].Load64(mirror) >= 1 })
				} else {
					ct.Wait(p, 1)
				}
				at = v.e.Now()
				got := v.read(1, dst, n)
				for k := range got {
					if got[k] != want(k) {
						t.Fatalf("ACK count seen at %v with byte %d of the earlier get's data not: %d, want %d", at, k, got[k], want(k))
					}
				}
			})
			v.run()
			if at == 0 {
				t.Fatal("the ACK was never counted")
			}
		})
	}
}

// TestReplyCountWriteBackFollowsPayload: a mirrored counting event's
// write-back is a posted write issued with the REPLY it counts, right
// behind the reply's payload on the ordered path (as the REPLY event is),
// not after the payload has landed: the host sees the count with every
// byte in place, and no later than one write issue after the event. A
// count that waited for the payload's landing before its write was issued
// (two write latencies after the data left) came a whole posted-write
// latency after the event.
func TestReplyCountWriteBackFollowsPayload(t *testing.T) {
	const n = 4096
	v := newEnv(t, 2, true)
	tn := v.nics[0]
	pt := tn.PTAlloc(nil, false)
	want := func(k int) byte { return byte(k*7 + 2) }
	src := v.alloc(0, n, want)
	tn.MEAppend(pt, nic.ME{Start: src, Length: n, MatchID: nic.AnyID, Options: nic.MEOpGet}, nic.Priority)
	ct := v.nics[1].NewCT()
	mirror := v.alloc(1, 16, nil)
	ct.Mirror(mirror)
	eq := v.nics[1].NewEQ(0, 0)
	dst := v.alloc(1, n, nil)
	get := nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: dst, Length: n, CT: ct, EQ: eq, Options: nic.MDEventCTReply}, Length: n, PT: pt}
	var counted, event sim.Time
	v.host(1, func(p *sim.Proc) {
		v.nics[1].Doorbell(p, get)
		p.WaitUntil(v.mems[1].Watch(mirror), "the CT's write-back", func() bool { return v.mems[1].Load64(mirror) >= 1 })
		counted = v.e.Now()
		got := v.read(1, dst, n)
		for k := range got {
			if got[k] != want(k) {
				t.Fatalf("REPLY count seen at %v with byte %d of its data not: %d, want %d", counted, k, got[k], want(k))
			}
		}
	})
	v.host(1, func(p *sim.Proc) { event = eq.Wait(p).Time })
	v.run()
	if counted == 0 || event == 0 {
		t.Fatalf("count seen at %v, REPLY event at %v: want both", counted, event)
	}
	if lat := v.spec.PCIe.Latency; counted > event+lat/2 {
		t.Errorf("REPLY count's write-back visible at %v, the REPLY event at %v: want within half a posted write (%v) of it", counted, event, lat/2)
	}
}

// slowReplyTarget builds two functional nodes behind a slow (2 us) PCIe
// switch, node 0 exposing 2n bytes (byte k = k*mul + add) to puts and gets
// on a new portal table entry, so a reply's data lands well after the
// NIC issues it. It returns the environment, the entry and the byte rule.
func slowReplyTarget(t *testing.T, n uint64, mul, add int) (*env, int, func(int) byte) {
	t.Helper()
	v := newEnv(t, 2, true, func(s *cluster.Spec) { s.PCIe.SwitchLatency = 2 * sim.Microsecond })
	tn := v.nics[0]
	pt := tn.PTAlloc(nil, false)
	want := func(k int) byte { return byte(k*mul + add) }
	src := v.alloc(0, 2*n, want)
	tn.MEAppend(pt, nic.ME{Start: src, Length: 2 * n, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
	return v, pt, want
}
