package verbs_test

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

func checked() verbs.Spec {
	s := verbs.DefaultSpec()
	s.CheckVisibility = true
	return s
}

func hazardNamed(t *testing.T, d *verbs.Domain, agent, fix string) {
	t.Helper()
	for _, h := range d.Hazards() {
		if strings.Contains(h.Agent, agent) && strings.Contains(h.Fix, fix) && h.Addr != 0 {
			return
		}
	}
	t.Fatalf("no hazard by %q naming fix %q; got %v", agent, fix, d.Hazards())
}

// the GIO slides (1): the NIC writes GPU memory without probing the
// L2. A kernel that polls a flag through the L2 (device-scope acquire, no
// L2 maintenance) keeps hitting the stale line and hangs; with the page
// mapped L2-uncacheable it sees the NIC's write. That is an L2 the NIC's
// writes pass by (gpu.l2_memory_side = false, the AMD dGPUs'); behind a
// memory-side L2 (NVIDIA, preset gpurdma as it is) the NIC's write
// updates the line the kernel polls, so it sees the flag with no hazard
// (TestNICWriteUpdatesMemorySideL2).
func TestNICWriteBehindStaleL2Line(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		r := newRigWith(t, checked(), func(s *clusterSpec) { s.GPU.L2MemorySide = false })
		g := r.c.Nodes[0].GPU
		flag := r.c.Nodes[0].Mem.AllocData(mem.GPU, 64, "flag")
		if uncached {
			g.SetUncached(flag, 64)
		}
		// The target side writes the flag into node 0's GPU memory.
		writeFlagAt5us(t, r, flag)
		var seen bool
		r.kernel(t, func(wg *gpu.WG) {
			wg.Load64(flag) // the line is now in the L2
			for range 50 {
				wg.Acquire(gpu.Device)
				if wg.Load64(flag) == 1 {
					seen = true
					return
				}
				wg.Sleep(sim.Microsecond)
			}
		})
		if seen != uncached {
			t.Fatalf("uncached=%v: flag seen %v", uncached, seen)
		}
		if !uncached {
			hazardNamed(t, r.d, "gpu.wg[0]", "L2-uncacheable")
		} else if len(r.d.Hazards()) != 0 {
			t.Fatalf("fix on, hazards %v", r.d.Hazards())
		}
	}
}

// the GIO slides (2): the PPB keeps a line the NIC read; the GPU then
// rewrites the buffer. Without a flush the next RDMA write sends the old
// bytes; with the flush before the doorbell it sends the new ones.
func TestPPBStaleWithoutFlush(t *testing.T) {
	for _, flush := range []bool{false, true} {
		r := newRig(t, checked())
		r.c.Nodes[0].NIC.SetPPB(&nic.PPB{Lines: 64, FlushLatency: 200 * sim.Nanosecond})
		m := r.c.Nodes[0].Mem
		m.Store64(r.src, 111)
		r.kernel(t, func(wg *gpu.WG) {
			r.qp.Post(wg, r.write(0, 8))
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
			wg.Store64(r.src, 222)
			wg.Release(gpu.System) // the new value is in GPU memory
			w := r.write(0, 8)
			w.RemoteAddr += 8
			r.qp.Post(wg, w)
			if flush {
				r.qp.FlushPPB(wg)
			}
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
		})
		got := r.c.Nodes[1].Mem.Load64(r.dst + 8)
		if flush != (got == 222) {
			t.Fatalf("flush=%v: the NIC sent %d", flush, got)
		}
		if !flush {
			hazardNamed(t, r.d, "nic (PPB)", "flush the PPB")
		} else if len(r.d.Hazards()) != 0 {
			t.Fatalf("fix on, hazards %v", r.d.Hazards())
		}
	}
}

// A PPB flush is an ordering point of the block the NIC reads GPU memory
// through, not of the NIC: a read that reaches the PPB while a flush is
// in progress there waits for it, but a flush whose control write has not
// arrived yet holds nothing (the doorbell, the WQE fetch and the payload
// read go ahead), however long it will take.
func TestPPBFlushHoldsOnlyReadsThatMeetIt(t *testing.T) {
	const flush = 5 * sim.Microsecond
	run := func(withFlush bool, arriveAfter sim.Duration) sim.Duration {
		r := newRig(t, verbs.DefaultSpec())
		n := r.c.Nodes[0].NIC
		n.SetPPB(&nic.PPB{Lines: 64, FlushLatency: flush})
		var took sim.Duration
		r.kernel(t, func(wg *gpu.WG) {
			start := wg.Now()
			if withFlush {
				n.FlushPPBAt(start + arriveAfter)
			}
			r.qp.Post(wg, r.write(0, 8))
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
			took = wg.Now() - start
		})
		return took
	}
	none := run(false, 0)
	late := run(true, 100*sim.Microsecond) // arrives long after the message completed
	during := run(true, 0)                 // in progress when the NIC's reads arrive
	if late != none {
		t.Errorf("a flush arriving after the message changed its time: %v, without it %v", late, none)
	}
	if during < flush || during <= none {
		t.Errorf("a flush in progress when the reads arrive: message took %v, want beyond the flush's %v (and %v without it)", during, flush, none)
	}
}

// Behind a memory-side L2 (preset gpurdma's NVIDIA L2) the NIC's write
// into GPU memory passes through the L2 and updates the line a kernel
// keeps polling with device-scope acquires: the kernel sees the flag, each
// poll after the first an L2 hit, and the checker reports no hazard.
func TestNICWriteUpdatesMemorySideL2(t *testing.T) {
	r := newRig(t, checked())
	g := r.c.Nodes[0].GPU
	flag := r.c.Nodes[0].Mem.AllocData(mem.GPU, 64, "flag")
	writeFlagAt5us(t, r, flag)
	var seen bool
	var hit sim.Duration
	r.kernel(t, func(wg *gpu.WG) {
		wg.Load64(flag) // the line is now in the L2
		for range 50 {
			wg.Acquire(gpu.Device)
			t0 := wg.Now()
			v := wg.Load64(flag)
			hit = wg.Now() - t0
			if v == 1 {
				seen = true
				return
			}
			wg.Sleep(sim.Microsecond)
		}
	})
	gs := g.Spec()
	if !seen || hit != gs.Cycles(gs.L2Cycles) {
		t.Fatalf("flag seen %v, its load took %v: want seen, an L2 hit of %v", seen, hit, gs.Cycles(gs.L2Cycles))
	}
	if len(r.d.Hazards()) != 0 {
		t.Fatalf("hazards %v, want none", r.d.Hazards())
	}
}

// writeFlagAt5us has node 1's host, 5 us into the run, RDMA-write 1 from
// its host memory into the flag in node 0's memory (a host-posted write
// on r.tq).
func writeFlagAt5us(t *testing.T, r *rig, flag mem.Addr) {
	fmr := r.d.Node(0).RegMR(flag, 64)
	hsrc := r.c.Nodes[1].Mem.AllocData(mem.Host, 64, "one")
	r.c.Nodes[1].Mem.Store64(hsrc, 1)
	smr := r.d.Node(1).RegMR(hsrc, 64)
	r.c.Nodes[1].CPU.Spawn("writer", func(th *cpuThread) {
		th.Sleep(5 * sim.Microsecond)
		if err := r.tq.HostPost(th, costDefault(), verbs.Write(smr, hsrc, fmr, flag, 8)); err != nil {
			t.Error(err)
		}
		r.tq.HostRing(th)
	})
}

// The PPB flush's control write is a store of the work-group: it does not
// pass the stores before it, so it reaches the PPB only after they reach
// memory. Here a kernel on a 10 MHz GPU (the L2's cycles, which a store to
// an L2-uncacheable page pays on its way to memory, are 10 µs) stores a
// new word into a line and flushes the PPB at once; node 0's host then
// sends another word of that line on a second QP, whose payload read
// leaves the line in the PPB before the store has landed; the kernel's own
// write of the word after its doorbell must send the new value. A flush
// that reached the PPB at its issue (its way over the link only, under a
// microsecond) was over before that read, which left the stale line for
// the kernel's write (111 sent, a stale PPB hit).
func TestPPBFlushLeavesBehindEarlierStores(t *testing.T) {
	r := newRigWith(t, checked(), func(s *clusterSpec) {
		s.GPU.Freq = 10e6
		s.GPU.L2MemorySide = false
	})
	r.c.Nodes[0].NIC.SetPPB(&nic.PPB{Lines: 64, FlushLatency: 200 * sim.Nanosecond})
	r.c.Nodes[0].GPU.SetUncached(r.src, 64)
	r.c.Nodes[0].Mem.Store64(r.src, 111)
	hcq, err := r.d.Node(0).NewCQ(64, mem.Host)
	if err != nil {
		t.Fatal(err)
	}
	tcq, _ := r.d.Node(1).NewCQ(64, mem.Host)
	other, _, err := r.d.Connect(0, 1, verbs.Place{QP: mem.Host}, verbs.Place{QP: mem.Host}, hcq, tcq, 16)
	if err != nil {
		t.Fatal(err)
	}
	var landed, otherDone sim.Time
	r.kernel(t, func(wg *gpu.WG) {
		wg.Store64(r.src, 222)
		landed = wg.StoresAt()
		r.qp.FlushPPB(wg)
		r.c.Nodes[0].CPU.Spawn("other", func(th *cpuThread) {
			w := r.write(1, 8)
			w.RemoteAddr += 64
			if err := other.HostPost(th, costDefault(), w); err != nil {
				t.Error(err)
			}
			other.HostRing(th)
			if _, ok := hcq.HostWaitQP(th, costDefault(), other, 0); !ok {
				t.Error("the other write failed")
			}
			otherDone = th.Now()
		})
		if err := r.qp.Post(wg, r.write(0, 8)); err != nil {
			t.Error(err)
		}
		r.qp.Ring(wg)
		r.cq.WaitQP(wg, r.qp, 0)
	})
	if otherDone == 0 || otherDone >= landed {
		t.Fatalf("the other write completed at %v, want before the store landed at %v (the scenario needs it)", otherDone, landed)
	}
	if got := r.c.Nodes[1].Mem.Load64(r.dst); got != 222 {
		t.Fatalf("the NIC sent %d, want the stored 222", got)
	}
	if len(r.d.Hazards()) != 0 {
		t.Fatalf("hazards %v, want none", r.d.Hazards())
	}
}
