package nbc

import (
	"math/bits"
	"reflect"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
)

// taskScenario is a remote-task ring on n nodes.
type taskScenario struct {
	name     string
	mode     xtq.Mode
	n        int
	chunk    uint64
	perRound bool // receive resources re-posted and synced every round
	late     sim.Duration
	// pairs: a partner of its own per step (i xor 2^s), arrivals counted
	// per step (TaskSetup.StepSignals); n a power of two.
	pairs bool
}

// runTaskRing runs s over the remote-task transport with Wait's step form,
// or with coroutines set its blocking form.
func runTaskRing(t *testing.T, s taskScenario, coroutines bool) ringRun {
	t.Helper()
	e := sim.New(1)
	cl, err := cluster.New(e, cluster.XTQ(), s.n, true)
	if err != nil {
		t.Fatal(err)
	}
	var r ringRun
	e.SetTracer(&r.spans)
	r.ends = make([]sim.Time, s.n)
	code := gpu.KernelCode{Name: "add", Body: func(wg *gpu.WG, kernarg mem.Addr) {
		a := wg.LoadArgs(kernarg, 4)
		wg.VALU(int(a[3] / 256))
		wg.Stream(a[3])
	}}
	for i, nd := range cl.Nodes {
		nd.CPU.Spawn("app", func(th *cpu.Thread) {
			rt, err := xtq.New(th, nd.NIC, nd.GPU, i, s.n, s.mode, cost.Default())
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := rt.TaskingInit(7, 16); err != nil {
				t.Error(err)
				return
			}
			m := th.CPU().Mem()
			base := m.Alloc(mem.Host, uint64(s.n)*s.chunk, "vec")
			sig := rt.NewSignal("sig", uint64(s.n-1))
			tasks := s.n - 1
			var sigs []mem.Addr
			if s.pairs { // kernel 3+step, a signal per step
				tasks = bits.Len(uint(s.n)) - 1
				for st := range tasks {
					sigs = append(sigs, rt.NewSignal("sig", 1))
					if _, err := rt.RegisterKernel(3+uint64(st), code, base, sigs[st]); err != nil {
						t.Error(err)
						return
					}
				}
			} else if _, err := rt.RegisterKernel(3, code, base, sig); err != nil {
				t.Error(err)
				return
			}
			recvLen := xtq.Task{Args: make([]uint64, 4)}.CmdLen() + s.chunk
			if !s.perRound {
				recvLen *= uint64(tasks)
			}
			recv := m.Alloc(mem.Host, recvLen, "recv")
			if !s.perRound {
				rt.PostBuffer(recv, recvLen)
			}
			rt.Expose(base, uint64(s.n)*s.chunk)
			rt.Barrier()
			if i%2 == 1 {
				th.Sleep(s.late)
			}
			var tr Transport = OverTasks(rt, TaskSetup{Kernel: 3, Queue: 7, Recv: recv, RecvLen: recvLen, Signal: sig,
				Tasks: uint64(s.n - 1), StepInstr: 300, Grid: func(uint64) (int, int) { return 256, 64 }, StepSignals: sigs})
			if coroutines {
				tr = coroutineTasks{tr.(TaskTransport), tr.(Stepper)}
			}
			sched := taskRing(s, i, base)
			if s.pairs {
				sched = taskPairs(s, i, base)
			}
			if err := Start(tr, nil, sched).Wait(); err != nil {
				t.Error(err)
			}
			r.ends[i] = th.Now()
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	r.events, r.now = e.Events(), e.Now()
	for _, nd := range cl.Nodes {
		r.cores = append(r.cores, nd.CPU.CoreStats())
		r.instr = append(r.instr, nd.CPU.Instructions())
	}
	return r
}

// coroutineTasks hides the step forms of a remote-task transport.
type coroutineTasks struct {
	TaskTransport
	Stepper
}

// taskRing is the remote-task ring of the XTQ allreduce: the
// resource-ready sync (once, or every round with a re-post), reduce
// tasks to the right with a wait for the node's own, then plain puts.
func taskRing(s taskScenario, i int, base mem.Addr) Schedule {
	n := s.n
	right, left := (i+1)%n, (i+n-1)%n
	var sched Schedule
	for st := range n - 1 {
		if s.perRound {
			sched = append(sched, Round{{Kind: TaskPost, Peer: left, Step: st}, {Kind: Send, Peer: left, Step: st}, {Kind: Recv, Peer: right, Step: st}})
		} else if st == 0 {
			sched = append(sched, Round{{Kind: Send, Peer: left, Step: st}, {Kind: Recv, Peer: right, Step: st}})
		}
		k := (i - st + n) % n
		off := uint64(k) * s.chunk
		sched = append(sched, Round{
			{Kind: XtqPut, Peer: right, Chunk: k, Step: st, Addr: base + mem.Addr(off), Len: s.chunk, Offset: off},
			{Kind: TaskWait, Peer: left, Step: st},
		})
	}
	for st := range n - 1 {
		k := (i + 1 - st + n) % n
		off := uint64(k) * s.chunk
		sched = append(sched, Round{
			{Kind: Send, Peer: right, Step: n - 1 + st, Addr: base + mem.Addr(off), Len: s.chunk, Offset: off},
			{Kind: Recv, Peer: left, Step: n - 1 + st, Len: s.chunk},
		})
	}
	return sched
}

// taskPairs is a schedule whose partner changes every step, as the rhd
// allreduce's: the resource-ready syncs with every partner (once, or per
// step with a re-post), a reduce task to partner i xor 2^st with a wait
// for the node's own task of that step, then plain puts to the same
// partners in reverse order.
func taskPairs(s taskScenario, i int, base mem.Addr) Schedule {
	m := bits.Len(uint(s.n)) - 1
	var sched Schedule
	var first Round
	for st := range m {
		peer := i ^ 1<<st
		sync := Round{{Kind: Send, Peer: peer, Step: st}, {Kind: Recv, Peer: peer, Step: st}}
		if s.perRound {
			sched = append(sched, append(Round{{Kind: TaskPost, Peer: peer, Step: st}}, sync...))
		} else {
			first = append(first, sync...)
		}
		off := uint64(st) * s.chunk
		task := Round{{Kind: XtqPut, Peer: peer, Step: st, Addr: base + mem.Addr(off), Len: s.chunk, Offset: off}, {Kind: TaskWait, Peer: peer, Step: st}}
		sched = append(sched, task)
	}
	if !s.perRound {
		sched = append(Schedule{first}, sched...)
	}
	for j := range m {
		st := m + j
		peer := i ^ 1<<(m-1-j)
		off := uint64(st%s.n) * s.chunk
		sched = append(sched, Round{
			{Kind: Send, Peer: peer, Step: st, Addr: base + mem.Addr(off), Len: s.chunk, Offset: off},
			{Kind: Recv, Peer: peer, Step: st, Len: s.chunk},
		})
	}
	return sched
}

// Wait over the remote-task transport as steps gives what the coroutine
// loop gives: the same finish times, event count, core accounting,
// instruction counts and spans, under XTQ and HSA, with receive resources
// posted once or every round, and nodes out of step.
func TestTaskWaitStepsMatchCoroutine(t *testing.T) {
	for _, s := range []taskScenario{
		{name: "XTQ, posted once", mode: xtq.XTQ, n: 4, chunk: 16 << 10},
		{name: "XTQ, every round, late", mode: xtq.XTQ, n: 3, chunk: 40 << 10, perRound: true, late: 20 * sim.Microsecond},
		{name: "HSA, posted once, late", mode: xtq.HSA, n: 4, chunk: 8 << 10, late: 7 * sim.Microsecond},
		{name: "HSA, every round", mode: xtq.HSA, n: 3, chunk: 64 << 10, perRound: true},
		{name: "XTQ, per step, late", mode: xtq.XTQ, n: 8, chunk: 16 << 10, late: 9 * sim.Microsecond, pairs: true},
		{name: "XTQ, per step, every round", mode: xtq.XTQ, n: 4, chunk: 32 << 10, perRound: true, pairs: true},
		{name: "HSA, per step, late", mode: xtq.HSA, n: 8, chunk: 8 << 10, late: 5 * sim.Microsecond, pairs: true},
	} {
		t.Run(s.name, func(t *testing.T) {
			want := runTaskRing(t, s, true)
			got := runTaskRing(t, s, false)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("steps differ from the coroutine loop:\nsteps      ends %v events %d end %v\ncoroutines ends %v events %d end %v",
					got.ends, got.events, got.now, want.ends, want.events, want.now)
				for i := range min(len(got.spans), len(want.spans)) {
					if got.spans[i] != want.spans[i] {
						t.Errorf("first differing span %d: %s, want %s", i, got.spans[i], want.spans[i])
						break
					}
				}
			}
			if len(got.spans) == 0 || got.now == 0 {
				t.Errorf("the ring did not run (%d spans, end %v)", len(got.spans), got.now)
			}
		})
	}
}
