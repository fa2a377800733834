package sim

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// tokenNet is a test model: n nodes in a ring, each a process that waits
// for tokens, works a random time and forwards each token to its right
// neighbour with a random wire delay of at least the lookahead. Node i
// lives on partition i·k/n.
type tokenNet struct {
	g     *Group
	n     int
	look  Duration
	nodes []*tokenNode
}

type tokenNode struct {
	net  *tokenNet
	id   int
	part int
	got  Counter
	log  []string
}

// Handle is a token's arrival.
func (nd *tokenNode) Handle(uint64) {
	nd.log = append(nd.log, fmt.Sprintf("arrive %v", nd.net.g.Engine(nd.part).Now()))
	nd.got.Add(1)
}

func newTokenNet(t *testing.T, n, k, rounds int, look Duration) *tokenNet {
	t.Helper()
	g, err := NewGroup(7, k, look)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tokenNet{g: g, n: n, look: look}
	for i := range n {
		tn.nodes = append(tn.nodes, &tokenNode{net: tn, id: i, part: i * k / n})
	}
	for _, nd := range tn.nodes {
		e := g.Engine(nd.part)
		rng := e.Stream(fmt.Sprintf("node[%d]", nd.id))
		e.Spawn(fmt.Sprintf("node[%d]", nd.id), func(p *Proc) {
			right := tn.nodes[(nd.id+1)%n]
			for r := range rounds {
				if nd.id != 0 || r > 0 {
					nd.got.WaitAtLeast(p, uint64(r+1)-boolU(nd.id == 0), "token")
				}
				p.Sleep(Duration(rng.IntN(300)))
				nd.log = append(nd.log, fmt.Sprintf("send %v", p.Now()))
				g.Post(nd.part, right.part, p.Now()+look+Duration(rng.IntN(50)), right, 0)
			}
		})
	}
	return tn
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (tn *tokenNet) logs() string {
	var b strings.Builder
	for _, nd := range tn.nodes {
		fmt.Fprintf(&b, "%d: %s\n", nd.id, strings.Join(nd.log, ", "))
	}
	return b.String()
}

// Partitioning a model whose partitions interact only through Post, with
// no two events of one partition at the same picosecond, changes nothing:
// every node sees the same times as with one partition, and the events
// are the same.
func TestGroupPartitionsMatchOnePartition(t *testing.T) {
	ref := newTokenNet(t, 12, 1, 20, 100)
	if err := ref.g.Run(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 3, 12} {
		tn := newTokenNet(t, 12, k, 20, 100)
		if err := tn.g.Run(); err != nil {
			t.Fatal(err)
		}
		if got, want := tn.logs(), ref.logs(); got != want {
			t.Fatalf("k=%d logs differ:\n%s\nwant\n%s", k, got, want)
		}
		if tn.g.Events() != ref.g.Events() || tn.g.Now() != ref.g.Now() {
			t.Fatalf("k=%d: %d events ending at %v, want %d at %v", k, tn.g.Events(), tn.g.Now(), ref.g.Events(), ref.g.Now())
		}
		if c := tn.g.Critical(); c*uint64(k) < tn.g.Events() || c > tn.g.Events() {
			t.Fatalf("k=%d: %d critical events of %d: must be in [events/k, events]", k, c, tn.g.Events())
		}
		if tn.g.Crossed() == 0 || tn.g.Windows() == 0 {
			t.Fatalf("k=%d: %d events crossed in %d windows: the test crosses nothing", k, tn.g.Crossed(), tn.g.Windows())
		}
	}
}

// The result of a partitioned run does not depend on how many OS threads
// run it.
func TestGroupIndependentOfGOMAXPROCS(t *testing.T) {
	run := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		tn := newTokenNet(t, 16, 4, 30, 100)
		if err := tn.g.Run(); err != nil {
			t.Fatal(err)
		}
		return tn.logs()
	}
	// 3 threads split 4 partitions unevenly (1, 1, 2); 1 runs all four
	// one after the other in every window.
	ref := run(1)
	for _, procs := range []int{2, 3, 4, 8} {
		if got := run(procs); got != ref {
			t.Fatalf("GOMAXPROCS 1 and %d differ:\n%s\n%s", procs, ref, got)
		}
	}
}

// SetThreads bounds the threads below GOMAXPROCS (a sweep's point given
// fewer cores than the process has), never above the partitions or
// GOMAXPROCS, and the results do not depend on it.
func TestGroupSetThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	cases := []struct{ k, bound, want int }{
		{8, 0, 4}, {8, 1, 1}, {8, 2, 2}, {8, 6, 4}, {3, 2, 2}, {2, 8, 2}, {1, 4, 1},
	}
	for _, c := range cases {
		g, err := NewGroup(1, c.k, 100)
		if err != nil {
			t.Fatal(err)
		}
		g.SetThreads(c.bound)
		if got := g.Threads(); got != c.want {
			t.Errorf("k=%d, SetThreads(%d) at GOMAXPROCS 4: %d threads, want %d", c.k, c.bound, got, c.want)
		}
	}
	ref := newTokenNet(t, 16, 4, 30, 100)
	if err := ref.g.Run(); err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int{1, 3} {
		tn := newTokenNet(t, 16, 4, 30, 100)
		tn.g.SetThreads(bound)
		if err := tn.g.Run(); err != nil {
			t.Fatal(err)
		}
		if got, want := tn.logs(), ref.logs(); got != want {
			t.Fatalf("SetThreads(%d) differs from 4 threads:\n%s\n%s", bound, got, want)
		}
	}
}

// Every partition is run by exactly one thread, each thread runs at least
// one, and the threads' shares are consecutive runs in partition order.
func TestGroupShareCoversEveryPartitionOnce(t *testing.T) {
	for k := 1; k <= 40; k++ {
		g := &Group{k: k}
		for n := 1; n <= k; n++ {
			next := 0
			for th := range n {
				lo, hi := g.share(th, n)
				if lo != next || hi <= lo {
					t.Fatalf("k=%d, %d threads: thread %d runs [%d, %d), want [%d, more)", k, n, th, lo, hi, next)
				}
				next = hi
			}
			if next != k {
				t.Fatalf("k=%d, %d threads: the shares end at %d", k, n, next)
			}
		}
	}
}

// Same-time arrivals from two partitions at a third are merged in source
// partition order, whichever ran first.
func TestGroupMergeOrder(t *testing.T) {
	g, err := NewGroup(1, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	rec := func(s string) Handler { return funcHandler(func() { got = append(got, s) }) }
	g.Engine(2).At(0, func() { g.Post(2, 0, 20, rec("from2"), 0) })
	g.Engine(1).At(0, func() { g.Post(1, 0, 20, rec("from1@0"), 0) })
	g.Engine(1).At(5, func() { g.Post(1, 0, 20, rec("from1@5"), 0) })
	g.Engine(0).At(20, func() { got = append(got, "local") })
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, " "); s != "local from1@0 from2 from1@5" {
		t.Fatalf("order = %q", s)
	}
}

func TestGroupSkipsEmptyStretches(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	g.Engine(0).At(0, func() {})
	g.Engine(1).At(Second, func() {})
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	if g.Windows() != 2 || g.Now() != Second {
		t.Fatalf("%d windows ending at %v, want 2 at 1s", g.Windows(), g.Now())
	}
}

func TestGroupLookaheadViolationFails(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	g.Engine(0).At(10, func() { g.Post(0, 1, 109, funcHandler(func() {}), 0) })
	var pe *PanicError
	if err := g.Run(); !errors.As(err, &pe) || !strings.Contains(fmt.Sprint(pe.Value), "within the lookahead") {
		t.Fatalf("err = %v, want a lookahead panic", err)
	}
}

// The failure reported is the earliest in simulated time, not the first
// goroutine to fail.
func TestGroupFirstFailureByTime(t *testing.T) {
	g, err := NewGroup(1, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	g.Engine(0).At(70, func() { panic("late") })
	g.Engine(1).At(50, func() { panic("early") })
	var pe *PanicError
	if err := g.Run(); !errors.As(err, &pe) || pe.Value != "early" || pe.At != 50 {
		t.Fatalf("err = %v, want the panic at 50ps", err)
	}
}

func TestGroupDeadlockListsEveryPartition(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	var never Signal
	g.Engine(0).Spawn("a", func(p *Proc) { p.Wait(&never, "never") })
	g.Engine(1).Spawn("b", func(p *Proc) { p.Sleep(500); p.Wait(&never, "never") })
	var de *DeadlockError
	if err := g.Run(); !errors.As(err, &de) || len(de.Blocked) != 2 || de.At != 500 {
		t.Fatalf("err = %v, want a deadlock of a and b at 500ps", err)
	}
}

func TestGroupEndChecks(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	g.Engine(1).At(300, func() {})
	g.Engine(0).AddEndCheck(func(now Time) []Violation { return []Violation{{Agent: "p0", At: now, What: "x"}} })
	var at []Time
	g.AddEndCheck(func(now Time) []Violation { at = append(at, now); return nil })
	var ie *InvariantError
	if err := g.Run(); !errors.As(err, &ie) || len(ie.Violations) != 1 || ie.Violations[0].Agent != "p0" {
		t.Fatalf("err = %v, want partition 0's violation", err)
	}
	if !slices.Equal(at, []Time{300}) {
		t.Fatalf("group check ran at %v, want once at the latest time 300ps", at)
	}
}

func TestNewGroupRefusesBadArguments(t *testing.T) {
	if _, err := NewGroup(1, 0, 100); err == nil {
		t.Error("0 partitions accepted")
	}
	if _, err := NewGroup(1, 2, 0); err == nil {
		t.Error("zero lookahead accepted")
	}
}

// An event posted past the end of the clock fails the run as AtH does.
func TestGroupPostOverflowFails(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	g.Engine(0).At(10, func() { g.Post(0, 1, MaxTime, funcHandler(func() {}), 0) })
	if err := g.Run(); !errors.Is(err, ErrTimeOverflow) {
		t.Fatalf("err = %v, want a time overflow", err)
	}
}

// Stop on one partition ends the run after the current window; the other
// partitions finish that window and nothing later runs.
func TestGroupStopEndsAfterTheWindow(t *testing.T) {
	g, err := NewGroup(1, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ran []Time
	g.Engine(0).At(10, func() { g.Engine(0).Stop() })
	g.Engine(1).At(50, func() { ran = append(ran, 50) })
	g.Engine(1).At(500, func() { ran = append(ran, 500) })
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []Time{50}) {
		t.Fatalf("ran %v, want only the event inside the stopped window", ran)
	}
}
