package stream

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// steps is a Program of three flag-gated kernels: per step a wait for
// flags[st] == st+1 and a kernel that records when its body starts.
type steps struct {
	flags  []mem.Addr
	starts *[]sim.Time
}

func (p steps) Len() int { return 2 * len(p.flags) }

func (p steps) Kind(i int) OpKind { return [2]OpKind{OpWaitEqual, OpKernel}[i%2] }

func (p steps) Op(i int) Op {
	st := i / 2
	if i%2 == 0 {
		return Op{Kind: OpWaitEqual, Addr: p.flags[st], Value: uint64(st + 1), What: "flag"}
	}
	return Op{Kind: OpKernel, Kernel: p.kernel()}
}

func (p steps) kernel() gpu.Kernel {
	return gpu.Kernel{Name: "k", WGs: 2, WGSize: 64, Body: func(wg *gpu.WG) {
		if wg.ID == 0 {
			*p.starts = append(*p.starts, wg.Now())
		}
		wg.VALU(50)
	}}
}

// runSteps runs the three steps, as a Program or as single calls, with
// the flags set at fixed times, and returns the kernels' body starts, when
// the host's Synchronize returned and the run's events.
func runSteps(t *testing.T, program bool) ([]sim.Time, sim.Time, uint64) {
	t.Helper()
	e := sim.New(1)
	c, err := cluster.New(e, cluster.GPUTN(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := c.Nodes[0]
	p := steps{starts: new([]sim.Time)}
	for st := range 3 {
		p.flags = append(p.flags, nd.Mem.AllocData(mem.GPU, 8, "flag"))
		e.At(sim.Time(st+1)*3*sim.Microsecond+17*sim.Nanosecond, func() { nd.Mem.Store64(p.flags[st], uint64(st+1)) })
	}
	var done sim.Time
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		s := New(th, nd.GPU, nd.NIC, cost.Default())
		if program {
			s.Enqueue(p)
		} else {
			for st := range 3 {
				want := uint64(st + 1)
				s.WaitValue(p.flags[st], "flag", func(v uint64) bool { return v == want })
				s.Launch(p.kernel())
			}
		}
		s.Synchronize()
		done = th.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return *p.starts, done, e.Events()
}

// A Program runs exactly as the same operations enqueued one by one: the
// same kernel starts, host finish and event count.
func TestProgramMatchesSingleCalls(t *testing.T) {
	progStarts, progDone, progEvents := runSteps(t, true)
	oneStarts, oneDone, oneEvents := runSteps(t, false)
	if len(progStarts) != 3 || !slices.Equal(progStarts, oneStarts) || progDone != oneDone || progEvents != oneEvents {
		t.Fatalf("program: starts %v, done %v, %d events; single calls: %v, %v, %d events",
			progStarts, progDone, progEvents, oneStarts, oneDone, oneEvents)
	}
	for st, at := range progStarts {
		if flagAt := sim.Time(st+1)*3*sim.Microsecond + 17*sim.Nanosecond; at <= flagAt {
			t.Errorf("kernel %d started at %v, before its flag (%v)", st, at, flagAt)
		}
	}
}
