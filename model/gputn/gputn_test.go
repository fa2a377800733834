package gputn

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// setup gives node 0 a GPU-TN host and node 1 an exposed 4 KiB buffer;
// body registers and launches on node 0 and returns the arrival flags the
// test checks on node 1.
func run(t *testing.T, wgs int, register func(h *Host, src mem.Addr, pt int), body func(wg *gpu.WG, a TrigAddr)) (*cluster.Cluster, mem.Addr, sim.Time) {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	n0, n1 := c.Nodes[0], c.Nodes[1]
	dst := n1.Mem.AllocData(mem.GPU, 4096, "dst")
	pt := n1.NIC.PTAlloc(nil, false)
	if pt0 := n0.NIC.PTAlloc(nil, false); pt0 != pt {
		t.Fatal("portal indices differ")
	}
	n1.NIC.MEAppend(pt, nic.ME{Start: dst, Length: 4096, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEEventDisable}, nic.Priority)
	src := n0.Mem.AllocData(mem.GPU, 4096, "src")
	for i := range uint64(512) {
		n0.Mem.Store64(src+mem.Addr(8*i), i+1)
	}
	var done sim.Time
	n0.CPU.Spawn("host", func(th *cpu.Thread) {
		h := NewHost(th, n0.NIC, cost.Default())
		a := h.TriggerAddr()
		op, r := n0.GPU.DispatchOp(gpu.Kernel{Name: "k", WGs: wgs, WGSize: 64, Body: func(wg *gpu.WG) { body(wg, a) }})
		n0.GPU.Submit(op)
		register(h, src, pt)
		th.WaitWord(r.Signal, "kernel", func(v uint64) bool { return v != 0 })
		done = th.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return c, dst, done
}

// Kernel granularity: every WG leader writes one tag; the put fires only
// after the last of them (threshold = number of WGs).
func TestKernelGranularityWaitsForEveryWorkGroup(t *testing.T) {
	var lastTrigger sim.Time
	c, dst, _ := run(t, 4,
		func(h *Host, src mem.Addr, pt int) {
			h.TrigPut(9, Put{Src: src, Length: 64, Target: 1, PT: pt}, 4)
		},
		func(wg *gpu.WG, a TrigAddr) {
			wg.Sleep(sim.Time(wg.ID+1) * sim.Microsecond)
			TriggerWorkGroup(wg, a, 9)
			lastTrigger = max(lastTrigger, wg.Now())
		})
	m := c.Nodes[1].Mem
	if m.Load64(dst) != 1 || m.Load64(dst+56) != 8 {
		t.Fatalf("put data missing: %d %d", m.Load64(dst), m.Load64(dst+56))
	}
	if st := c.Nodes[0].NIC.Stats(); st.PacketsTx == 0 {
		t.Fatal("no packet sent")
	}
	_ = lastTrigger
	// With threshold 5 the four WG triggers are not enough: nothing moves.
	c, dst, _ = run(t, 4,
		func(h *Host, src mem.Addr, pt int) { h.TrigPut(9, Put{Src: src, Length: 64, Target: 1, PT: pt}, 5) },
		func(wg *gpu.WG, a TrigAddr) { TriggerWorkGroup(wg, a, 9) })
	if got := c.Nodes[1].Mem.Load64(dst); got != 0 {
		t.Fatalf("put fired below its threshold: dst = %d", got)
	}
}

// Work-item granularity: one tag per work-item, each registered with
// threshold 1, all registered after the kernel already triggered (relaxed
// synchronization).
func TestWorkItemGranularityWithLateRegistration(t *testing.T) {
	c, dst, _ := run(t, 1,
		func(h *Host, src mem.Addr, pt int) {
			h.t.Sleep(20 * sim.Microsecond) // the kernel has long triggered
			for i := range 8 {
				h.TrigPut(100+uint64(i), Put{Src: src + mem.Addr(8*i), Length: 8, Target: 1, PT: pt, RemoteOffset: uint64(8 * i)}, 1)
			}
		},
		func(wg *gpu.WG, a TrigAddr) {
			wg.Release(gpu.System)
			for i := range 8 {
				Trigger(wg, a, 100+uint64(i))
			}
		})
	m := c.Nodes[1].Mem
	for i := range uint64(8) {
		if got := m.Load64(dst + mem.Addr(8*i)); got != i+1 {
			t.Fatalf("word %d = %d, want %d", i, got, i+1)
		}
	}
}
