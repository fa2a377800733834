package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestKernelEndWaitsForItsStores: a kernel's completion signal is its
// system-scope release, so every store of its work-groups has landed in
// memory when the signal is written. A store leaving an APU's CU lands
// after the L2's cycles and the memory latency; with a slow clock (10 MHz:
// 100 L2 cycles are 10 us) that is longer than the teardown, and the
// signal came first: a GDS put triggered by the completion read the
// buffer before the kernel's flag landed, and the target waited forever
// (gpunetsim run latency --set gpu.freq=50MHz).
func TestKernelEndWaitsForItsStores(t *testing.T) {
	for _, teardown := range []sim.Duration{1500 * sim.Nanosecond, 0} {
		spec := testSpec("apu")
		spec.Freq, spec.Teardown = 10e6, teardown
		e := sim.New(1)
		m := mem.New("node[0].mem", true)
		g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
		flag := m.AllocData(mem.GPU, 8, "flag")
		op, run := g.DispatchOp(Kernel{Name: "store", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			wg.Store64(flag, 7)
		}})
		g.Submit(op)
		var atSignal uint64
		done := false
		e.Spawn("host", func(p *sim.Proc) {
			run.WaitDone(p)
			atSignal, done = m.Load64(flag), true
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !done || atSignal != 7 {
			t.Errorf("teardown %v: at the completion signal (%v) the kernel's store holds %d, want 7 (landed)", teardown, run.Done, atSignal)
		}
	}
}

// TestAQLKernelEndWaitsForItsStores: the same release for a kernel the
// command processor takes from a user-mode AQL queue (an HSA or XTQ task):
// the packet's completion signal is decremented only once the work-groups'
// stores have landed, as the direct launch's is. The queue's packet
// processor skipped that wait, so a host that saw the signal of a kernel
// whose last act is a store read the value from before it.
func TestAQLKernelEndWaitsForItsStores(t *testing.T) {
	for _, teardown := range []sim.Duration{1500 * sim.Nanosecond, 0} {
		spec := testSpec("apu")
		spec.Freq, spec.Teardown, spec.Launch = 10e6, teardown, 0
		e := sim.New(1)
		m := mem.New("node[0].mem", true)
		g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
		q, err := g.NewAQLQueue("q", 4)
		if err != nil {
			t.Fatal(err)
		}
		flag := m.AllocData(mem.Host, 8, "flag")
		obj := g.LoadKernel(KernelCode{Name: "store", Body: func(wg *WG, _ mem.Addr) { wg.Store64(flag, 7) }})
		sig := g.NewSignal("s", 1)
		put(e, q, 0, AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj, Signal: sig}, 0, sim.Microsecond)
		m.Store64(q.WriteIndex(), 1)
		var atSignal uint64
		done := false
		e.Spawn("host", func(p *sim.Proc) {
			p.WaitUntil(m.Watch(sig), "the completion signal", func() bool { return m.Load64(sig) == 0 })
			atSignal, done = m.Load64(flag), true
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !done || atSignal != 7 {
			t.Errorf("teardown %v: when the AQL packet's signal reached 0 the kernel's store held %d, want 7 (landed)", teardown, atSignal)
		}
	}
}

// streamStep is a one-operation StepBody: StreamOut(n, out), ending when
// the stream does (at records that time).
type streamStep struct {
	n, out uint64
	at     *sim.Time
	issued bool
}

func (s *streamStep) Step(wg *WG) bool {
	if !s.issued {
		s.issued = true
		wg.StreamOut(s.n, s.out)
		return false
	}
	*s.at = wg.Now()
	return true
}

// TestKernelEndWaitsForItsStreamWrites: a work-group's bulk writes
// (StreamOut: a copy's output) are posted; the work-group does not wait
// for them, but the kernel's completion signal, its system-scope release,
// does, until the last one is acknowledged one write after the stream
// ended: at memory (the L2 lookup and the memory latency), or at the
// coherent directory on a node behind one (the L2's and the directory's
// latencies). For the direct launch and an AQL queue's packet processor
// (an HSA or XTQ task), run as a coroutine (Body) and as steps. A release
// that does not track the stream's writes writes the signal when the
// stream ends (at 10 MHz the write's ack, 100 L2 cycles, is 10 us later).
func TestKernelEndWaitsForItsStreamWrites(t *testing.T) {
	for _, c := range []struct {
		name       string
		aql, steps bool
		dir        sim.Duration
	}{
		{"direct", false, false, 0}, {"direct-steps", false, true, 0}, {"direct-dir", false, false, 40 * sim.Nanosecond},
		{"aql", true, false, 0}, {"aql-steps", true, true, 0}, {"aql-dir", true, false, 40 * sim.Nanosecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, m, g, ack := ackTestGPU(c.dir)
			var end, seen sim.Time
			body := func(wg *WG, _ mem.Addr) { wg.StreamOut(2*4096, 4096); end = wg.Now() }
			steps := func(wg *WG, _ mem.Addr) StepBody { return &streamStep{n: 2 * 4096, out: 4096, at: &end} }
			if c.aql {
				q, err := g.NewAQLQueue("q", 4)
				if err != nil {
					t.Fatal(err)
				}
				code := KernelCode{Name: "copy", Body: body}
				if c.steps {
					code = KernelCode{Name: "copy", Steps: steps}
				}
				obj := g.LoadKernel(code)
				sig := g.NewSignal("s", 1)
				put(e, q, 0, AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj, Signal: sig}, 0, sim.Microsecond)
				m.Store64(q.WriteIndex(), 1)
				e.Spawn("host", func(p *sim.Proc) {
					p.WaitUntil(m.Watch(sig), "the completion signal", func() bool { return m.Load64(sig) == 0 })
					seen = p.Now()
				})
			} else {
				k := Kernel{Name: "copy", WGs: 1, WGSize: 64, Body: func(wg *WG) { body(wg, 0) }}
				if c.steps {
					k = Kernel{Name: "copy", WGs: 1, WGSize: 64, Steps: func(wg *WG) StepBody { return steps(wg, 0) }}
				}
				op, run := g.DispatchOp(k)
				g.Submit(op)
				e.Spawn("host", func(p *sim.Proc) { run.WaitDone(p); seen = p.Now() })
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if end == 0 || seen == 0 {
				t.Fatalf("stream ended at %v, signal seen at %v: want both", end, seen)
			}
			if seen < end+ack {
				t.Errorf("completion signal seen at %v, the stream ended at %v: want no earlier than its writes' ack %v later", seen, end, ack)
			}
		})
	}
}

// TestStoreDoneAtTheStreamsAck: a work-group's single store (a flag, a
// trigger word) and its streamed writes follow one rule on a node behind
// the coherent directory: both are done, for a system-scope release, at
// the directory's ack (the L2's cycles and the directory's latency), and
// from then on a coherent reader (the NIC's DMA read issued right after
// the release, a host load) finds the new value in memory. Without a
// directory both wait for the landing in memory (the L2 lookup and the
// memory latency). At 10 MHz the L2's 100 cycles are 10 us, so a store
// that waited for its landing in memory behind a directory (10.08 us +
// the directory) would miss the ack by the memory latency.
func TestStoreDoneAtTheStreamsAck(t *testing.T) {
	for _, c := range []struct {
		name     string
		dir      sim.Duration
		uncached bool
	}{
		{"dir", 40 * sim.Nanosecond, false}, {"dir-uncached", 40 * sim.Nanosecond, true},
		{"no-dir", 0, false}, {"no-dir-uncached", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, m, g, ack := ackTestGPU(c.dir)
			flag := m.AllocData(mem.Host, 8, "flag")
			if c.uncached {
				g.SetUncached(flag, 8)
			}
			var left, released sim.Time
			var atRelease uint64
			op, _ := g.DispatchOp(Kernel{Name: "flag", WGs: 1, WGSize: 64, Body: func(wg *WG) {
				wg.Store64(flag, 7)
				left = wg.Now() // the store has left the L1
				wg.Release(System)
				released, atRelease = wg.Now(), m.Load64(flag)
			}})
			g.Submit(op)
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if got := released - left; got != ack {
				t.Errorf("release waited %v for the store, want its ack %v (the stream's: writeAck)", got, ack)
			}
			if atRelease != 7 {
				t.Errorf("memory holds %d when the release returns (a coherent read issued then samples it no earlier), want 7", atRelease)
			}
		})
	}
}

// ackTestGPU builds a slow (10 MHz) APU-mode GPU without launch or teardown
// costs, behind a directory of latency dir when dir > 0, and returns the
// time a write past its L2 takes to be acknowledged: the directory's
// L2 + lookup, or one GPU miss without a directory.
func ackTestGPU(dir sim.Duration) (*sim.Engine, *mem.Memory, *GPU, sim.Duration) {
	spec := testSpec("apu")
	spec.Freq, spec.Teardown, spec.Launch = 10e6, 0, 0
	e := sim.New(1)
	m := mem.New("node[0].mem", true)
	g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
	if dir > 0 {
		g.UseDirectory(dir)
	}
	ack := g.MissLatency()
	if dir > 0 {
		ack = spec.Cycles(spec.L2Cycles) + dir
	}
	return e, m, g, ack
}
