package nbc

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"pgregory.net/rapid"
)

// coroutineForm hides the step forms of a transport: Wait runs its
// blocking progress loop, the reference the step form is compared with.
type coroutineForm struct {
	Transport
	Stepper
}

// spanLog records every trace span, in order.
type spanLog []string

func (l *spanLog) Span(track, name string, start, end sim.Time) {
	*l = append(*l, fmt.Sprintf("%s %s %d %d", track, name, start, end))
}

// ringRun is what a run of a scenario shows.
type ringRun struct {
	ends   []sim.Time
	events uint64
	now    sim.Time
	mpi    []mpi.Stats
	cores  [][]cpu.CoreStats
	instr  []uint64
	spans  spanLog
}

// ringScenario is a ring allreduce-like schedule on n ranks with the
// knobs that change how the progress loop waits.
type ringScenario struct {
	name    string
	n       int
	chunk   uint64       // bytes per message: eager up to mpi.eager_max, rendezvous above
	wait    string       // sw.mpi_wait
	slice   sim.Duration // cpu.time_slice (0: default)
	cores   int          // cpu.cores (0: default)
	busy    sim.Duration // a thread on the rank's core running this long (core sharing)
	late    sim.Duration // odd ranks start this late (unexpected messages)
	threads int          // threads of the local reduction (a parallel region)
	// coroutineLocal keeps the local ops blocking: Wait's step form hands
	// them back to the coroutine.
	coroutineLocal bool
}

// computeSteps runs the local ops as steps: the reduction's region.
type computeSteps struct {
	th      *cpu.Thread
	threads int
}

func (c computeSteps) BeginLocal(op Op) bool {
	c.th.BeginCompute(3*op.Len, c.threads)
	return true
}
func (c computeSteps) TryLocal() bool { return c.th.Try() }

// testReporter is what runRing needs of a *testing.T or a *rapid.T.
type testReporter interface {
	Helper()
	Error(args ...any)
	Fatal(args ...any)
}

// runRing runs s with Wait's step form, or with coroutines set its
// blocking form.
func runRing(t testReporter, s ringScenario, coroutines bool) ringRun {
	t.Helper()
	e := sim.New(1)
	spec := cluster.GPUTN()
	if s.slice > 0 {
		spec.CPU.TimeSlice = s.slice
	}
	if s.cores > 0 {
		spec.CPU.Cores = s.cores
	}
	cl, err := cluster.New(e, spec, s.n, true)
	if err != nil {
		t.Fatal(err)
	}
	var r ringRun
	e.SetTracer(&r.spans)
	r.ends = make([]sim.Time, s.n)
	r.mpi = make([]mpi.Stats, s.n)
	sw := cost.Default()
	sw.MPIWait = s.wait
	for i, nd := range cl.Nodes {
		if s.busy > 0 {
			if _, err := nd.CPU.SpawnOn(0, "busy", func(th *cpu.Thread) { th.Sleep(s.busy) }); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := nd.CPU.SpawnOn(0, "rank", func(th *cpu.Thread) {
			c, err := mpi.Init(th, nd.NIC, i, s.n, mpi.DefaultSpec(), sw)
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 1 {
				th.Sleep(s.late)
			}
			var tr Transport = OverMPI(c)
			if coroutines {
				tr = coroutineForm{tr, tr.(Stepper)}
			}
			m := th.CPU().Mem()
			base := m.Alloc(mem.Host, 2*uint64(s.n)*s.chunk, "ring")
			local := func(op Op) { th.Compute(3*op.Len, s.threads) }
			h := Start(tr, local, ringSchedule(s, i, base))
			if !s.coroutineLocal {
				h.WithLocalSteps(computeSteps{th, s.threads})
			}
			if err := h.Wait(); err != nil {
				t.Error(err)
			}
			r.ends[i], r.mpi[i] = th.Now(), c.Stats()
		}); err != nil {
			t.Fatal(err)
		}
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

// ringSchedule is a ring: 2(n-1) rounds of a send right and a receive
// from the left, a reduction in the first half, and a round of a local
// copy only in the middle.
func ringSchedule(s ringScenario, i int, base mem.Addr) Schedule {
	var sched Schedule
	for st := range 2 * (s.n - 1) {
		recv := base + mem.Addr(uint64(s.n+st%s.n)*s.chunk)
		round := Round{
			{Kind: Send, Peer: (i + 1) % s.n, Step: st, Addr: base + mem.Addr(uint64(st%s.n)*s.chunk), Len: s.chunk},
			{Kind: Recv, Peer: (i + s.n - 1) % s.n, Step: st, Addr: recv, Len: s.chunk},
		}
		if st < s.n-1 {
			round = append(round, Op{Kind: Reduce, Step: st, Addr: base, Src: recv, Len: s.chunk})
		}
		sched = append(sched, round)
		if st == s.n-1 {
			sched = append(sched, Round{{Kind: Copy, Step: st, Addr: base, Src: recv, Len: s.chunk}})
		}
	}
	return sched
}

// Wait over MPI as steps (sim.Proc.RunSteps) gives what the coroutine
// loop gives: the same finish times, event count, protocol counters, core
// accounting and spans, with eager and rendezvous messages, expected and
// unexpected, polling and blocking waits, and a rank sharing its core
// with a busy thread under short time slices (preemption mid-wait).
func TestWaitStepsMatchCoroutine(t *testing.T) {
	for _, s := range []ringScenario{
		{name: "eager, poll", n: 4, chunk: 4 << 10, wait: cost.WaitPoll, threads: 1},
		{name: "rendezvous, poll, team reductions", n: 5, chunk: 64 << 10, wait: cost.WaitPoll, threads: 4},
		{name: "reductions in the coroutine", n: 4, chunk: 64 << 10, wait: cost.WaitPoll, threads: 4, coroutineLocal: true},
		{name: "team outnumbers the cores", n: 3, chunk: 64 << 10, wait: cost.WaitPoll, cores: 2, slice: 3 * sim.Microsecond, threads: 5},
		{name: "eager, block, unexpected", n: 4, chunk: 8 << 10, wait: cost.WaitBlock, late: 30 * sim.Microsecond, threads: 2},
		{name: "rendezvous, unexpected, block", n: 3, chunk: 100 << 10, wait: cost.WaitBlock, late: 50 * sim.Microsecond, threads: 1},
		{name: "shared core, 2us slices, poll", n: 4, chunk: 16 << 10, wait: cost.WaitPoll, slice: 2 * sim.Microsecond,
			busy: 300 * sim.Microsecond, late: 5 * sim.Microsecond, threads: 3},
		{name: "shared core, one core, block", n: 3, chunk: 48 << 10, wait: cost.WaitBlock, slice: 3 * sim.Microsecond, cores: 1,
			busy: 200 * sim.Microsecond, threads: 2},
	} {
		t.Run(s.name, func(t *testing.T) {
			want := runRing(t, s, true)
			got := runRing(t, s, false)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("steps differ from the coroutine loop:\nsteps      ends %v events %d end %v mpi %+v\ncoroutines ends %v events %d end %v mpi %+v",
					got.ends, got.events, got.now, got.mpi, want.ends, want.events, want.now, want.mpi)
				for i := range min(len(got.spans), len(want.spans)) {
					if got.spans[i] != want.spans[i] {
						t.Errorf("first differing span %d: %s, want %s", i, got.spans[i], want.spans[i])
						break
					}
				}
			}
			var polls, unexpected, switches uint64
			for i, st := range got.mpi {
				polls += st.Polls
				unexpected += st.Unexpected
				for _, k := range got.cores[i] {
					switches += k.Switches
				}
			}
			if polls == 0 || len(got.spans) == 0 {
				t.Errorf("no polls (%d) or no spans (%d): the scenario does not exercise the progress loop", polls, len(got.spans))
			}
			if s.late > 0 && unexpected == 0 {
				t.Error("no unexpected messages")
			}
			if s.busy > 0 && switches < 10 {
				t.Errorf("%d context switches: the scenario does not share the core", switches)
			}
		})
	}
}

// The same over random scenarios: ring sizes, message sizes about the
// eager limit, wait modes, time slices, core counts, a busy thread on the
// rank's core, late ranks and region sizes.
func TestWaitStepsMatchCoroutineRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		us := func(name string, hi int) sim.Duration {
			return sim.Duration(rapid.IntRange(0, hi).Draw(rt, name)) * sim.Microsecond
		}
		s := ringScenario{
			n:              rapid.IntRange(2, 5).Draw(rt, "n"),
			chunk:          rapid.SampledFrom([]uint64{0, 1 << 10, 32 << 10, 32<<10 + 4, 96 << 10}).Draw(rt, "chunk"),
			wait:           rapid.SampledFrom([]string{cost.WaitPoll, cost.WaitBlock}).Draw(rt, "wait"),
			slice:          us("slice", 5),
			cores:          rapid.IntRange(0, 3).Draw(rt, "cores"),
			busy:           us("busy", 300),
			late:           us("late", 60),
			threads:        rapid.IntRange(1, 6).Draw(rt, "threads"),
			coroutineLocal: rapid.Bool().Draw(rt, "coroutineLocal"),
		}
		want := runRing(rt, s, true)
		got := runRing(rt, s, false)
		if !reflect.DeepEqual(got, want) {
			rt.Fatalf("steps: ends %v events %d mpi %+v\ncoroutines: ends %v events %d mpi %+v",
				got.ends, got.events, got.mpi, want.ends, want.events, want.mpi)
		}
	})
}
