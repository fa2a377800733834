package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// stepsLayout is the memory of the equivalence kernel.
type stepsLayout struct {
	flags, out, unc mem.Addr
	log             *[]string
}

// bodyForm is the equivalence kernel as a coroutine body: poll a flag set
// by another agent, store, release at system scope, compute, stream, load
// back what it stored, store it to an L2-uncacheable page.
func (l stepsLayout) bodyForm(wg *WG) {
	id := uint64(wg.ID)
	v := wg.PollUntil(l.flags+mem.Addr(8*(id%2)), true, "flag", func(v uint64) bool { return v >= 2 })
	wg.Store64(l.out+mem.Addr(8*id), v+id)
	wg.Release(System)
	wg.VALU(50)
	wg.Stream(4096)
	x := wg.Load64(l.out + mem.Addr(8*id))
	wg.Store64(l.unc+mem.Addr(8*id), x)
	*l.log = append(*l.log, fmt.Sprintf("wg%d %v x=%d", id, wg.Now(), x))
}

// stepsForm is bodyForm as a StepBody.
type stepsForm struct {
	l    stepsLayout
	pc   int
	v, x uint64
}

func (s *stepsForm) Step(wg *WG) bool {
	l, id := s.l, uint64(wg.ID)
	switch s.pc {
	case 0:
		v, ok := wg.TryPollUntil(l.flags+mem.Addr(8*(id%2)), true, "flag", func(v uint64) bool { return v >= 2 })
		if ok {
			s.v, s.pc = v, 1
		}
	case 1:
		if wg.TryStore64(l.out+mem.Addr(8*id), s.v+id) {
			s.pc = 2
		}
	case 2:
		if wg.TryRelease(System) {
			s.pc = 3
		}
	case 3:
		s.pc = 4
		wg.VALU(50)
	case 4:
		s.pc = 5
		wg.Stream(4096)
	case 5:
		if x, ok := wg.tryLoad64(l.out + mem.Addr(8*id)); ok {
			s.x, s.pc = x, 6
		}
	case 6:
		if wg.TryStore64(l.unc+mem.Addr(8*id), s.x) {
			s.pc = 7
		}
	default:
		*l.log = append(*l.log, fmt.Sprintf("wg%d %v x=%d", id, wg.Now(), s.x))
		return true
	}
	return false
}

// runStepsKernel runs six work-groups (more than fit at once) of the
// equivalence kernel in either form while callbacks set the flags, one of
// them first to a value the pollers reject.
func runStepsKernel(mode string, steps bool) string {
	out, _ := runStepsKernels(mode, steps, 1)
	return out
}

// runStepsKernels is runStepsKernel with kernels of the same work
// dispatched one after another on the GPU (the later ones find their
// flags set), and returns the GPU too.
func runStepsKernels(mode string, steps bool, kernels int) (string, *GPU) {
	e, g := newGPU(mode)
	m := g.Mem()
	var log []string
	l := stepsLayout{flags: m.AllocData(mem.GPU, 16, "flags"), out: m.AllocData(mem.GPU, 64, "out"),
		unc: m.AllocData(mem.GPU, 4096, "unc"), log: &log}
	g.SetUncached(l.unc, 4096)
	k := Kernel{Name: "k", WGs: 6, WGSize: 256}
	if steps {
		k.Steps = func(*WG) StepBody { return &stepsForm{l: l} }
	} else {
		k.Body = l.bodyForm
	}
	var run *Run
	for range kernels {
		var op Op
		op, run = g.DispatchOp(k)
		g.Submit(op)
	}
	e.At(3*sim.Microsecond, func() { m.Store64(l.flags, 2) })
	e.At(4*sim.Microsecond, func() { m.Store64(l.flags+8, 1) })
	e.At(9*sim.Microsecond, func() { m.Store64(l.flags+8, 5) })
	if err := e.Run(); err != nil {
		return err.Error(), g
	}
	var mem6 []uint64
	for i := range 6 {
		mem6 = append(mem6, m.Load64(l.unc+mem.Addr(8*i)))
	}
	return fmt.Sprintf("%s\nend %v done %v events %d stats %+v unc %v", strings.Join(log, "\n"), e.Now(), run.Done, e.Events(), g.Stats(), mem6), g
}

// Step work-groups and dispatches reuse their state from kernel to
// kernel: three kernels of six work-groups (four fit at once) give what
// coroutine bodies give, and the GPU kept no more work-group states than
// were resident at once and one dispatch state.
func TestStepWorkGroupsReused(t *testing.T) {
	for _, mode := range []string{"apu", "dgpu"} {
		want, _ := runStepsKernels(mode, false, 3)
		got, g := runStepsKernels(mode, true, 3)
		if got != want {
			t.Errorf("%s: steps\n%s\nbody\n%s", mode, got, want)
		}
		if strings.Count(want, "wg5") != 3 {
			t.Errorf("%s: the kernels did not run through:\n%s", mode, want)
		}
		resident := g.MaxResident(Kernel{WGs: 6, WGSize: 256})
		if n := g.freeWGs.Len(); n == 0 || n > resident || g.freeRuns.Len() != 1 {
			t.Errorf("%s: %d work-group states (resident at most %d), %d dispatch states kept; want 1..%d and 1", mode, n, resident, g.freeRuns.Len(), resident)
		}
	}
}

// A kernel whose work-groups run as steps gives the times, event count,
// statistics and memory contents of the same kernel as coroutine bodies,
// in APU and dGPU mode.
func TestStepsMatchBody(t *testing.T) {
	for _, mode := range []string{"apu", "dgpu"} {
		want := runStepsKernel(mode, false)
		got := runStepsKernel(mode, true)
		if got != want {
			t.Errorf("%s: steps\n%s\nbody\n%s", mode, got, want)
		}
		if !strings.Contains(want, "wg5") || !strings.Contains(want, "x=10") || strings.Contains(want, "deadlock") {
			t.Errorf("%s: the kernel did not run through:\n%s", mode, want)
		}
	}
}

// A blocking operation called inside a step body would run its
// continuation before its wait is over: it panics.
func TestBlockingOpInStepPanics(t *testing.T) {
	e, g := newGPU("apu")
	a := g.Mem().AllocData(mem.GPU, 8, "w")
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Steps: func(*WG) StepBody { return storeOnce{a} }})
	g.Submit(op)
	err := e.Run()
	if err == nil || !strings.Contains(err.Error(), "Store64 in a step body") {
		t.Fatalf("err = %v, want the Store64 misuse reported", err)
	}
	e.Close()
}

type storeOnce struct{ a mem.Addr }

func (s storeOnce) Step(wg *WG) bool { wg.Store64(s.a, 1); return true }
