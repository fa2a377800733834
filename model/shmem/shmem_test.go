package shmem_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/shmem/shmemtest"
	"github.com/gpunetsim/gpunetsim/sim"
)

func hw(mode string) cluster.Spec {
	s := cluster.CompNet()
	s.GPU.Mode = mode
	return s
}

// A 4-entry ring driven by 40 non-blocking puts fills up (the producer
// refreshes its stale read index and waits) and wraps around ten times;
// every put lands.
func TestRingFullAndWrapAround(t *testing.T) {
	for _, kind := range []shmem.Kind{shmem.GHNDGPU, shmem.GHNHostQ, shmem.GHNAPU, shmem.CompNetCP} {
		sp := shmem.DefaultSpec()
		sp.QueueEntries = 4
		mode := "dgpu"
		if kind == shmem.GHNAPU {
			mode = "apu"
		}
		const puts = 40
		c, syms, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hw(mode), Spec: sp, Nodes: 2},
			[]uint64{8 * puts, 8 * puts}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					for i := range puts {
						src := s[0] + mem.Addr(8*i)
						x.WG().Mem().Store64(src, uint64(100*pe+i))
						if err := x.PutmemNBI(s[1]+mem.Addr(8*i), src, 8, 1-pe); err != nil {
							return err
						}
					}
					return x.Quiet()
				}}
			})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		for pe := range 2 {
			for i := range puts {
				if v := c.Nodes[pe].Mem.Load64(syms[pe][1] + mem.Addr(8*i)); v != uint64(100*(1-pe)+i) {
					t.Fatalf("%s: PE %d word %d = %d", kind, pe, i, v)
				}
			}
		}
	}
}

// The ring-full path is really taken: the device counts reservations
// that found the ring full.
func TestRingFullIsCounted(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.QueueEntries = 2
	_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.GHNDGPU, HW: hw("dgpu"), Spec: sp, Nodes: 2},
		[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
			return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
				for range 10 {
					if err := x.PutmemNBI(s[0], s[0], 8, 1-pe); err != nil {
						return err
					}
				}
				return x.Quiet()
			}}
		})
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Calls.RingFull == 0 {
		t.Fatalf("10 puts into a 2-entry ring never found it full: %+v", reps[0].Calls)
	}
}

// A ComP-Net service thread that skips the acquire marker before its
// polls keeps the status line in its private L1: it never sees the
// POSTED entry, and the work-group's put never completes. The service
// thread finds that it can never see a change (every poll hits a stale
// copy) and fails the run as a livelock, long before the scenario's time
// limit (which turns a regression into a failure, not a hang). With the
// marker, the same run finishes.
func TestConsumerWithoutAcquireReadsStaleData(t *testing.T) {
	for _, acquire := range []bool{true, false} {
		sp := shmem.DefaultSpec()
		sp.ConsumerAcquire = acquire
		_, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.CompNetCP, HW: hw("dgpu"), Spec: sp, Nodes: 2, Limit: 500 * sim.Microsecond},
			[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					x.WG().Sleep(5 * sim.Microsecond) // the CP polls the empty slot first
					return x.P(s[0], 1, 8, 1-pe)
				}}
			})
		switch {
		case acquire && err != nil:
			t.Errorf("with the acquire marker: %v", err)
		case !acquire && !errors.Is(err, sim.ErrLivelock):
			t.Errorf("without the acquire marker: err = %v, want a livelock (stale CP L1)", err)
		}
	}
}

// The cooperative-launch rule: a kernel whose work-groups cannot all be
// resident is an error naming the rule, and a work-group without a queue
// cannot create a context.
func TestCooperativeLaunchRule(t *testing.T) {
	_, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.CompNetCP, HW: hw("dgpu"), Spec: shmem.DefaultSpec(), Nodes: 2},
		nil, func(pe int, s []mem.Addr) shmemtest.Kernel {
			return shmemtest.Kernel{WGs: 12*160 + 1, Body: func(int, *shmem.Ctx) error { return nil }}
		})
	if err == nil || !strings.Contains(err.Error(), "cooperative launch") {
		t.Fatalf("oversized cooperative kernel: %v", err)
	}
}

// Every service thread is reported with its energy split, and a CP thread
// alive as long as a host thread costs less static energy: each pays its
// core type's static power from the power model.
func TestReportEnergy(t *testing.T) {
	run := func(kind shmem.Kind) shmem.Report {
		_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hw("dgpu"), Spec: shmem.DefaultSpec(), Nodes: 2},
			[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error { return x.P(s[0], 1, 8, 1-pe) }}
			})
		if err != nil {
			t.Fatal(err)
		}
		return reps[0]
	}
	host, cp := run(shmem.GHNDGPU), run(shmem.CompNetCP)
	for _, r := range []shmem.Report{host, cp} {
		if len(r.Threads) != 1 || r.Threads[0].Alive <= 0 || r.Energy.Static <= 0 || r.Energy.Dynamic <= 0 || r.Polls() == 0 {
			t.Fatalf("%s report %+v", r.Kind, r)
		}
	}
	hs := host.Energy.Static / host.Threads[0].Alive.Seconds()
	cs := cp.Energy.Static / cp.Threads[0].Alive.Seconds()
	e := shmem.DefaultEnergy()
	if hs < 0.995*e.Host.Static || hs > 1.005*e.Host.Static || cs < 0.995*e.CP.Static || cs > 1.005*e.CP.Static || cs >= hs {
		t.Fatalf("static power host %v W, CP %v W; want %v and %v", hs, cs, e.Host.Static, e.CP.Static)
	}
	if host.Threads[0].Core != "host" || cp.Threads[0].Core != "cp" || host.Threads[0].Counts.PCIe == 0 {
		t.Fatalf("threads %+v / %+v", host.Threads[0], cp.Threads[0])
	}
}

// Two helper threads time-sliced on one host core share that core's
// static power; on two cores each pays for its own (the dissertation charges
// the core type running the thread, and a shared core runs both).
func TestSharedCoreStaticEnergy(t *testing.T) {
	run := func(cores int) shmem.Report {
		spec := shmem.DefaultSpec()
		spec.Threads, spec.HostCores = 2, cores
		_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.GHNDGPU, HW: hw("dgpu"), Spec: spec, Nodes: 2},
			[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error { return x.P(s[0], 1, 8, 1-pe) }}
			})
		if err != nil {
			t.Fatal(err)
		}
		return reps[0]
	}
	static := func(r shmem.Report) (watts float64, cores map[int]bool) {
		cores = map[int]bool{}
		var longest float64
		for _, th := range r.Threads {
			cores[th.CoreID] = true
			longest = max(longest, th.Alive.Seconds())
		}
		return r.Energy.Static / longest, cores
	}
	one, c1 := static(run(1))
	two, c2 := static(run(2))
	if len(c1) != 1 || len(c2) != 2 {
		t.Fatalf("helpers on cores %v and %v, want one core and two", c1, c2)
	}
	hostW := shmem.DefaultEnergy().Host.Static
	if one < 0.995*hostW || one > 1.005*hostW || two < 1.95*hostW || two > 2.005*hostW {
		t.Fatalf("static power of two helpers: %v W on one core, %v W on two; want %v and ≈%v", one, two, hostW, 2*hostW)
	}
}

// Lock scope: the library's mutexes are per context (plus the bounce
// pool's), held across their critical sections only, so two ComP-Net
// service threads serving different work-groups' queues take their
// locks without ever finding one held (a single library-wide mutex held
// across every issue makes them spin). Both threads do serve, and their
// locks are real RMWs of L2 lines.
func TestServiceThreadsOnDifferentQueuesDoNotSerialise(t *testing.T) {
	for _, kind := range []shmem.Kind{shmem.CompNetCP, shmem.GHNDGPU} {
		sp := shmem.DefaultSpec()
		sp.Threads = 2
		c, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hw("dgpu"), Spec: sp, Nodes: 2},
			[]uint64{64}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error {
					for i := range 24 {
						if err := x.P(s[0]+mem.Addr(8*x.WG().ID), uint64(i), 8, 1-pe); err != nil {
							return err
						}
					}
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		r := reps[0]
		if len(r.Threads) != 2 || r.Threads[0].Served == 0 || r.Threads[1].Served == 0 {
			t.Fatalf("%s: threads %+v: want two serving threads", kind, r.Threads)
		}
		if r.Locks < 2*24 || r.LockSpins != 0 {
			t.Errorf("%s: %d lock acquisitions, %d spins on a held lock; want ≥ 48 and none", kind, r.Locks, r.LockSpins)
		}
		if kind == shmem.CompNetCP {
			if st := c.Nodes[0].GPU.L2Stats(); st.RMWs < 2*24 {
				t.Errorf("CP lock RMWs at the L2: %d, want ≥ 48", st.RMWs)
			}
			if r.Threads[0].CoreID == r.Threads[1].CoreID {
				t.Errorf("two CP threads on one core %d", r.Threads[0].CoreID)
			}
		}
	}
}

// The library's mutexes exist only when several threads call it (SOS
// takes SHMEM_MUTEX_LOCK at SHMEM_THREAD_MULTIPLE only): one service
// thread issues without a lock, no RMW reaches the CP's L2; two take one
// per issue and per quiet.
func TestMutexesOnlyWithSeveralServiceThreads(t *testing.T) {
	for _, threads := range []int{1, 2} {
		sp := shmem.DefaultSpec()
		sp.Threads = threads
		c, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.CompNetCP, HW: hw("dgpu"), Spec: sp, Nodes: 2},
			[]uint64{64}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error {
					for i := range 8 {
						if err := x.P(s[0]+mem.Addr(8*x.WG().ID), uint64(i), 8, 1-pe); err != nil {
							return err
						}
					}
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("%d threads: %v", threads, err)
		}
		locks, rmws := reps[0].Locks, c.Nodes[0].GPU.L2Stats().RMWs
		if threads == 1 && (locks != 0 || rmws != 0) {
			t.Errorf("one service thread: %d lock acquisitions, %d L2 RMWs; want none", locks, rmws)
		}
		if threads == 2 && (locks < 2*8 || rmws < 2*8) {
			t.Errorf("two service threads: %d lock acquisitions, %d L2 RMWs; want ≥ 16 each", locks, rmws)
		}
	}
}

// Thread placement as the documents' simulator ran it: 5 ComP-Net threads
// get 5 CP cores (the preset has 2) and 17 GHN helpers get 17 host cores
// besides the application's (the preset has 16), each reported as a
// deviation; cp.oversubscribe time-slices the 5 on 2 cores instead.
func TestServiceThreadPlacement(t *testing.T) {
	for _, tc := range []struct {
		kind    shmem.Kind
		threads int
		over    bool
		cores   int
		dev     string
	}{
		{shmem.CompNetCP, 5, false, 5, "5 service threads on 5 CP cores"},
		{shmem.CompNetCP, 5, true, 2, "time-sliced on 2 CP cores"},
		{shmem.CompNetCP, 2, false, 2, ""},
		{shmem.GHNDGPU, 17, false, 17, "on 18 host cores"},
	} {
		sp := shmem.DefaultSpec()
		sp.Threads = tc.threads
		h := hw("dgpu")
		h.CP.Oversubscribe = tc.over
		_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: tc.kind, HW: h, Spec: sp, Nodes: 2},
			[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: tc.threads, Body: func(pe int, x *shmem.Ctx) error { return x.P(s[0], 1, 8, 1-pe) }}
			})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		r := reps[0]
		cores := map[int]bool{}
		for _, th := range r.Threads {
			cores[th.CoreID] = true
		}
		if len(cores) != tc.cores {
			t.Errorf("%s %d threads oversubscribe=%v: on %d cores, want %d", tc.kind, tc.threads, tc.over, len(cores), tc.cores)
		}
		got := strings.Join(r.Deviations, "; ")
		if tc.dev == "" && got != "" || !strings.Contains(got, tc.dev) {
			t.Errorf("%s %d threads: deviations %q, want %q", tc.kind, tc.threads, got, tc.dev)
		}
	}
}

// Between two GPUs of one node, a put, a fetching atomic and a get go by
// the GPU's peer access when it is on: the NICs send nothing, the data and
// the atomic's result are right, and it takes less time than the
// host-proxied path through the NICs (no proxy pickup, no NIC command).
func TestPeerAccessBypassesTheNIC(t *testing.T) {
	const n = 64 << 10
	run := func(peerAccess bool) (sim.Time, shmem.Report, uint64) {
		hw := hw("dgpu")
		hw.Node.GPUs = 2
		sp := shmem.DefaultSpec()
		sp.PeerAccess = peerAccess
		var old uint64
		var end sim.Time
		c, syms, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.GHNDGPU, HW: hw, Spec: sp, Nodes: 2},
			[]uint64{n, n, 8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					if pe == 1 {
						return nil
					}
					b := make([]byte, n)
					for i := range b {
						b[i] = byte(i * 13)
					}
					x.WG().Mem().Write(s[0], b)
					x.WG().Mem().Store64(s[2], 0)
					if err := x.Putmem(s[1], s[0], n, 1); err != nil {
						return err
					}
					if err := x.Quiet(); err != nil {
						return err
					}
					var err error
					if old, err = x.AtomicFetchAdd(s[2], 5, 8, 1); err != nil {
						return err
					}
					if old, err = x.AtomicFetchAdd(s[2], 5, 8, 1); err != nil {
						return err
					}
					end = x.WG().Now()
					return x.Getmem(s[0], s[1], n, 1)
				}}
			})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		c.Nodes[1].Mem.Read(syms[1][1], got)
		for i := range got {
			if got[i] != byte(i*13) {
				t.Fatalf("peer access %v: byte %d of the put is %d", peerAccess, i, got[i])
			}
		}
		if old != 5 {
			t.Fatalf("peer access %v: second fetch-add returned %d, want 5", peerAccess, old)
		}
		return end, reps[0], c.Nodes[0].NIC.Stats().PacketsTx
	}
	peerEnd, peerRep, peerPkts := run(true)
	nicEnd, nicRep, nicPkts := run(false)
	if peerRep.Calls.Peer != 4 || peerPkts != 0 {
		t.Errorf("peer access: %d calls by peer access (want 4), %d NIC packets (want 0)", peerRep.Calls.Peer, peerPkts)
	}
	if nicRep.Calls.Peer != 0 || nicPkts == 0 {
		t.Errorf("without peer access: %d calls by peer access (want 0), %d NIC packets (want some)", nicRep.Calls.Peer, nicPkts)
	}
	if peerEnd >= nicEnd {
		t.Errorf("peer access took %v, the proxied NIC path %v: want it faster", peerEnd, nicEnd)
	}
}

// IKN's queue placement decides where each cost is paid. With the queues
// in GPU memory the host thread polls them over PCIe (a round trip per
// poll); with ROC_SHMEM's placement (entries in host memory, status flags
// in GPU memory) the thread polls its own cache and its only PCIe
// transactions are the status writes, one per served entry, and the
// work-group's completion wait reads GPU memory instead of crossing PCIe:
// a blocking put completes sooner.
func TestIKNQueuePlacement(t *testing.T) {
	const puts = 8
	run := func(inGPU bool) (shmem.Report, sim.Duration) {
		sp := shmem.DefaultSpec()
		sp.QueueInGPU, sp.Threads = inGPU, 1
		var took sim.Duration
		_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.GHNDGPU, HW: hw("dgpu"), Spec: sp, Nodes: 2},
			[]uint64{8 * puts}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					start := x.WG().Now()
					for i := range puts {
						if err := x.P(s[0]+mem.Addr(8*i), uint64(i+1), 8, 1-pe); err != nil {
							return err
						}
					}
					if pe == 0 {
						took = x.WG().Now() - start
					}
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("queue_in_gpu=%v: %v", inGPU, err)
		}
		return reps[0], took
	}
	dev, tDev := run(true)
	host, tHost := run(false)
	d, h := dev.Threads[0], host.Threads[0]
	t.Logf("GPU queues: %d polls, %d PCIe, %v; host queues: %d polls, %d PCIe, %v", d.Polls, d.Counts.PCIe, tDev, h.Polls, h.Counts.PCIe, tHost)
	if d.Served != h.Served || d.Served < puts {
		t.Fatalf("served %d and %d entries, want the same, at least %d", d.Served, h.Served, puts)
	}
	// The library's doorbells and NIC accesses are the same in both runs;
	// what the placement adds on top of them is the host queues' status
	// writes (one per entry) or the GPU queues' polls and entry reads.
	lib := h.Counts.PCIe - h.Served
	if d.Counts.PCIe < d.Polls+d.Served+lib {
		t.Errorf("queues in GPU memory: %d PCIe transactions, want at least one per poll and entry read plus the library's (%d + %d + %d)", d.Counts.PCIe, d.Polls, d.Served, lib)
	}
	if h.Polls <= h.Served || h.Counts.PCIe >= d.Counts.PCIe {
		t.Errorf("queues in host memory: %d polls, %d PCIe (GPU queues: %d); want polls in the cache, fewer PCIe transactions", h.Polls, h.Counts.PCIe, d.Counts.PCIe)
	}
	if tHost >= tDev {
		t.Errorf("%d blocking puts took %v with host queues and GPU status, %v with GPU queues; want host queues faster (no poll crosses PCIe)", puts, tHost, tDev)
	}
}

// A work-group that waits for good on a flag nobody sets, while the
// service threads keep polling their queues (ComP-Net's on the CP, the
// GHN helpers on the host, across PCIe or through their caches), ends
// the run as a deadlock naming the work-group and what the threads poll
// (the threads' polls find nothing and nothing else can happen:
// sim/poll.go), not as a run that polls until the scenario's time limit.
func TestPollingServiceThreadsDoNotHideADeadlock(t *testing.T) {
	for _, tc := range []struct {
		kind           shmem.Kind
		mode           string
		threads, cores int // helpers and the host cores they may use (0: the defaults)
	}{{shmem.CompNetCP, "dgpu", 0, 0}, {shmem.CompNetCP, "dgpu", 3, 1}, {shmem.GHNDGPU, "dgpu", 0, 0}, {shmem.GHNDGPU, "dgpu", 2, 1}, {shmem.GHNHostQ, "dgpu", 0, 0}, {shmem.GHNAPU, "apu", 0, 0}} {
		spec, h := shmem.DefaultSpec(), hw(tc.mode)
		if tc.threads > 0 { // threads time-sliced on one core
			spec.Threads, spec.HostCores = tc.threads, tc.cores
			h.CP.Cores, h.CP.Oversubscribe = tc.cores, true
		}
		limit := 500 * sim.Microsecond
		if tc.threads > 0 {
			limit = 20 * sim.Millisecond // the helpers hand the core over at cpu.time_slice ends (1 ms)
		}
		_, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: tc.kind, HW: h, Spec: spec, Nodes: 2, Limit: limit},
			[]uint64{8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: max(1, tc.threads), Body: func(pe int, x *shmem.Ctx) error {
					x.WG().PollDevice(s[0], "a flag nobody sets", func(v uint64) bool { return v == 7 })
					return nil
				}}
			})
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) || !strings.Contains(err.Error(), "waits on a flag nobody sets") {
			t.Fatalf("%s: err = %v, want a deadlock of the work-groups beside the service threads", tc.kind, err)
		}
		if first, _, _ := strings.Cut(err.Error(), "\n"); dl.Polling > 0 && !strings.Contains(first, "poll queue 0's next slot (node[0].") {
			t.Errorf("%s: first line %q does not say what the threads poll", tc.kind, first)
		}
		if dl.At > 100*sim.Microsecond && tc.threads == 0 || dl.At > 5*sim.Millisecond {
			t.Errorf("%s: deadlock found at %v, long after the work-group stopped", tc.kind, dl.At)
		}
	}
}

// A blocking get's data is visible to the work-group's plain loads when
// the call returns, even where the work-group had the destination line in
// its caches: the completion pass ends with an acquire at the queue's
// publish scope (system for every GHN placement, GHN_DGPU_HOSTQ's
// host-memory queue included), which drops the stale copy.
func TestBlockingGetSeenThroughStaleCaches(t *testing.T) {
	for _, kind := range []shmem.Kind{shmem.GHNDGPU, shmem.GHNHostQ, shmem.GHNAPU, shmem.CompNetCP} {
		mode := "dgpu"
		if kind == shmem.GHNAPU {
			mode = "apu"
		}
		var got [2]uint64
		_, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hw(mode), Spec: shmem.DefaultSpec(), Nodes: 2},
			[]uint64{8, 8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					x.WG().Mem().Store64(s[0], uint64(1000+pe))
					if err := x.Barrier(); err != nil {
						return err
					}
					x.WG().Load64(s[1]) // the destination's line now in the caches
					if err := x.Getmem(s[1], s[0], 8, 1-pe); err != nil {
						return err
					}
					got[pe] = x.WG().Load64(s[1])
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		for pe := range 2 {
			if want := uint64(1000 + 1 - pe); got[pe] != want {
				t.Errorf("%s: PE %d read %d after its blocking get, want %d (a stale cached copy)", kind, pe, got[pe], want)
			}
		}
	}
}

// A host helper reads an entry in GPU memory (GHN_DGPU) with one uncached
// load per field its op uses, one PCIe round trip after another (x86
// performs uncached loads one at a time): a quiet's entry (op, flags,
// context) takes three round trips, a blocking get's (those and PE,
// length, destination, source) four more. Read as one 64-byte
// transaction either would take one. Through its cache (GHN_DGPU_HOSTQ)
// an entry costs far less than a single round trip.
func TestEntryReadAcrossPCIeIsOneLoadPerField(t *testing.T) {
	h := hw("dgpu")
	rtt := 2*h.PCIe.Latency + h.PCIe.Overhead
	const calls = 3
	// dequeue returns the entry reads' summed time and count: the
	// kernel's calls and the quiet its context's destroy posts.
	dequeue := func(kind shmem.Kind, quiet bool) (sim.Duration, uint64) {
		t.Helper()
		_, _, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: h, Spec: shmem.DefaultSpec(), Nodes: 2},
			[]uint64{8, 8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					for range calls {
						var err error
						if quiet {
							err = x.Quiet()
						} else {
							err = x.Getmem(s[1], s[0], 8, 1-pe)
						}
						if err != nil {
							return err
						}
					}
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return reps[0].Calls.Phases[shmem.PhaseDequeue], reps[0].Calls.Phased
	}
	within := func(d sim.Duration, trips int) bool {
		return d >= sim.Duration(trips)*rtt && d <= sim.Duration(trips)*(rtt+20*sim.Nanosecond)
	}
	qs, qn := dequeue(shmem.GHNDGPU, true)
	if q := qs / sim.Duration(qn); !within(q, 3) {
		t.Errorf("GHN_DGPU quiet entry read in %v, want 3 serial PCIe round trips of %v", q, rtt)
	}
	gs, gn := dequeue(shmem.GHNDGPU, false)
	if gn != qn || !within(gs-qs, calls*4) {
		t.Errorf("GHN_DGPU: %d gets' entry reads took %v more than %d quiets' (%d vs %d reads), want 4 more serial PCIe round trips of %v each",
			calls, gs-qs, calls, gn, qn, rtt)
	}
	if hs, hn := dequeue(shmem.GHNHostQ, false); hs/sim.Duration(hn) >= rtt {
		t.Errorf("GHN_DGPU_HOSTQ get entry read in %v through its cache, want less than one PCIe round trip %v", hs/sim.Duration(hn), rtt)
	}
}

// ringCalls is a ring loop of puts and waits run as one state machine
// over the context's step calls (BeginPutmemNBI, BeginWaitUntil, TryCall).
type ringCalls struct {
	x      *shmem.Ctx
	pe, n  int
	data   mem.Addr // rounds × 64 B, the round's block put to the right
	flag   mem.Addr // the round's flag word on the right, after its data
	rounds int
	r      int
	pc     uint8 // 0 the data put, 1 the flag put, 2 the wait
	begun  bool
	got    []uint64
	err    error
}

func (rc *ringCalls) Step(p *sim.Proc) bool {
	right := (rc.pe + 1) % rc.n
	for !p.Waited() {
		if rc.r == rc.rounds {
			return true
		}
		if !rc.begun {
			switch rc.pc {
			case 0:
				a := rc.data + mem.Addr(64*rc.r)
				rc.err = rc.x.BeginPutmemNBI(a, a, 64, right)
			case 1:
				rc.err = rc.x.BeginPutmemNBI(rc.flag+mem.Addr(8*rc.r), rc.flag+mem.Addr(8*rc.r), 8, right)
			default:
				rc.err = rc.x.BeginWaitUntil(rc.flag+mem.Addr(8*rc.r), 8, shmem.CmpGE, uint64(rc.r+1))
			}
			if rc.err != nil {
				return true
			}
			rc.begun = true
		}
		if !rc.x.TryCall(p) {
			continue
		}
		rc.begun = false
		if rc.pc == 2 {
			rc.got = append(rc.got, rc.x.WaitedValue())
			rc.pc, rc.r = 0, rc.r+1
			continue
		}
		rc.pc++
	}
	return false
}

// The context's step calls (BeginPutmemNBI, BeginWaitUntil, TryCall),
// which a work-group's loop runs as one state machine, are the blocking
// calls (the channel's Submit as coroutine code): a ring of puts, flags
// and wait_until over every queue backend and GIO (its puts and its
// templater's loop; also with 2-entry queues, so that puts poll the CQ for
// a free slot, with a slow templater, so that they stall for templates,
// and with the templater time-sliced on one host core), two work-groups per PE,
// ends at the same time with the same event count, the same reports (call
// statistics, service threads' counts and energy, GIO's counters) and the
// same received memory whichever way it runs.
func TestStepCallsMatchCalls(t *testing.T) {
	const rounds, n = 6, 3
	spec := shmem.DefaultSpec()
	oneCore := false
	hwOf := func(kind shmem.Kind, mode string) cluster.Spec {
		if kind == shmem.GIO {
			h := cluster.GIO()
			if oneCore {
				// The templater and the app's thread share a core, time-sliced.
				h.CPU.Cores, h.CPU.TimeSlice = 1, 3*sim.Microsecond
			}
			return h
		}
		return hw(mode)
	}
	type out struct {
		end    sim.Time
		events uint64
		reps   string
		mem    []uint64
		got    [][]uint64
	}
	marks := uint64(0) // the last run's marks passed
	// run runs the ring with blocking calls or step calls; flushMarks lets
	// the step calls make the PPB flush's wake-up a mark.
	run := func(kind shmem.Kind, mode string, steps, flushMarks bool) out {
		var o out
		o.got = make([][]uint64, 2*n)
		c, syms, reps, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hwOf(kind, mode), Spec: spec, Nodes: n},
			[]uint64{2 * rounds * 64, 2 * rounds * 8}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error {
					w := x.WG().ID
					data, flag := s[0]+mem.Addr(w*rounds*64), s[1]+mem.Addr(w*rounds*8)
					for r := range rounds {
						x.WG().Mem().Store64(flag+mem.Addr(8*r), uint64(r+1)) // what the flag put carries
					}
					g := &o.got[pe*2+w]
					if steps {
						if !flushMarks {
							x.FlushEvents()
						}
						if !x.StepCalls() {
							return errors.New("no step calls")
						}
						rc := &ringCalls{x: x, pe: pe, n: n, data: data, flag: flag, rounds: rounds}
						x.WG().Proc.RunSteps(rc)
						*g = rc.got
						return rc.err
					}
					x.BlockingForm()
					x.TemplaterLoop()
					for r := range rounds {
						a := data + mem.Addr(64*r)
						if err := x.PutmemNBI(a, a, 64, (pe+1)%n); err != nil {
							return err
						}
						if err := x.PutmemNBI(flag+mem.Addr(8*r), flag+mem.Addr(8*r), 8, (pe+1)%n); err != nil {
							return err
						}
						v, err := x.WaitUntil(flag+mem.Addr(8*r), 8, shmem.CmpGE, uint64(r+1))
						if err != nil {
							return err
						}
						*g = append(*g, v)
					}
					return nil
				}}
			})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		o.end, o.events = c.Engine.Now(), c.Engine.Events()
		marks = c.Engine.MarksPassed()
		o.reps = fmt.Sprintf("%+v", reps)
		for pe := range n {
			for k := range 2 * rounds * 8 {
				o.mem = append(o.mem, c.Nodes[pe].Mem.Load64(syms[pe][0]+mem.Addr(8*k)))
			}
		}
		return o
	}
	small, slow := shmem.DefaultSpec(), shmem.DefaultSpec()
	small.QueueEntries = 2
	slow.GIO.TemplateInstr = 2000
	slowKernel := slow // templates filled with the kernel, not at init
	slowKernel.GIO.TemplateAtInit = false
	for _, tc := range []struct {
		kind    shmem.Kind
		spec    shmem.Spec
		oneCore bool
	}{
		{shmem.GHNDGPU, shmem.DefaultSpec(), false}, {shmem.GHNHostQ, shmem.DefaultSpec(), false},
		{shmem.GHNAPU, shmem.DefaultSpec(), false}, {shmem.CompNetCP, shmem.DefaultSpec(), false},
		{shmem.GIO, shmem.DefaultSpec(), false}, {shmem.GIO, small, false}, {shmem.GIO, slow, false}, {shmem.GIO, slowKernel, false},
		{shmem.GIO, small, true},
	} {
		kind := tc.kind
		spec, oneCore = tc.spec, tc.oneCore
		mode := "dgpu"
		if kind == shmem.GHNAPU {
			mode = "apu"
		}
		a, b := run(kind, mode, false, false), run(kind, mode, true, false)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s (%d entries, %d template instructions): blocking calls and step calls differ:\n%v\n%v",
				kind, spec.QueueEntries, spec.GIO.TemplateInstr, a, b)
		}
		if kind == shmem.GIO {
			// TestFlushMarkMatchesEvent: the flush's wake-up as a mark
			// where it only begins the claim's wait leaves everything as
			// the event did, but for that event: each one fewer is a
			// mark passed more.
			bm := marks
			c := run(kind, mode, true, true)
			cm := marks
			d := c
			d.events = b.events
			if fmt.Sprint(d) != fmt.Sprint(b) || c.events >= b.events || c.events+cm != b.events+bm {
				t.Errorf("GIO (%d entries, %d template instructions): the flush's mark differs from its event:\n%v (%d marks)\n%v (%d marks)",
					spec.QueueEntries, spec.GIO.TemplateInstr, c, cm, b, bm)
			}
		}
		if a.events == 0 || len(a.got[0]) != rounds {
			t.Errorf("%s: the ring did not run: %v", kind, a)
		}
	}
}
