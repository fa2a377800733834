package verbs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A CQ poll is a loop of loads: from host memory every iteration is the
// GPU's L2 lookup plus a PCIe round trip of its link (the read takes the
// place of the GPU's memory access past the L2) through the PCIe switch,
// from GPU memory the lookup and the memory access, or behind a
// memory-side L2 (preset gpurdma's) an L2 hit after the first load. A
// large write keeps the poller looping; the loads it makes and the time
// it waits agree with one round trip (resp. one GPU access) per
// iteration, and the CQE is seen at most one iteration after it landed.
func TestCQPollCostsARoundTripPerLoad(t *testing.T) {
	for _, loc := range []string{"host", "gpu"} {
		t.Run(loc, func(t *testing.T) {
			spec := verbs.DefaultSpec()
			spec.CQLoc = loc
			r := newRig(t, spec)
			start, end := r.pollLargeWrite(t)
			per := r.pollLoadTime(loc)
			loads := r.cq.Loads
			if loads < 10 {
				t.Fatalf("%d loads for a 256 KiB write: the poller did not loop", loads)
			}
			got := (end - start) / sim.Duration(loads)
			if d := got - per; d < -per/20 || d > per/20 {
				t.Errorf("poll time per load %v, want one %s access %v (±5%%)", got, loc, per)
			}
		})
	}
}

// pollLargeWrite runs a kernel that posts and rings a 256 KiB write and
// polls the CQ for it, and returns when the poll started and ended.
func (r *rig) pollLargeWrite(t *testing.T) (start, end sim.Time) {
	r.kernel(t, func(wg *gpu.WG) {
		if err := r.qp.Post(wg, r.write(0, 256<<10)); err != nil {
			t.Error(err)
		}
		r.qp.Ring(wg)
		start = wg.Now()
		r.cq.Poll(wg)
		end = wg.Now()
	})
	return start, end
}

// pollLoadTime is one CQ poll load's time with the CQ at loc: the GPU's
// memory access ("gpu"), or ("host") the GPU's L2 lookup, then 2L + o +
// 64 B at the link's rate: the non-posted read, crossing the PCIe switch
// to the root complex and back.
func (r *rig) pollLoadTime(loc string) sim.Duration {
	gs := r.c.Nodes[0].GPU.Spec()
	if loc != "host" {
		if gs.L2MemorySide {
			return gs.Cycles(gs.L2Cycles) // every load after the first hits the L2
		}
		return gs.MissLatency()
	}
	ps := r.c.Nodes[0].GPULink.Spec()
	return gs.Cycles(gs.L2Cycles) + 2*ps.Latency + 2*ps.SwitchLatency + ps.Overhead + sim.FromPicoseconds(64*ps.Bandwidth.PerByte())
}

// Outstanding-WQE limits bound one QP's pipelined rate below the wire:
// with a window of one WQE in flight, small pipelined writes cost a
// round trip each, far below the link rate that an unbounded window
// reaches; widening the window raises the rate.
func TestInflightWindowBoundsPipelinedRate(t *testing.T) {
	rate := func(window int) float64 {
		spec := verbs.DefaultSpec()
		spec.WQEReuse, spec.Pipeline, spec.BatchDoorbell = true, true, true
		r := newRigWith(t, spec, func(s *clusterSpec) { s.NIC.VerbsQPInflight = window })
		const msgs, size = 256, 4096
		var start, end sim.Time
		r.kernel(t, func(wg *gpu.WG) {
			start = wg.Now()
			for k := range msgs {
				if err := r.qp.Post(wg, r.write(k%8, size)); err != nil {
					t.Error(err)
				}
			}
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
			end = wg.Now()
		})
		return float64(msgs*size) / (end - start).Seconds()
	}
	wire := float64(r0Link().Link.Bandwidth)
	one, four, open := rate(1), rate(4), rate(0)
	if !(one < four && four <= open*1.01) {
		t.Errorf("rate with window 1 / 4 / unbounded = %.3g / %.3g / %.3g B/s: want increasing", one, four, open)
	}
	if one > 0.5*wire {
		t.Errorf("window of one WQE: %.3g B/s, want well below the wire's %.3g B/s", one, wire)
	}
}

// The HCA's read tags bound the payload rate of peer-to-peer reads of GPU
// memory: with the preset's tags a pipelined single QP stays below the
// wire, with unbounded tags the same run reaches it; the bound is tags ×
// request size / round trip.
func TestReadTagsBoundPeerToPeerRate(t *testing.T) {
	rate := func(tags int) float64 {
		spec := verbs.DefaultSpec()
		spec.WQEReuse, spec.Pipeline = true, true
		r := newRigWith(t, spec, func(s *clusterSpec) { s.NIC.ReadTags = tags })
		const msgs, size = 24, 32 << 10
		var start, end sim.Time
		r.kernel(t, func(wg *gpu.WG) {
			start = wg.Now()
			for range msgs {
				if err := r.qp.Post(wg, r.write(0, size)); err != nil {
					t.Error(err)
				}
				r.qp.Ring(wg)
			}
			r.cq.WaitQP(wg, r.qp, 0)
			end = wg.Now()
		})
		return float64(msgs*size) / (end - start).Seconds()
	}
	hs := r0Link()
	wire := float64(hs.Link.Bandwidth) * float64(hs.Link.Payload) / float64(hs.Link.Payload+hs.Link.Header)
	rt := 2*hs.PCIe.Latency + hs.PCIe.Overhead + hs.PCIe.P2PReadLatency + sim.FromPicoseconds(float64(hs.PCIe.MaxReadReq)*hs.PCIe.Bandwidth.PerByte())
	bound := float64(hs.NIC.ReadTags) * float64(hs.PCIe.MaxReadReq) / rt.Seconds()
	tagged, open := rate(hs.NIC.ReadTags), rate(0)
	if tagged > bound*1.01 || tagged < 0.8*bound {
		t.Errorf("%d tags: %.3g B/s, want just under the bound %.3g B/s", hs.NIC.ReadTags, tagged, bound)
	}
	if open < 0.9*wire || tagged > 0.9*wire {
		t.Errorf("unbounded tags %.3g B/s (want near the wire %.3g), %d tags %.3g B/s (want below it)", open, wire, hs.NIC.ReadTags, tagged)
	}
}

// BlueFlame (nic.verbs_blueflame) carries a lone WQE in the doorbell's
// MMIO write: the HCA fetches nothing and the naive write completes
// sooner; without it every WQE is fetched by DMA.
func TestBlueFlameSkipsTheFetch(t *testing.T) {
	run := func(bf bool) (sim.Duration, uint64) {
		r := newRigWith(t, verbs.DefaultSpec(), func(s *clusterSpec) { s.NIC.VerbsBlueFlame = bf })
		var d sim.Duration
		r.kernel(t, func(wg *gpu.WG) {
			start := wg.Now()
			if err := r.qp.Post(wg, r.write(0, 8)); err != nil {
				t.Error(err)
			}
			r.qp.Ring(wg)
			r.cq.Poll(wg)
			d = wg.Now() - start
		})
		return d, r.c.Nodes[0].NIC.VerbsStats().Fetches
	}
	off, fOff := run(false)
	on, fOn := run(true)
	if fOff != 1 || fOn != 0 {
		t.Errorf("fetches: %d without BlueFlame (want 1), %d with (want 0)", fOff, fOn)
	}
	if on >= off {
		t.Errorf("naive 8 B write: %v with BlueFlame, %v without: want shorter", on, off)
	}
	// The WQE the HCA took from the doorbell is the one posted.
	r := newRigWith(t, verbs.DefaultSpec(), func(s *clusterSpec) { s.NIC.VerbsBlueFlame = true })
	copy(r.c.Nodes[0].Mem.Bytes(r.src, 8), "bluefl!!")
	r.kernel(t, func(wg *gpu.WG) {
		if err := r.qp.Post(wg, r.write(0, 8)); err != nil {
			t.Error(err)
		}
		r.qp.Ring(wg)
		r.cq.Poll(wg)
	})
	if got := string(r.c.Nodes[1].Mem.Bytes(r.dst, 8)); got != "bluefl!!" {
		t.Errorf("BlueFlame write delivered %q", got)
	}
}

// A work-group polling a CQ that will never receive a completion ends the
// run as a deadlock naming the CQ instead of polling forever: from GPU
// memory it waits on the slot's writes; from host memory every poll is a
// PCIe read, a busy poll that must not hide the deadlock (sim/poll.go).
func TestCQPollWithNothingPostedIsADeadlock(t *testing.T) {
	for _, loc := range []string{"host", "gpu"} {
		spec := verbs.DefaultSpec()
		spec.CQLoc = loc
		r := newRig(t, spec)
		g := r.c.Nodes[0].GPU
		op, _ := g.DispatchOp(gpu.Kernel{Name: "k", WGs: 1, WGSize: 32, Body: func(wg *gpu.WG) { r.cq.Poll(wg) }})
		g.Submit(op)
		err := r.c.Engine.RunUntil(100 * sim.Millisecond)
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) || r.c.Engine.Now() > sim.Millisecond || !strings.Contains(err.Error(), "CQE") {
			t.Errorf("CQ in %s memory: err = %v at %v, want a deadlock on the CQE at once", loc, err, r.c.Engine.Now())
		}
	}
}

// A GPU thread's WQE stores into a QP in host memory are posted writes
// the thread does not wait for: on a link a thousand times slower the WQE
// write still costs the eight field stores, and the wait moves to the
// system fence before the doorbell, which cannot complete before the
// stores are visible in host memory.
func TestHostQPStoresDoNotWaitForTheLink(t *testing.T) {
	run := func(slow bool) verbs.Stats {
		spec := verbs.DefaultSpec()
		spec.QPLoc = "host"
		r := newRigWith(t, spec, func(s *clusterSpec) {
			if slow {
				s.PCIe.Bandwidth /= 1000
			}
		})
		r.kernel(t, func(wg *gpu.WG) {
			if err := r.qp.Post(wg, r.write(0, 8)); err != nil {
				t.Error(err)
			}
			r.qp.Ring(wg)
		})
		return r.qp.Stats()
	}
	fast, slow := run(false), run(true)
	want := 8 * verbs.DefaultSpec().FieldStore
	for _, st := range []verbs.Stats{fast, slow} {
		if st.WQETime != want {
			t.Errorf("WQE write into host memory %v, want the 8 field stores' %v (the thread does not wait for the link)", st.WQETime, want)
		}
	}
	// Eight 8 B writes at a thousandth of the link's rate take about
	// 8 × 8 B / (14.4 GB/s / 1000) ≈ 4.4 µs more to become visible.
	if d := slow.DoorbellTime - fast.DoorbellTime; d < 3*sim.Microsecond {
		t.Errorf("fence on the slow link only %v longer: it must wait for the stores' visibility", d)
	}
}

// A poll of a CQ in GPU memory sees the CQE at the first load whose
// sample point (the L2 lookup and half the memory access, when the
// request reaches memory) is at or after the NIC's write landed, not at
// the first load that completes after it: a CQE landing while a load's
// data is on its way back is seen one iteration later. For writes of
// several sizes (the CQE lands at different points of an iteration) the
// poll ends on the load whose sample point is the first at or after the
// CQE's landing.
//
// Behind a memory-side L2 (gpu.l2_memory_side, preset gpurdma's NVIDIA
// L2) the first load of the slot misses and brings its line into the L2;
// every later load is an L2 hit that reads the line half-way through the
// lookup, and the NIC's CQE write updates that line, so the poll ends on
// the first hit sampling at or after the landing. Without it (the AMD
// rule: NIC writes pass the L2 by) every load goes to memory.
func TestGPUCQPollSeesTheCQEAtTheLoadsSamplePoint(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.CQLoc = "gpu"
	for _, memSide := range []bool{false, true} {
		for _, size := range []uint32{8, 1000, 3000, 5000, 9000, 17000, 33000, 65000} {
			r, landed := rigWatchingCQEWith(t, spec, func(s *clusterSpec) { s.GPU.L2MemorySide = memSide })
			start, end := postRingAndPoll(t, r, size, func(wg *gpu.WG) { r.cq.Poll(wg) })
			g := r.c.Nodes[0].GPU
			gs := g.Spec()
			first, per, sample := sim.Duration(0), gs.MissLatency(), g.LoadSample()
			if memSide {
				first, per = gs.MissLatency(), gs.Cycles(gs.L2Cycles)
				sample = per / 2
			}
			if *landed < start+first {
				t.Fatalf("%d B: the CQE landed at %v, before the poll's loop began at %v", size, *landed, start+first)
			}
			checkSampledLanding(t, "load", size, start+first, end, *landed, per, sample)
		}
	}
}

// The collaborative poll's round (one parallel load of the block's slots
// and the warp vote) reads the slots at its load's sample point too: the
// scan ends with the first round whose load read the slot at or after
// the CQE landed, each round a load and the vote long.
func TestCollaborativePollSeesTheCQEAtTheLoadsSamplePoint(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.CQLoc = "gpu"
	for _, memSide := range []bool{false, true} {
		for _, size := range []uint32{8, 1000, 3000, 5000, 9000, 17000} {
			r, landed := rigWatchingCQEWith(t, spec, func(s *clusterSpec) { s.GPU.L2MemorySide = memSide })
			start, end := postRingAndPoll(t, r, size, func(wg *gpu.WG) {
				if _, ok := r.qp.NewScanner(32).Wait(wg, 0); !ok {
					t.Error("error CQE")
				}
			})
			g := r.c.Nodes[0].GPU
			gs := g.Spec()
			vote := gs.Cycles(gs.ScalarCycles * 4)
			first, per, sample := sim.Duration(0), gs.MissLatency()+vote, g.LoadSample()
			if memSide {
				// The first round's load misses and brings the slots'
				// line in; the later rounds' loads hit (the test above).
				hit := gs.Cycles(gs.L2Cycles)
				first, per, sample = gs.MissLatency()+vote, hit+vote, hit/2
			}
			checkSampledLanding(t, "round", size, start+first, end, *landed, per, sample)
		}
	}
}

// rigWatchingCQE builds a rig and records, in the returned time, when the
// NIC's write first touched the CQ's first slot (-1 until it does).
func rigWatchingCQE(t *testing.T, spec verbs.Spec) (*rig, *sim.Time) {
	t.Helper()
	return rigWatchingCQEWith(t, spec, nil)
}

// rigWatchingCQEWith is rigWatchingCQE on preset gpurdma changed by hw.
func rigWatchingCQEWith(t *testing.T, spec verbs.Spec, hw func(*clusterSpec)) (*rig, *sim.Time) {
	t.Helper()
	r := newRigWith(t, spec, hw)
	slot, landed := r.cq.Base(), sim.Time(-1)
	r.c.Nodes[0].Mem.OnTouch(func(a mem.Addr, n int) {
		if landed < 0 && a <= slot && slot < a+mem.Addr(n) {
			landed = r.c.Engine.Now()
		}
	})
	return r, &landed
}

// checkSampledLanding checks that a poll from start to end, made of
// iterations per long whose load samples memory sample after the
// iteration begins, ended on the first iteration sampling at or after
// the CQE landed.
func checkSampledLanding(t *testing.T, iteration string, size uint32, start, end, landed, per, sample sim.Time) {
	t.Helper()
	if (end-start)%per != 0 {
		t.Errorf("%d B: the poll took %v, not a whole number of %v %ss", size, end-start, per, iteration)
	}
	if last := end - per + sample; !(landed <= last && last < landed+per) {
		t.Errorf("%d B: CQE landed %v after the poll began; it ended at %v on the %s that sampled at %v, want the first %s sampling at or after the landing",
			size, landed-start, end-start, iteration, last-start, iteration)
	}
}

// postRingAndPoll posts one write of size bytes from a kernel, rings the
// doorbell and runs poll; it returns when the poll began and ended.
func postRingAndPoll(t *testing.T, r *rig, size uint32, poll func(*gpu.WG)) (start, end sim.Time) {
	t.Helper()
	r.kernel(t, func(wg *gpu.WG) {
		if err := r.qp.Post(wg, r.write(0, size)); err != nil {
			t.Error(err)
		}
		r.qp.Ring(wg)
		start = wg.Now()
		poll(wg)
		end = wg.Now()
	})
	return start, end
}

// A CQ asked for n completions gets a ring of the next power of two above
// n slots, as the Mellanox providers' create_cq allocates it
// (align_queue_size(cqe + 1)), and its bytes are counted as such.
func TestCQRingIsTheProvidersPowerOfTwo(t *testing.T) {
	for _, tc := range []struct{ asked, ring int }{{1, 2}, {2, 4}, {3, 4}, {4, 8}, {1023, 1024}, {1024, 2048}, {30720, 32768}} {
		if got := verbs.CQRing(tc.asked); got != tc.ring {
			t.Errorf("CQRing(%d) = %d, want %d", tc.asked, got, tc.ring)
		}
	}
	r := newRig(t, verbs.DefaultSpec())
	n := r.d.Node(0)
	before := n.CQBytes()
	cq, err := n.NewCQ(1024, mem.GPU)
	if err != nil {
		t.Fatal(err)
	}
	if cq.Entries() != 2048 || n.CQBytes()-before != 128<<10 {
		t.Errorf("CQ for 1024 completions: %d slots, %d B, want 2048 slots, 128 KiB", cq.Entries(), n.CQBytes()-before)
	}
	if _, err := n.NewCQ(nic.MaxCQEntries, mem.GPU); err == nil {
		t.Errorf("a CQ for %d completions needs a ring above the most a CQ holds; want an error", nic.MaxCQEntries)
	}
}

// spans records a trace's spans on one track by name.
type spans struct {
	track string
	got   map[string][]sim.Duration
}

func (s *spans) Span(track, name string, start, end sim.Time) {
	if track == s.track {
		s.got[name] = append(s.got[name], end-start)
	}
}

// --trace shows a CQ poll as the loop of loads it is: one span per load
// on the polling work-group's track, as many as the poller made, each as
// long as one access to where the CQ lives (a PCIe round trip for a
// host-memory CQ, the GPU's memory access for a GPU-memory one, the
// iterations counted in closed form included), inside one span of the
// whole poll.
//
// On the AMD rule (gpu.l2_memory_side = false) a GPU-memory load goes to
// memory every time; behind preset gpurdma's memory-side L2 the first
// load misses and the others are L2 hits (TestTraceShowsL2HitsOfACQPoll).
func TestTraceShowsEveryCQPollLoad(t *testing.T) {
	for _, loc := range []string{"host", "gpu"} {
		t.Run(loc, func(t *testing.T) {
			spec := verbs.DefaultSpec()
			spec.CQLoc = loc
			r := newRigWith(t, spec, func(s *clusterSpec) { s.GPU.L2MemorySide = false })
			rec := &spans{track: "node[0].gpu.wg[0]", got: map[string][]sim.Duration{}}
			r.c.Engine.SetTracer(rec)
			start, end := r.pollLargeWrite(t)
			name, per := "CQ load: GPU memory", r.pollLoadTime(loc)
			if loc == "host" {
				name = "CQ load: host memory (PCIe read)"
			}
			loads := rec.got[name]
			if uint64(len(loads)) != r.cq.Loads || len(loads) < 10 {
				t.Fatalf("%d %q spans, the poller made %d loads (want them all, at least 10)", len(loads), name, r.cq.Loads)
			}
			for _, d := range loads {
				if diff := d - per; diff < -per/20 || diff > per/20 {
					t.Fatalf("a load span of %v, want one %s access %v (±5%%)", d, loc, per)
				}
			}
			if p := rec.got["CQ poll"]; len(p) != 1 || p[0] != end-start {
				t.Errorf("poll spans %v, want one of %v", p, end-start)
			}
		})
	}
}

// Behind a memory-side L2 (preset gpurdma) the trace shows a poll of a
// GPU-memory CQ as one load that misses (the L2 lookup and memory) and
// then L2 hits, one per iteration, the closed-form ones included.
func TestTraceShowsL2HitsOfACQPoll(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.CQLoc = "gpu"
	r := newRig(t, spec)
	rec := &spans{track: "node[0].gpu.wg[0]", got: map[string][]sim.Duration{}}
	r.c.Engine.SetTracer(rec)
	r.pollLargeWrite(t)
	gs := r.c.Nodes[0].GPU.Spec()
	loads := rec.got["CQ load: GPU memory"]
	if uint64(len(loads)) != r.cq.Loads || len(loads) < 10 {
		t.Fatalf("%d load spans, the poller made %d loads (want them all, at least 10)", len(loads), r.cq.Loads)
	}
	if loads[0] != gs.MissLatency() {
		t.Errorf("first load %v, want a miss %v", loads[0], gs.MissLatency())
	}
	for _, d := range loads[1:] {
		if d != gs.Cycles(gs.L2Cycles) {
			t.Fatalf("a later load %v, want an L2 hit %v", d, gs.Cycles(gs.L2Cycles))
		}
	}
}
