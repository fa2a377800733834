package nic_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// sink sets up node 0 to receive puts on a PT whose events (HdrData =
// op id) go to the returned EQ.
func (v *env) sink() (pt int, eq *nic.EQ) {
	tn := v.nics[0]
	eq = tn.NewEQ(0, 0)
	pt = tn.PTAlloc(eq, false)
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, 64, nil), Length: 64, MatchID: nic.AnyID, IgnoreBits: ^uint64(0), Options: nic.MEOpPut}, nic.Priority)
	return pt, eq
}

func hdrs(evs []nic.Event) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.HdrData)
	}
	return out
}

// TestTriggeredThresholds: a triggered put fires when its CT reaches the
// threshold, whether it was posted before or after the CT got there; ops
// on one CT fire in non-decreasing threshold order, ties in post order.
func TestTriggeredThresholds(t *testing.T) {
	cases := []struct {
		name       string
		thresholds []uint64 // op i has HdrData i
		incBefore  uint64   // CT increments (one by one) before posting
		incAfter   uint64   // after posting
		want       []uint64 // op ids in target arrival order
	}{
		{"posted before threshold", []uint64{2}, 0, 2, []uint64{0}},
		{"posted after threshold", []uint64{2}, 3, 0, []uint64{0}},
		{"not reached", []uint64{3}, 1, 1, nil},
		{"order by threshold then post", []uint64{3, 1, 2, 1}, 0, 3, []uint64{1, 3, 2, 0}},
		{"mixed", []uint64{1, 5, 2}, 2, 3, []uint64{0, 2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 2, true)
			pt, eq := v.sink()
			in := v.nics[1]
			ct := in.NewCT()
			md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
			var lastInc sim.Time
			inc := func(p *sim.Proc, k uint64) {
				for range k {
					in.Doorbell(p, nic.Command{Op: nic.CmdCTInc, CT: ct, CTValue: 1})
					before := ct.Success()
					p.WaitUntil(ct.Signal(), "inc", func() bool { return ct.Success() > before })
					lastInc = p.Now()
				}
			}
			v.host(1, func(p *sim.Proc) {
				inc(p, c.incBefore)
				for i, th := range c.thresholds {
					cmd := putCmd(md, 8, 0, pt, 0)
					cmd.HdrData = uint64(i)
					in.PostTriggered(p, cmd, ct, th)
				}
				p.Sleep(5 * sim.Microsecond)
				inc(p, c.incAfter)
			})
			v.run()
			evs := drain(eq)
			if got := hdrs(evs); !slices.Equal(got, c.want) {
				t.Fatalf("fired %v, want %v", got, c.want)
			}
			if c.incAfter > 0 && len(evs) > 0 {
				// The op that needed the later increments fired after them.
				if lastEv := evs[len(evs)-1]; lastEv.Time < lastInc {
					t.Fatalf("last op landed at %v, before the last increment at %v", lastEv.Time, lastInc)
				}
			}
			if want := len(c.thresholds) - len(c.want); ct.Armed() != want {
				t.Fatalf("armed %d, want %d", ct.Armed(), want)
			}
		})
	}
}

// TestTriggeredChain: a receive CT on node 1 triggers a put onward to node
// 2 (collective offload): the data arrives at node 2 without host action.
func TestTriggeredChain(t *testing.T) {
	v := newEnv(t, 3, true)
	n1 := v.nics[1]
	ct := n1.NewCT()
	pt1 := n1.PTAlloc(nil, false)
	buf1 := v.alloc(1, 16, nil)
	n1.MEAppend(pt1, nic.ME{Start: buf1, Length: 16, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEEventCTComm, CT: ct}, nic.Priority)
	n2 := v.nics[2]
	ct2 := n2.NewCT()
	pt2 := n2.PTAlloc(nil, false)
	buf2 := v.alloc(2, 16, nil)
	n2.MEAppend(pt2, nic.ME{Start: buf2, Length: 16, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEEventCTComm, CT: ct2}, nic.Priority)
	n1.Arm(nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: buf1, Length: 16}, Length: 16, Target: 2, PT: pt2}, ct, 1)
	src := v.alloc(0, 16, func(k int) byte { return byte(100 + k) })
	v.host(0, func(p *sim.Proc) {
		v.nics[0].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: 16}, Length: 16, Target: 1, PT: pt1})
	})
	v.run()
	if ct2.Success() != 1 || v.read(2, buf2, 1)[0] != 100 || v.nics[1].Stats().TriggeredFired != 1 {
		t.Fatalf("chain: ct2 %d, data %d, fired %d", ct2.Success(), v.read(2, buf2, 1)[0], v.nics[1].Stats().TriggeredFired)
	}
}

// gpuWrites spawns wgs work-group processes on node 1 that each write tag
// to the trigger address, starting at start, and returns when the last
// write was issued (set after the run).
func (v *env) gpuWrites(start sim.Time, wgs int, tag func(wg int) uint64, last *sim.Time) {
	for wg := range wgs {
		v.e.SpawnAt(start+sim.Time(wg)*10*sim.Nanosecond, "node[1].gpu.wg", func(p *sim.Proc) {
			v.nics[1].TriggerWrite(p, tag(wg))
			*last = max(*last, p.Now())
		})
	}
}

// TestGPUTNOrders: GPU-TN triggers before and after the host registration
// (relaxed synchronisation), with a kernel-granularity threshold of one
// write per work-group. The op fires exactly once, not before the last
// write and not before the registration, and sets the completion flag.
func TestGPUTNOrders(t *testing.T) {
	const wgs = 8
	cases := []struct {
		name     string
		gpuAt    sim.Time
		regAt    sim.Time
		writes   int // writes performed (< wgs: must not fire)
		wantFire bool
	}{
		{"triggers before registration", 0, 20 * sim.Microsecond, wgs, true},
		{"registration before triggers", 20 * sim.Microsecond, 0, wgs, true},
		{"interleaved", 0, 50 * sim.Nanosecond, wgs, true},
		{"one write short", 0, 20 * sim.Microsecond, wgs - 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 2, true)
			pt, eq := v.sink()
			in := v.nics[1]
			flag := v.mems[1].AllocData(mem.GPU, 8, "flag")
			var lastWrite, regDone, flagSeen sim.Time
			v.gpuWrites(c.gpuAt, c.writes, func(int) uint64 { return 77 }, &lastWrite)
			v.e.SpawnAt(c.regAt, "node[1].host", func(p *sim.Proc) {
				in.RegisterTrigger(p, 77, putCmd(&nic.MD{Start: v.alloc(1, 8, nil), Length: 8}, 8, 0, pt, 0), wgs, flag)
				regDone = p.Now()
			})
			poll := v.e.Spawn("node[1].gpu.poll", func(p *sim.Proc) {
				p.WaitUntil(v.mems[1].Watch(flag), "flag", func() bool { return v.mems[1].Load64(flag) == 1 })
				flagSeen = p.Now()
			})
			if !c.wantFire {
				poll.SetDaemon()
			}
			v.run()
			evs := drain(eq)
			if !c.wantFire {
				if len(evs) != 0 || in.TriggerEntries() != 1 {
					t.Fatalf("fired with %d/%d writes (events %d, entries %d)", c.writes, wgs, len(evs), in.TriggerEntries())
				}
				if cnt, _ := in.TriggerCount(77); cnt != uint64(c.writes) {
					t.Fatalf("entry counter %d, want %d", cnt, c.writes)
				}
				return
			}
			if len(evs) != 1 || in.Stats().TrigFires != 1 || in.TriggerEntries() != 0 {
				t.Fatalf("events %d, fires %d, live entries %d; want 1 1 0", len(evs), in.Stats().TrigFires, in.TriggerEntries())
			}
			if evs[0].Time < lastWrite || evs[0].Time < regDone {
				t.Fatalf("put landed at %v before last write %v or registration %v", evs[0].Time, lastWrite, regDone)
			}
			if flagSeen == 0 || flagSeen < regDone {
				t.Fatalf("completion flag seen at %v", flagSeen)
			}
		})
	}
}

// TestGPUTNEntryLimit: with 16 entries all live as triggers awaiting
// registration, the 17th tag stalls the FIFO (and, with a small FIFO, the
// writers); registering one tag fires and retires its entry, and the FIFO
// moves again until every op has fired.
func TestGPUTNEntryLimit(t *testing.T) {
	for _, lookup := range []string{"assoc", "hash", "memlist"} {
		t.Run(lookup, func(t *testing.T) {
			v := newEnv(t, 2, true, func(s *cluster.Spec) { s.NIC.TrigFIFODepth = 4; s.NIC.TrigLookup = lookup })
			pt, eq := v.sink()
			in := v.nics[1]
			const tags = 24
			var lastWrite sim.Time
			v.gpuWrites(0, tags, func(wg int) uint64 { return uint64(1000 + wg) }, &lastWrite)
			md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
			var stalledEntries int
			var stalls uint64
			v.e.SpawnAt(20*sim.Microsecond, "node[1].host", func(p *sim.Proc) {
				stalledEntries, stalls = in.TriggerEntries(), in.Stats().TrigStalls
				for k := range tags {
					cmd := putCmd(md, 8, 0, pt, 0)
					cmd.HdrData = uint64(k)
					in.RegisterTrigger(p, uint64(1000+k), cmd, 1, 0)
				}
			})
			v.run()
			s := in.Stats()
			if lookup == "memlist" {
				if stalls != 0 || stalledEntries != tags {
					t.Fatalf("memlist: stalls %d, entries %d; want 0, %d", stalls, stalledEntries, tags)
				}
			} else {
				if stalledEntries != 16 || stalls == 0 {
					t.Fatalf("before registration: entries %d, stalls %d; want 16 and a stall", stalledEntries, stalls)
				}
				if lastWrite < 20*sim.Microsecond {
					t.Fatalf("writers finished at %v, before the FIFO could drain: no back-pressure", lastWrite)
				}
			}
			if s.TrigFIFOMax > 4 || s.TrigEntriesMax > tags || (lookup != "memlist" && s.TrigEntriesMax != 16) {
				t.Fatalf("fifo max %d (≤ 4), entries max %d", s.TrigFIFOMax, s.TrigEntriesMax)
			}
			if got := len(drain(eq)); got != tags || s.TrigFires != tags || in.TriggerEntries() != 0 {
				t.Fatalf("fired %d/%d (stat %d), live %d", got, tags, s.TrigFires, in.TriggerEntries())
			}
		})
	}
}

// TestGPUTNTagReuse: registering a tag whose live entry already has an op
// is counted as a warning.
func TestGPUTNTagReuse(t *testing.T) {
	v := newEnv(t, 2, true)
	pt, _ := v.sink()
	in := v.nics[1]
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	v.host(1, func(p *sim.Proc) {
		in.RegisterTrigger(p, 5, putCmd(md, 8, 0, pt, 0), 2, 0)
		in.RegisterTrigger(p, 5, putCmd(md, 8, 0, pt, 0), 2, 0)
	})
	v.run()
	if w := in.Stats().TagReuseWarnings; w != 1 {
		t.Fatalf("tag reuse warnings = %d, want 1", w)
	}
}

// TestDeferred: a GDS-style deferred command runs only when activated.
func TestDeferred(t *testing.T) {
	v := newEnv(t, 2, true)
	pt, eq := v.sink()
	in := v.nics[1]
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	var id nic.DeferredID
	v.host(1, func(p *sim.Proc) { id = in.PostDeferred(p, putCmd(md, 8, 0, pt, 0)) })
	v.e.SpawnAt(10*sim.Microsecond, "node[1].gpu.cp", func(p *sim.Proc) { in.ActivateDoorbell(p, id) })
	v.run()
	evs := drain(eq)
	if len(evs) != 1 || evs[0].Time < 10*sim.Microsecond {
		t.Fatalf("events %+v, want one after 10us", evs)
	}
}

// TestDeferredBlock: a block of deferred commands activates like single
// ones, each id once and in any order, with ids continuing after single
// posts; an id activated twice or never posted panics.
func TestDeferredBlock(t *testing.T) {
	v := newEnv(t, 2, true)
	pt, eq := v.sink()
	in := v.nics[1]
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	put := func(i int) nic.Command { c := putCmd(md, 8, 0, pt, 0); c.HdrData = uint64(10 + i); return c }
	var single, first nic.DeferredID
	v.host(1, func(p *sim.Proc) {
		single = in.PostDeferred(p, put(-10))
		first = in.PostDeferredBlock(p, 3, put)
	})
	order := []int{2, 0, 1}
	v.e.SpawnAt(10*sim.Microsecond, "node[1].gpu.cp", func(p *sim.Proc) {
		for _, i := range order {
			in.ActivateDoorbell(p, first+nic.DeferredID(i))
			p.Sleep(2 * sim.Microsecond)
		}
	})
	v.run()
	if first != single+1 {
		t.Fatalf("block starts at id %d, want %d (after the single post)", first, single+1)
	}
	if got := hdrs(drain(eq)); !slices.Equal(got, []uint64{12, 10, 11}) {
		t.Fatalf("arrivals %v, want [12 10 11] (activation order)", got)
	}
	for _, id := range []nic.DeferredID{first, first + 3} {
		v.e.Spawn("cp", func(p *sim.Proc) { in.ActivateDoorbell(p, id) })
		if err := v.e.Run(); err == nil || !strings.Contains(err.Error(), "no such deferred command") {
			t.Errorf("ActivateDoorbell(%d): run error %v, want no such deferred command", id, err)
		}
	}
}

// gatedRun registers tags 0..19 on node 1 in order (its host, at time 0)
// and starts a work-group process per tag at 20 µs that writes the tag
// to the trigger address, tag 16 first. With gate, each process first
// waits until the block's registration word covers its tag (strict
// synchronization beyond the first 16 tags). It returns node 1's NIC, the
// number of ops that reached node 0 and the word's final value.
func gatedRun(t *testing.T, gate bool) (*nic.NIC, int, uint64) {
	v := newEnv(t, 2, true)
	v.unchecked = !gate // the stalled FIFO is left full on purpose
	pt, eq := v.sink()
	in := v.nics[1]
	md := &nic.MD{Start: v.alloc(1, 8, nil), Length: 8}
	word := v.alloc(1, 8, nil)
	const tags = 20
	blk := nic.NewCommandBlock(func(i int) nic.Command {
		c := putCmd(md, 8, 0, pt, 0)
		c.HdrData = uint64(i)
		return c
	})
	blk.NotifyRegistered(word)
	v.host(1, func(p *sim.Proc) {
		for i := range tags {
			in.RegisterTriggerOf(p, uint64(i), blk, i, 1)
		}
	})
	order := []int{16}
	for i := range tags {
		if i != 16 {
			order = append(order, i)
		}
	}
	for k, tag := range order {
		v.e.SpawnAt(20*sim.Microsecond+sim.Time(k)*10*sim.Nanosecond, "node[1].gpu.wg", func(p *sim.Proc) {
			m := v.mems[1]
			for gate && tag >= 16 && m.Load64(word) < uint64(tag+1) {
				p.Wait(m.Watch(word), "registration word")
			}
			in.TriggerWrite(p, uint64(tag))
		})
	}
	v.run()
	return in, len(drain(eq)), v.mems[1].Load64(word)
}

// TestGPUTNEarlyTriggerStallsTheFIFO: the hardware's head-of-line stall.
// With the 16 entries held by registered ops, a trigger for a tag not yet
// registered (relaxed synchronization) stalls at the FIFO head: the
// triggers of the registered ops queue behind it, so no entry ever frees
// and its own registration waits forever — nothing fires. A kernel that
// triggers a tag beyond the first 16 only once the NIC's registration word
// (CommandBlock.NotifyRegistered) covers it never stalls, and every op
// fires.
func TestGPUTNEarlyTriggerStallsTheFIFO(t *testing.T) {
	in, fired, _ := gatedRun(t, false)
	if fired != 0 || in.Stats().TrigStalls == 0 || in.TriggerEntries() != 16 {
		t.Fatalf("ungated: %d ops fired, %d stalls, %d live entries; want 0, a stall, 16", fired, in.Stats().TrigStalls, in.TriggerEntries())
	}
	in, fired, word := gatedRun(t, true)
	if fired != 20 || in.Stats().TrigStalls != 0 || in.TriggerEntries() != 0 || word != 20 {
		t.Fatalf("gated: %d ops fired, %d stalls, %d live entries, word %d; want 20, 0, 0, 20", fired, in.Stats().TrigStalls, in.TriggerEntries(), word)
	}
}

// TestTriggeredForwardSendsDeliveredBytes: a triggered put fired by a
// count of what the NIC delivered (a target's PUT, an initiator's REPLY)
// forwards the delivered buffer, so its DMA reads must see every byte the
// NIC wrote there before the count: node 1 receives from node 0 (a put
// into its ME, or its own get), its count fires a put of that buffer to
// node 2, and node 2 must hold node 0's bytes. Behind a slow PCIe switch
// the delivery's writes land microseconds after they are issued.
func TestTriggeredForwardSendsDeliveredBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		n    uint64
		sw   sim.Time
		get  bool
	}{
		{"put-4KiB", 4096, 0, false},
		{"put-4KiB-switch", 4096, 2 * sim.Microsecond, false},
		{"put-64KiB-switch", 1 << 16, 2 * sim.Microsecond, false},
		{"put-4KiB-slowswitch", 4096, 20 * sim.Microsecond, false},
		{"get-4KiB-slowswitch", 4096, 20 * sim.Microsecond, true},
		{"get-4KiB", 4096, 0, true},
		{"get-4KiB-switch", 4096, 2 * sim.Microsecond, true},
		{"get-64KiB-switch", 1 << 16, 2 * sim.Microsecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, 3, true, func(s *cluster.Spec) { s.PCIe.SwitchLatency = c.sw })
			want := func(k int) byte { return byte(k*11 + 5) }
			src := v.alloc(0, c.n, want)
			n1, n2 := v.nics[1], v.nics[2]
			ct := n1.NewCT()
			buf1 := v.alloc(1, c.n, nil)
			pt2 := n2.PTAlloc(nil, false)
			buf2 := v.alloc(2, c.n, nil)
			ct2 := n2.NewCT()
			n2.MEAppend(pt2, nic.ME{Start: buf2, Length: c.n, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEEventCTComm, CT: ct2}, nic.Priority)
			n1.Arm(nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: buf1, Length: c.n}, Length: c.n, Target: 2, PT: pt2}, ct, 1)
			if c.get {
				pt0 := v.nics[0].PTAlloc(nil, false)
				v.nics[0].MEAppend(pt0, nic.ME{Start: src, Length: c.n, MatchID: nic.AnyID, Options: nic.MEOpGet}, nic.Priority)
				get := nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: buf1, Length: c.n, CT: ct, Options: nic.MDEventCTReply | nic.MDEventSuccessDisable},
					Length: c.n, Target: 0, PT: pt0}
				v.host(1, func(p *sim.Proc) { n1.Doorbell(p, get) })
			} else {
				pt1 := n1.PTAlloc(nil, false)
				n1.MEAppend(pt1, nic.ME{Start: buf1, Length: c.n, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEEventCTComm, CT: ct}, nic.Priority)
				v.host(0, func(p *sim.Proc) {
					v.nics[0].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: c.n}, Length: c.n, Target: 1, PT: pt1})
				})
			}
			v.run()
			if ct2.Success() != 1 {
				t.Fatalf("node 2 counted %d puts, want 1", ct2.Success())
			}
			got := v.read(2, buf2, int(c.n))
			for k := range got {
				if got[k] != want(k) {
					t.Fatalf("node 2's byte %d is %d, want %d: the triggered put read node 1's buffer before the delivery landed", k, got[k], want(k))
				}
			}
		})
	}
}
