package xtq_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
)

// setup is what the target registers and posts.
type setup struct {
	recv   uint64 // posted buffer bytes (0: none)
	kernel uint64 // kernel index registered
	queue  uint16 // queue index registered
}

// spawn runs the XTQ example program on two xtq-preset nodes in mode:
// node 1 registers per st and waits for its signal to count down tasks
// times; node 0 sends tasks of n bytes aimed at kernel k, queue q. It
// returns the engine's error, the target runtime and the target's result
// buffer and the payload.
func spawn(t *testing.T, mode xtq.Mode, st setup, k uint64, q uint16, n uint64, tasks int) (error, *xtq.Runtime, []byte, []byte) {
	t.Helper()
	c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	return spawnOn(t, c, mode, st, k, q, n, tasks)
}

// spawnOn is spawn on the two nodes of c.
func spawnOn(t *testing.T, c *cluster.Cluster, mode xtq.Mode, st setup, k uint64, q uint16, n uint64, tasks int) (error, *xtq.Runtime, []byte, []byte) {
	t.Helper()
	var rts [2]*xtq.Runtime
	var dst mem.Addr
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(3*i + 1)
	}
	copyCode := gpu.KernelCode{Name: "add", Body: func(wg *gpu.WG, kernarg mem.Addr) {
		a := wg.LoadArgs(kernarg, 3)
		if wg.ID == 0 {
			d, s := wg.Mem().Bytes(mem.Addr(a[0]), int(a[2])), wg.Mem().Bytes(mem.Addr(a[1]), int(a[2]))
			for i := range d {
				d[i] += s[i]
			}
		}
		wg.VALU(10)
	}}
	for i, nd := range c.Nodes {
		nd.CPU.Spawn("app", func(th *cpu.Thread) {
			rt, err := xtq.New(th, nd.NIC, nd.GPU, i, 2, mode, cost.Default())
			if err != nil {
				t.Error(err)
				return
			}
			rts[i] = rt
			if i == 0 {
				pay := nd.Mem.Alloc(mem.Host, n, "payload")
				nd.Mem.Write(pay, want)
				rt.Barrier()
				for range tasks {
					if err := rt.Put(xtq.Task{Target: 1, Kernel: k, Queue: q, Grid: 128, WGSize: 64,
						Args: []uint64{0, 0, n}, Payload: pay, PayloadLen: n}); err != nil {
						t.Error(err)
					}
				}
				return
			}
			dst = nd.Mem.Alloc(mem.GPU, n, "dst")
			if st.recv > 0 {
				rt.PostBuffer(nd.Mem.Alloc(mem.Host, st.recv, "recv"), st.recv)
			}
			if _, err := rt.TaskingInit(st.queue, 4); err != nil {
				t.Error(err)
			}
			sig := rt.NewSignal("sig", uint64(tasks))
			if _, err := rt.RegisterKernel(st.kernel, copyCode, dst, sig); err != nil {
				t.Error(err)
			}
			rt.Barrier()
			rt.SignalWait(sig, "tasks", func(v uint64) bool { return v == 0 })
		})
	}
	err := c.Engine.Run()
	return err, rts[1], c.Nodes[1].Mem.Bytes(dst, int(n)), want
}

// On an APU the NIC's doorbell to the GPU's queue is an on-chip MMIO store,
// as the host's to the same queue is: it reaches the packet processor
// soc.mmio_latency after the packet it announces is visible (a coherent
// write through the directory), not with it. Behind PCIe it stays a posted
// write kept in order behind the packet's.
func TestNICDoorbellIsAnOnChipMMIOStore(t *testing.T) {
	spec := cluster.XTQ()
	c, err := cluster.New(sim.New(1), spec, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if err, rt, _, _ := spawnOn(t, c, xtq.XTQ, setup{recv: 1 << 12, kernel: 7, queue: 3}, 7, 3, 64, 1); err != nil || len(rt.Failures()) != 0 {
		t.Fatalf("%v %v", err, rt.Failures())
	}
	st := c.Nodes[1].NIC.XtqStats()
	// The packet's coherent write: the directory lookup and the memory
	// access, after its 64 B streamed at the memory's rate (under 1 ns).
	visible := st.LastTaskAt + spec.SoC.DirLatency + spec.CPU.DRAMLatency
	if d := st.LastBell - visible; d < spec.SoC.MMIOLatency || d > spec.SoC.MMIOLatency+sim.Nanosecond || spec.SoC.MMIOLatency == 0 {
		t.Errorf("doorbell at %v, packet writes issued at %v: want the packet visible (%v and under 1 ns of streaming), then the %v MMIO store",
			st.LastBell, st.LastTaskAt, visible, spec.SoC.MMIOLatency)
	}
}

func TestTasksRunInBothModes(t *testing.T) {
	for _, mode := range []xtq.Mode{xtq.XTQ, xtq.HSA} {
		const tasks = 5
		err, rt, got, want := spawn(t, mode, setup{recv: 1 << 16, kernel: 7, queue: 3}, 7, 3, 1000, tasks)
		if err != nil || len(rt.Failures()) != 0 {
			t.Fatalf("%v: %v %v", mode, err, rt.Failures())
		}
		for i := range got {
			if got[i] != byte(tasks)*want[i] {
				t.Fatalf("%v: byte %d = %d, want %d (every task added once)", mode, i, got[i], byte(tasks)*want[i])
			}
		}
		if mode == xtq.HSA && rt.Stats().Enqueued != tasks {
			t.Errorf("HSA progress thread enqueued %d tasks, want %d", rt.Stats().Enqueued, tasks)
		}
	}
}

// Bad input ends the run with failure records that name the problem; the
// waiting target is reported, not left hanging silently.
func TestBadTasksAreNamedFailures(t *testing.T) {
	cases := []struct {
		name string
		st   setup
		k    uint64
		q    uint16
		n    uint64
		want string
	}{
		{"unregistered kernel", setup{recv: 1 << 16, kernel: 7, queue: 3}, 9, 3, 64, "XTQ_NO_KERNEL: kernel index 9 is not registered"},
		{"unregistered queue", setup{recv: 1 << 16, kernel: 7, queue: 3}, 7, 5, 64, "XTQ_NO_QUEUE: queue index 5 is not registered"},
		{"payload larger than the posted buffer", setup{recv: 512, kernel: 7, queue: 3}, 7, 3, 4096, "XTQ_TOO_LARGE"},
	}
	for _, mode := range []xtq.Mode{xtq.XTQ, xtq.HSA} {
		for _, tc := range cases {
			err, rt, _, _ := spawn(t, mode, tc.st, tc.k, tc.q, tc.n, 1)
			var dl *sim.DeadlockError
			if !errors.As(err, &dl) {
				t.Errorf("%v %s: run ended with %v, want the target reported waiting", mode, tc.name, err)
			}
			f := rt.Failures()
			if len(f) != 1 || !errors.Is(f[0], xtq.ErrTaskFailed) || !strings.Contains(f[0].Error(), tc.want) {
				t.Errorf("%v %s: failures %v, want one naming %q", mode, tc.name, f, tc.want)
			}
		}
	}
}

// The host producer protocol (HSA): the doorbell is written after the
// packet's header, a full queue makes the producer wait for room, and
// every packet runs once.
func TestHostEnqueueOrderAndBackPressure(t *testing.T) {
	c, err := cluster.New(sim.New(1), cluster.XTQ(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := c.Nodes[0]
	q, err := nd.GPU.NewAQLQueue("q", 1)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	obj := nd.GPU.LoadKernel(gpu.KernelCode{Name: "slow", Body: func(wg *gpu.WG, _ mem.Addr) { wg.VALU(5000); runs++ }})
	sig := nd.GPU.NewSignal("s", 3)
	m := nd.Mem
	var firstBell sim.Time
	probe := c.Engine.Spawn("doorbell probe", func(p *sim.Proc) {
		last := uint64(0)
		for {
			p.WaitUntil(m.Watch(q.Doorbell()), "doorbell", func() bool { return m.Load64(q.Doorbell()) > last })
			last = m.Load64(q.Doorbell())
			if last == 1 {
				firstBell = p.Now()
			}
			if pk := gpu.DecodeAQL(m.Bytes(q.Slot(last-1), 64)); pk.Header != gpu.DispatchHeader || pk.KernelObject != obj {
				t.Errorf("doorbell %d: slot header %#x object %#x not published yet", last, pk.Header, pk.KernelObject)
			}
		}
	})
	probe.SetDaemon()
	var waited, first sim.Time
	nd.CPU.Spawn("producer", func(th *cpu.Thread) {
		for i := range 3 {
			start := th.Now()
			xtq.HostEnqueue(th, q, gpu.AQLPacket{Header: gpu.DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj, Signal: sig}, nd.GPU.HostDoorbell())
			waited = max(waited, th.Now()-start)
			if i == 0 {
				first = th.Now() - start
			}
		}
		th.WaitWord(sig, "kernels", func(v uint64) bool { return v == 0 })
	})
	if err := c.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	if runs != 3 || waited < 5*sim.Microsecond {
		t.Errorf("%d kernels ran, longest enqueue %v: want 3, and a wait for room behind a 20us kernel", runs, waited)
	}
	// Into an empty queue the producer pays the locked add on the write
	// index and then the room check's load of the read index: two misses.
	if want := 2 * nd.CPU.Spec().MissLatency(); first != want {
		t.Errorf("first enqueue took %v on the host, want %v (write-index add, then read-index load)", first, want)
	}
	// The doorbell is an uncached store: it leaves once the packet's store
	// is visible (one more miss) and reaches the GPU the APU's on-chip MMIO
	// latency later.
	if bell := nd.GPU.HostDoorbell(); bell != cluster.XTQ().SoC.MMIOLatency || bell == 0 {
		t.Errorf("host doorbell latency %v on preset xtq, want soc.mmio_latency %v", bell, cluster.XTQ().SoC.MMIOLatency)
	}
	if want := 3*nd.CPU.Spec().MissLatency() + nd.GPU.HostDoorbell(); firstBell != want {
		t.Errorf("first doorbell reached the GPU at %v, want %v (add, room check, packet store, MMIO)", firstBell, want)
	}
}

// TestHostEnqueueWaitsForEarlierStores: HSA's progress thread writes the
// kernel arguments into the packet's buffer (a line the NIC just wrote: a
// miss) right before the locked add on the write index, which as every x86
// locked instruction waits for those stores to become visible.
func TestHostEnqueueWaitsForEarlierStores(t *testing.T) {
	c, err := cluster.New(sim.New(1), cluster.XTQ(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := c.Nodes[0]
	q, err := nd.GPU.NewAQLQueue("q", 4)
	if err != nil {
		t.Fatal(err)
	}
	args := nd.Mem.AllocData(mem.Host, 64, "args")
	obj := nd.GPU.LoadKernel(gpu.KernelCode{Name: "k", Body: func(*gpu.WG, mem.Addr) {}})
	lat := nd.CPU.Spec().MissLatency()
	var took [2]sim.Time
	for i, store := range []bool{false, true} {
		nd.CPU.Spawn("producer", func(th *cpu.Thread) {
			start := th.Now()
			if store {
				th.Store(args, 1)
			}
			xtq.HostEnqueue(th, q, gpu.AQLPacket{Header: gpu.DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj}, nd.GPU.HostDoorbell())
			took[i] = th.Now() - start
		})
		if err := c.Engine.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if took[0] != 2*lat || took[1] != 3*lat {
		t.Errorf("enqueue took %v alone and %v after a store, want %v and %v", took[0], took[1], 2*lat, 3*lat)
	}
}

// Tagged notifications and data puts are counted per (channel, tag): on
// three nodes, node 2's step-2 message lands on node 0 before node 1's
// step-1 message (node 1 sends late). WaitNotifyTag for step 1 returns
// only once node 1's arrived, and the data lands at its offset; the
// per-channel count (WaitNotify) takes the first arrival, whichever tag,
// which is why a schedule whose partner changes per step needs the tag.
func TestWaitNotifyTagCountsPerTag(t *testing.T) {
	const late = 30 * sim.Microsecond
	for _, data := range []bool{false, true} {
		c, err := cluster.New(sim.New(1), cluster.XTQ(), 3, true)
		if err != nil {
			t.Fatal(err)
		}
		var any, step1, step2 sim.Time
		var got []byte
		for i, nd := range c.Nodes {
			nd.CPU.Spawn("app", func(th *cpu.Thread) {
				rt, err := xtq.New(th, nd.NIC, nd.GPU, i, 3, xtq.XTQ, cost.Default())
				if err != nil {
					t.Error(err)
					return
				}
				win := nd.Mem.Alloc(mem.Host, 64, "win")
				rt.Expose(win, 64)
				rt.Barrier()
				send := func(tag uint64) {
					if data {
						src := nd.Mem.Alloc(mem.Host, 8, "src")
						nd.Mem.Store64(src, tag)
						rt.PutDataTag(0, src, 8, 8*tag, tag)
					} else {
						rt.NotifyTag(0, xtq.ChanSync, tag)
					}
				}
				ch := xtq.ChanSync
				if data {
					ch = xtq.ChanData
				}
				switch i {
				case 0:
					rt.WaitNotify(ch, 1, "any")
					any = th.Now()
					rt.WaitNotifyTag(ch, 1, 1, "step 1")
					step1 = th.Now()
					rt.WaitNotifyTag(ch, 2, 1, "step 2")
					step2 = th.Now()
					got = append(got, nd.Mem.Bytes(win, 24)...)
					if rt.Notified(ch) != 2 || rt.NotifiedTag(ch, 1) != 1 || rt.NotifiedTag(ch, 2) != 1 || rt.NotifiedTag(ch, 3) != 0 {
						t.Errorf("data %v: counts %d, per tag %d %d %d", data, rt.Notified(ch), rt.NotifiedTag(ch, 1), rt.NotifiedTag(ch, 2), rt.NotifiedTag(ch, 3))
					}
				case 1:
					th.Sleep(late)
					send(1)
				case 2:
					send(2)
				}
			})
		}
		if err := c.Engine.Run(); err != nil {
			t.Fatal(err)
		}
		if any >= late || step1 < late || step2 > step1 {
			t.Errorf("data %v: first arrival at %v, step 1 at %v, step 2 at %v: want the first before %v, step 1 after", data, any, step1, step2, late)
		}
		if data && (len(got) != 24 || got[8] != 1 || got[16] != 2) {
			t.Errorf("window % x: want tag 1 at 8, tag 2 at 16", got)
		}
	}
}
