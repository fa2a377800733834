package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestEventsRunInTimeThenScheduleOrder(t *testing.T) {
	e := New(1)
	var got []string
	e.At(30, func() { got = append(got, "c") })
	e.At(10, func() { got = append(got, "a1") })
	e.At(10, func() { got = append(got, "a2") })
	e.At(20, func() {
		got = append(got, "b")
		e.After(0, func() { got = append(got, "b-now") })
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := "a1 a2 b b-now c"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("order = %q, want %q", s, want)
	}
	if e.Now() != 30 || e.Events() != 5 {
		t.Fatalf("now=%v events=%d, want 30ps and 5", e.Now(), e.Events())
	}
}

func TestSchedulingIntoThePastPanics(t *testing.T) {
	e := New(1)
	e.At(10, func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic for an event in the past")
			}
		}()
		e.At(5, func() {})
	})
	_ = e.Run()
}

// Property: whatever times events are scheduled at, they pop in
// nondecreasing time, FIFO among equal times.
func TestQueueOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		times := rapid.SliceOf(rapid.Int64Range(0, 50)).Draw(t, "times")
		e := New(1)
		type rec struct {
			t   Time
			idx int
		}
		var got []rec
		for i, tm := range times {
			e.At(Time(tm), func() { got = append(got, rec{Time(tm), i}) })
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(times) {
			t.Fatalf("ran %d of %d events", len(got), len(times))
		}
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			if a.t > b.t || (a.t == b.t && a.idx > b.idx) {
				t.Fatalf("event %v ran before %v", a, b)
			}
		}
	})
}

func TestProcessSleepAndJoin(t *testing.T) {
	e := New(1)
	var log []string
	worker := e.Spawn("worker", func(p *Proc) {
		p.Sleep(5 * Nanosecond)
		log = append(log, "worker@"+p.Now().String())
	})
	e.Spawn("main", func(p *Proc) {
		p.Join(worker)
		log = append(log, "main@"+p.Now().String())
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(log, " "); s != "worker@5ns main@5ns" {
		t.Fatalf("log = %q", s)
	}
	if e.Live() != 0 {
		t.Fatalf("%d processes still live", e.Live())
	}
}

func TestWaitUntilAndCounter(t *testing.T) {
	e := New(1)
	var c Counter
	var woke Time
	e.Spawn("waiter", func(p *Proc) {
		c.WaitAtLeast(p, 3, "counter≥3")
		woke = p.Now()
	})
	for i := 1; i <= 3; i++ {
		e.At(Time(i)*Microsecond, func() { c.Add(1) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if woke != 3*Microsecond {
		t.Fatalf("woke at %v, want 3us", woke)
	}
}

func TestDeadlockReportListsEveryBlockedProcess(t *testing.T) {
	e := New(1)
	var never Signal
	var flag bool
	e.Spawn("gpu.wg[0]", func(p *Proc) { p.WaitUntil(&never, "flag at 0x100", func() bool { return flag }) })
	e.Spawn("host.thread[1]", func(p *Proc) { p.Sleep(Nanosecond); p.Wait(&never, "completion queue") })
	d := e.Spawn("service", func(p *Proc) { p.Wait(&never, "requests") })
	d.SetDaemon()
	err := e.Run()
	var dl *DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	if len(dl.Blocked) != 2 {
		t.Fatalf("blocked = %+v, want the two non-daemon processes", dl.Blocked)
	}
	msg := err.Error()
	for _, want := range []string{"gpu.wg[0]: waits on flag at 0x100", "host.thread[1]: waits on completion queue (since 1ns)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("report %q lacks %q", msg, want)
		}
	}
}

// The deadlock report's first line says who waits on what, the waits
// grouped, most common first (what a user reads on the terminal).
func TestDeadlockReportFirstLineGroupsWaits(t *testing.T) {
	e := New(1)
	var never Signal
	for i := range 3 {
		e.Spawn(fmt.Sprintf("wg[%d]", i), func(p *Proc) { p.Wait(&never, "flag step 5") })
	}
	e.Spawn("app", func(p *Proc) { p.Sleep(Nanosecond); p.Wait(&never, "kernel completion") })
	for i := range 4 {
		e.Spawn(fmt.Sprintf("x[%d]", i), func(p *Proc) { p.Wait(&never, fmt.Sprintf("other %d", i)) })
	}
	first, _, _ := strings.Cut(e.Run().Error(), "\n")
	want := "deadlock at 1ns: 8 process(es) blocked with no pending event: 3 wait on flag step 5 (wg[0], ...); app waits on kernel completion; x[0] waits on other 0; and 3 other wait(s)"
	if first != want {
		t.Errorf("first line\n%q, want\n%q", first, want)
	}
}

func TestPanicInProcessNamesItAndCarriesStack(t *testing.T) {
	e := New(1)
	e.Spawn("victim", func(p *Proc) {
		p.Sleep(Nanosecond)
		var m map[string]int
		m["x"] = 1
	})
	e.Spawn("bystander", func(p *Proc) { p.Sleep(Second) })
	err := e.Run()
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a panic error", err)
	}
	if pe.Proc != "victim" || pe.At != Nanosecond || !strings.Contains(pe.Stack, "engine_test.go") {
		t.Fatalf("panic error = %v at %v, stack:\n%s", pe.Proc, pe.At, pe.Stack)
	}
}

func TestStreamsAreDeterministicAndIndependent(t *testing.T) {
	a1, a2 := New(7).Stream("node[1].nic"), New(7).Stream("node[1].nic")
	b := New(7).Stream("node[2].nic")
	c := New(8).Stream("node[1].nic")
	same, diffB, diffC := true, false, false
	for range 16 {
		x, y := a1.Uint64(), a2.Uint64()
		same = same && x == y
		diffB = diffB || x != b.Uint64()
		diffC = diffC || x != c.Uint64()
	}
	if !same || !diffB || !diffC {
		t.Fatalf("same=%v diffByName=%v diffBySeed=%v", same, diffB, diffC)
	}
}

// Two runs of one randomized process system give identical histories.
func TestRunsAreDeterministic(t *testing.T) {
	run := func() (Time, uint64) {
		e := New(42)
		var sig Signal
		for i := range 50 {
			e.Spawn("p", func(p *Proc) {
				r := e.Stream("p" + string(rune('a'+i%26)))
				for range 20 {
					p.Sleep(Time(r.IntN(100)))
					sig.Notify()
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return e.Now(), e.Events()
	}
	t1, n1 := run()
	t2, n2 := run()
	if t1 != t2 || n1 != n2 {
		t.Fatalf("run 1 (%v, %d) != run 2 (%v, %d)", t1, n1, t2, n2)
	}
}

func TestStopAndCloseReleaseProcesses(t *testing.T) {
	e := New(1)
	e.Spawn("poller", func(p *Proc) {
		for {
			p.Sleep(Nanosecond)
		}
	})
	e.At(10*Nanosecond, e.Stop)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if e.Now() != 10*Nanosecond {
		t.Fatalf("stopped at %v", e.Now())
	}
	e.Close()
	if e.Live() != 0 {
		t.Fatal("Close left live processes")
	}
}

// chainRecorder appends its argument to a shared log when handled.
type chainRecorder struct {
	e   *Engine
	log *[]string
}

func (r chainRecorder) Handle(arg uint64) {
	*r.log = append(*r.log, fmt.Sprintf("%v:%d", r.e.Now(), arg))
}

// TestChainKeepsEngineOrder schedules the same random events once through
// Engine.AtH and once through two chains (in order, out of order, ties,
// events scheduled from handlers) and requires the same log and event
// count: a chain only delays when an event enters the queue.
func TestChainKeepsEngineOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type sched struct {
			at    int64
			chain int // -1: plain AtH
			then  int64
		}
		plan := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sched {
			return sched{rapid.Int64Range(0, 30).Draw(t, "at"), rapid.IntRange(-1, 1).Draw(t, "chain"), rapid.Int64Range(-1, 10).Draw(t, "then")}
		}), 1, 60).Draw(t, "plan")
		run := func(chained bool) ([]string, uint64) {
			e := New(1)
			var log []string
			var chains [2]Chain
			rec := chainRecorder{e: e, log: &log}
			at := func(t Time, c int, arg uint64) {
				if chained && c >= 0 {
					chains[c].AtH(e, t, rec, arg)
					return
				}
				e.AtH(t, rec, arg)
			}
			for i, s := range plan {
				e.At(0, func() {
					at(e.Now()+Time(s.at), s.chain, uint64(i))
					if s.then >= 0 {
						e.After(Duration(s.then), func() { at(e.Now()+Time(s.at), s.chain, uint64(100+i)) })
					}
				})
			}
			return runLogged(t, e, &log)
		}
		requireSameRuns(t, "chained", run)
	})
}

// runLogged runs e to the end and returns its event log and event count.
func runLogged(t *rapid.T, e *Engine, log *[]string) ([]string, uint64) {
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return *log, e.Events()
}

// requireSameRuns runs a schedule as the reference (subject false) and as
// the subject, and fails unless both logged the same events in the same
// order, with the same event count.
func requireSameRuns(t *rapid.T, subject string, run func(subject bool) ([]string, uint64)) {
	want, wantEvents := run(false)
	got, gotEvents := run(true)
	if !slices.Equal(got, want) || gotEvents != wantEvents {
		t.Fatalf("%s: %v (%d events)\nreference: %v (%d events)", subject, got, gotEvents, want, wantEvents)
	}
}

// TestDueFIFOKeepsHeapOrder runs random schedules (zero delays from
// handlers, ties, chains) once as usual and once with every event forced
// through the heap, and requires the same log and event count: the FIFO of
// events due now only spares heap operations.
func TestDueFIFOKeepsHeapOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type sched struct {
			at, then int64
			chain    int
		}
		plan := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sched {
			return sched{rapid.Int64Range(0, 3).Draw(t, "at"), rapid.Int64Range(-1, 2).Draw(t, "then"), rapid.IntRange(-1, 0).Draw(t, "chain")}
		}), 1, 60).Draw(t, "plan")
		run := func(heapOnly bool) ([]string, uint64) {
			e := New(1)
			var log []string
			var chain Chain
			rec := chainRecorder{e: e, log: &log}
			at := func(t Time, c int, arg uint64) {
				switch {
				case c == 0:
					chain.AtH(e, t, rec, arg)
				case heapOnly:
					e.seq++
					e.queue.push(t, e.seq, event{h: rec, arg: arg})
				default:
					e.AtH(t, rec, arg)
				}
			}
			for i, s := range plan {
				at(Time(s.at), s.chain, uint64(i))
				if s.then >= 0 {
					later := func() { at(e.Now()+Time(s.then), s.chain, uint64(100+i)) }
					if heapOnly {
						e.seq++
						e.queue.push(Time(s.at), e.seq, event{h: funcHandler(later)})
					} else {
						e.At(Time(s.at), later)
					}
				}
			}
			return runLogged(t, e, &log)
		}
		requireSameRuns(t, "with the FIFO", func(fifo bool) ([]string, uint64) { return run(!fifo) })
	})
}
