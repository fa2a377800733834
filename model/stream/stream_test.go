package stream

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The stream runs in order: a wait-value gates the kernel after it, and the
// CP sees the word at its next 100 ns poll tick.
func TestWaitValueGatesLaterOperations(t *testing.T) {
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := c.Nodes[0]
	flag := nd.Mem.AllocData(mem.GPU, 8, "flag")
	var bodyStart sim.Time
	var run *gpu.Run
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, cost.Default())
		s.WaitValue(flag, "flag", func(v uint64) bool { return v == 1 })
		run = s.Launch(gpu.Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *gpu.WG) { bodyStart = wg.Now() }})
		s.Synchronize()
	})
	e.At(10*sim.Microsecond+30*sim.Nanosecond, func() { nd.Mem.Store64(flag, 1) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !run.Finished() {
		t.Fatal("kernel did not finish")
	}
	if run.LaunchStart < 10*sim.Microsecond+30*sim.Nanosecond {
		t.Fatalf("kernel launched at %v, before the flag was set", run.LaunchStart)
	}
	if run.LaunchStart%(100*sim.Nanosecond) == 30*sim.Nanosecond {
		t.Errorf("the CP saw the flag at the store itself (%v), not at a poll tick", run.LaunchStart)
	}
	if bodyStart < run.LaunchStart+nd.GPU.Spec().Launch {
		t.Errorf("body at %v, before launch %v + overhead", bodyStart, run.LaunchStart)
	}
}

// Host kernel launch and wait: the host sees completion after teardown.
func TestLaunchAndWait(t *testing.T) {
	e := sim.New(1)
	c, _ := cluster.New(e, cluster.GPUTN(), 1, true)
	nd := c.Nodes[0]
	var waited sim.Time
	var run *gpu.Run
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, cost.Default())
		run = s.Launch(gpu.Kernel{Name: "k", WGs: 4, WGSize: 256, Body: func(wg *gpu.WG) { wg.VALU(100) }})
		s.Wait(run)
		waited = th.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if waited < run.Done || run.Done-run.BodyEnd != nd.GPU.Spec().Teardown {
		t.Fatalf("host woke at %v, kernel done %v (teardown %v)", waited, run.Done, run.Done-run.BodyEnd)
	}
}

// launchAndWait launches one kernel with sw.kernel_wait = mode while a
// second thread pinned to the host's core does 20 µs of work, and returns
// when the host enqueued, when it saw completion, the kernel's Run and when
// the other thread finished.
func launchAndWait(t *testing.T, mode string) (enqueued, seen sim.Time, run *gpu.Run, other sim.Time) {
	t.Helper()
	e := sim.New(1)
	c, _ := cluster.New(e, cluster.GPUTN(), 1, true)
	nd := c.Nodes[0]
	sw := cost.Default()
	sw.KernelWait = mode
	_, err := nd.CPU.SpawnOn(0, "host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, sw)
		run = s.Launch(gpu.Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *gpu.WG) { wg.VALU(10) }})
		enqueued = th.Now()
		s.Wait(run)
		seen = th.Now()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nd.CPU.SpawnOn(0, "other", func(o *cpu.Thread) { o.Instr(20 * 8000); other = o.Now() }); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return enqueued, seen, run, other
}

func TestLaunchPathAndWaitModes(t *testing.T) {
	spec := cluster.GPUTN().CPU
	enq, seen, run, other := launchAndWait(t, cost.WaitPoll)
	// The launch: 300 instructions at IPC 2, 4 GHz (37.5 ns), the queue
	// reserve's RMW miss and the room check's read-index miss (95 ns
	// each: the directory, then DRAM).
	if want := spec.Instr(300) + 2*spec.MissLatency(); enq != want {
		t.Errorf("enqueue took %v, want %v (sw.kernel_launch + the write index RMW + the read index load)", enq, want)
	}
	// The doorbell leaves once the packet's store is visible (a host store:
	// the host's miss, not the GPU's memory latency) and reaches the CP
	// the host-doorbell latency later.
	gs := cluster.GPUTN().GPU
	if gs.MemLatency == spec.MissLatency() {
		t.Fatalf("preset gputn: gpu.mem_latency = the host's miss %v; the check below cannot tell them apart", gs.MemLatency)
	}
	if want := enq + spec.MissLatency() + cluster.GPUTN().SoC.MMIOLatency; run.LaunchStart != want {
		t.Errorf("the CP took the packet at %v, want %v (the packet's host store, then the doorbell)", run.LaunchStart, want)
	}
	// Polling: the host sees the signal one miss after it is written; the
	// other thread on its core runs only after the host is done.
	if seen != run.Done+spec.MissLatency() {
		t.Errorf("polling host saw completion at %v, want %v", seen, run.Done+spec.MissLatency())
	}
	if other < seen+20*sim.Microsecond {
		t.Errorf("with the host polling, the other thread ended at %v, before the host (%v) + its 20us", other, seen)
	}
	_, seenB, runB, otherB := launchAndWait(t, cost.WaitBlock)
	// Blocking: the core is free, so the other thread runs at once (one
	// switch in); the host, woken cpu.wake_latency after the signal, waits
	// for the other thread, which is within its slice, to finish.
	if want := enq + spec.CacheHit + spec.ContextSwitch + 20*sim.Microsecond; otherB != want { // one poll hit before blocking
		t.Errorf("with the host blocked, the other thread ended at %v, want %v", otherB, want)
	}
	if seenB < runB.Done+spec.WakeLatency || seenB < otherB {
		t.Errorf("blocked host saw completion at %v: want after signal %v + wake latency and after the other thread (%v)", seenB, runB.Done, otherB)
	}
}

// A peer copy on the stream is served by a copy engine: the bytes land in
// the other GPU's memory, the NIC sends nothing, and the operation after
// it starts only once the copy has landed (after the engine's launch).
func TestCopyPeerOrdersLaterOperations(t *testing.T) {
	spec := cluster.GPUTN()
	spec.Node.GPUs = 2
	e := sim.New(1)
	c, err := cluster.New(e, spec, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Nodes[0], c.Nodes[1]
	const n = 256 << 10
	src := a.Mem.AllocData(mem.GPU, n, "src")
	dst := b.Mem.AllocData(mem.GPU, n, "dst")
	done := a.Mem.AllocData(mem.Host, 8, "done")
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i*11 + 5)
	}
	a.Mem.Write(src, want)
	var marked sim.Time
	a.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, a.GPU, a.NIC, cost.Default())
		s.UsePeer(a.Peer)
		if !s.ReachesPeer(1) || s.ReachesPeer(0) {
			t.Error("ReachesPeer: want the other GPU only")
		}
		s.CopyPeer(1, dst, src, n)
		s.Marker(done, 1)
		s.Synchronize()
		marked = th.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	b.Mem.Read(dst, got)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("byte %d: %d, want %d", i, got[i], want[i])
		}
	}
	if a.NIC.Stats().PacketsTx != 0 || a.Peer.Stats().Copies != 1 {
		t.Errorf("NIC packets %d, copies %d: want 0 and 1", a.NIC.Stats().PacketsTx, a.Peer.Stats().Copies)
	}
	wire := sim.FromPicoseconds(float64(n) * spec.Node.Bandwidth.PerByte())
	if min := spec.Node.CopyLaunch + wire; marked < min {
		t.Errorf("synchronized at %v, before the copy could land (%v)", marked, min)
	}
}

// A batch of peer copies is one stream operation whose copies the copy
// engines serve at once: four small copies to the node's other GPU land
// with their bytes, the operation after the batch waits for all of them,
// and the batch ends sooner than the same copies as four CopyPeer calls,
// each of which waits for the last to land.
func TestCopyPeersOverlap(t *testing.T) {
	const n, k = 4 << 10, 4
	run := func(batch bool) sim.Time {
		spec := cluster.GPUTN()
		spec.Node.GPUs = 2
		e := sim.New(1)
		c, err := cluster.New(e, spec, 2, true)
		if err != nil {
			t.Fatal(err)
		}
		a, b := c.Nodes[0], c.Nodes[1]
		src := a.Mem.AllocData(mem.GPU, n*k, "src")
		dst := b.Mem.AllocData(mem.GPU, n*k, "dst")
		done := a.Mem.AllocData(mem.Host, 8, "done")
		want := make([]byte, n*k)
		for i := range want {
			want[i] = byte(i*7 + 3)
		}
		a.Mem.Write(src, want)
		var marked sim.Time
		a.CPU.Spawn("host", func(th *cpu.Thread) {
			s := New(th, a.GPU, a.NIC, cost.Default())
			s.UsePeer(a.Peer)
			var cs []PeerCopy
			for i := range k {
				off := mem.Addr(i * n)
				cs = append(cs, PeerCopy{PE: 1, Dst: dst + off, Src: src + off, N: n})
			}
			if batch {
				s.CopyPeers(cs)
			} else {
				for _, p := range cs {
					s.CopyPeer(p.PE, p.Dst, p.Src, p.N)
				}
			}
			s.Marker(done, 1)
			s.Synchronize()
			marked = th.Now()
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n*k)
		b.Mem.Read(dst, got)
		if string(got) != string(want) {
			t.Fatalf("batch %v: copied bytes differ", batch)
		}
		if a.Peer.Stats().Copies != k {
			t.Errorf("batch %v: %d copies, want %d", batch, a.Peer.Stats().Copies, k)
		}
		if min := spec.Node.CopyLaunch; marked < min {
			t.Errorf("batch %v: synchronized at %v, before a copy could land", batch, marked)
		}
		return marked
	}
	if batched, serial := run(true), run(false); batched >= serial {
		t.Errorf("4 copies: batch ends at %v, one by one at %v: want the batch sooner", batched, serial)
	}
}
