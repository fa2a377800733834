package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func testSpec(mode string) Spec {
	return Spec{Mode: mode, CUs: 2, SIMDs: 4, WavesPerSIMD: 2, WaveSize: 64, Freq: 1e9, LDSPerCU: 64 * unit.KiB,
		MaxWGSize: 1024, Launch: 1500 * sim.Nanosecond, Teardown: 1500 * sim.Nanosecond, DispatchCycles: 100,
		L1Lines: 4, L1Cycles: 12, L2Cycles: 100, L1InvCycles: 16, L2InvCycles: 500, MemLatency: 80 * sim.Nanosecond,
		MemBandwidth: 100e9, ScalarCycles: 4}
}

func newGPU(mode string) (*sim.Engine, *GPU) {
	e := sim.New(1)
	m := mem.New("node[0].mem", true)
	return e, New(e, "node[0].gpu", testSpec(mode), m, mem.NewServer(100e9))
}

// A flag written by another agent (the NIC) while a kernel polls it: with a
// system-scope acquire the poller sees it; without, its L1 keeps the stale
// line and it spins until the run deadlocks.
func TestPollingWithoutAcquireReadsStaleData(t *testing.T) {
	for _, mode := range []string{"apu", "dgpu"} {
		for _, acquire := range []bool{true, false} {
			e, g := newGPU(mode)
			flag := g.Mem().AllocData(mem.GPU, 8, "flag")
			var seen sim.Time
			op, _ := g.DispatchOp(Kernel{Name: "poll", WGs: 1, WGSize: 64, Body: func(wg *WG) {
				wg.PollUntil(flag, acquire, "flag", func(v uint64) bool { return v == 7 })
				seen = wg.Now()
			}})
			g.Submit(op)
			e.At(10*sim.Microsecond, func() { g.Mem().Store64(flag, 7) })
			err := e.Run()
			var dl *sim.DeadlockError
			switch {
			case acquire && (err != nil || seen < 10*sim.Microsecond):
				t.Errorf("%s with acquire: err=%v seen=%v, want the flag seen after 10us", mode, err, seen)
			case !acquire && !errors.As(err, &dl):
				t.Errorf("%s without acquire: err=%v, want a deadlock (stale L1)", mode, err)
			case !acquire && !strings.Contains(err.Error(), "wg[0]: waits on flag"):
				t.Errorf("%s: deadlock report %q does not name the poller", mode, err)
			}
		}
	}
}

func TestKernelTimelineAndResidency(t *testing.T) {
	e, g := newGPU("apu")
	// 2 CUs × 8 wave slots; WGs of 256 items = 4 waves → 4 resident at once.
	const wgs = 8
	var ends []sim.Time
	op, run := g.DispatchOp(Kernel{Name: "k", WGs: wgs, WGSize: 256, Body: func(wg *WG) {
		wg.VALU(1000) // 4000 cycles per wave, one wave per SIMD → 4us
		ends = append(ends, wg.Now())
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := g.MaxResident(run.Kernel); got != 4 {
		t.Fatalf("MaxResident = %d, want 4", got)
	}
	if len(ends) != wgs || !run.Finished() || g.Mem().Load64(run.Signal) != 1 {
		t.Fatalf("ran %d WGs, finished=%v", len(ends), run.Finished())
	}
	// Launch = packet read (80ns) + 1.5us; the second wave of WGs must wait for the first.
	if run.BodyStart != 1580*sim.Nanosecond {
		t.Errorf("body start = %v, want 1.58us", run.BodyStart)
	}
	if span := run.BodyEnd - run.BodyStart; span < 8*sim.Microsecond {
		t.Errorf("body took %v; 8 WGs of 4us with 4 resident need ≥ 8us", span)
	}
	if run.Done-run.BodyEnd != 1500*sim.Nanosecond {
		t.Errorf("teardown = %v, want 1.5us", run.Done-run.BodyEnd)
	}
}

func TestValidateRejectsImpossibleKernels(t *testing.T) {
	_, g := newGPU("apu")
	for _, k := range []Kernel{
		{Name: "nowg", WGs: 0, WGSize: 64},
		{Name: "huge", WGs: 1, WGSize: 4096},
		{Name: "lds", WGs: 1, WGSize: 64, LDS: 128 * unit.KiB},
	} {
		if err := g.Validate(k); err == nil {
			t.Errorf("kernel %s accepted", k.Name)
		}
	}
}

// A dGPU store stays in a dirty L2 line until a system release; the
// write-back carries only the bytes written, so bulk data that reached
// memory in the same line meanwhile survives.
func TestDGPUWriteBackIsByteMasked(t *testing.T) {
	e, g := newGPU("dgpu")
	m := g.Mem()
	buf := m.AllocData(mem.GPU, 64, "line")
	var beforeRelease, afterRelease uint64
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		wg.Store64(buf+56, 42)
		m.Store64(buf, 7) // another agent writes the start of the line in memory
		beforeRelease = m.Load64(buf + 56)
		wg.Release(System)
		afterRelease = m.Load64(buf + 56)
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if beforeRelease != 0 || afterRelease != 42 {
		t.Fatalf("memory word before/after release = %d/%d, want 0/42", beforeRelease, afterRelease)
	}
	if m.Load64(buf) != 7 {
		t.Fatalf("the write-back clobbered bytes it did not write: %d", m.Load64(buf))
	}
}

// A write that lands while an acquiring poll's load is in flight (after
// the load took its value, before it returned) is seen by the next poll:
// whatever the write time, the poller finishes.
func TestAcquiringPollSeesWriteDuringItsLoad(t *testing.T) {
	for _, mode := range []string{"apu", "dgpu"} {
		for at := sim.Microsecond; at < 4*sim.Microsecond; at += 10 * sim.Nanosecond {
			e, g := newGPU(mode)
			flag := g.Mem().AllocData(mem.GPU, 8, "flag")
			op, _ := g.DispatchOp(Kernel{Name: "poll", WGs: 1, WGSize: 64, Body: func(wg *WG) {
				wg.PollUntil(flag, true, "flag", func(v uint64) bool { return v == 7 })
			}})
			g.Submit(op)
			e.At(at, func() { g.Mem().Store64(flag, 7) })
			if err := e.Run(); err != nil {
				t.Fatalf("%s, write at %v: %v", mode, at, err)
			}
		}
	}
}
