package sim

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
)

// Group runs one simulation split into partitions, each an Engine with its
// own event queue, processes and sequence counter, in parallel under
// conservative synchronisation (docs/parallel.md). Every cross-partition
// interaction takes at least the lookahead L of simulated time (in the
// cluster: a link plus a switch), so the events of the window [T, T+L) of
// different partitions are independent: the partitions run their windows
// on min(k, GOMAXPROCS, SetThreads) threads, each thread its own fixed run of
// partitions one after the other, then all meet at a barrier, where the events posted
// across partitions (Post) are merged into their destination queues. The
// next window starts at the earliest pending event of any partition, so
// stretches with nothing to do cost nothing.
//
// A run repeats exactly for a given partition count, whatever GOMAXPROCS:
// a partition's window depends only on its own queue, and cross events are
// merged in a fixed order (time, then the time they were posted, then the
// source partition, then the order the source posted them). Against the
// sequential engine, the one difference is the order of events at the same
// picosecond on one partition: a merged event takes the destination's next
// sequence number at the barrier, so it runs after the local events of its
// time that were scheduled before the barrier, where the sequential engine
// would order them by when each was scheduled.
type Group struct {
	parts []*Engine
	look  Duration
	k     int
	out   [][]crossEvent // out[src*k+dst], appended by src during a window
	sends []sendList     // per source, the destinations of its non-empty boxes
	from  [][]int        // scratch for the barrier's merge: per destination, its sources
	dsts  []int          // scratch: the destinations with events to merge
	merge []crossEvent   // scratch for the barrier's merge
	errs  []error        // per partition, the window's failure
	// endChecks run, with the latest partition time, once every partition
	// is idle.
	endChecks []EndCheck
	windows   uint64 // windows run
	crossed   uint64 // events posted across partitions
	critical  uint64 // per window, the busiest partition's events, summed
	before    []uint64
	threads   int // SetThreads' bound; 0: GOMAXPROCS
}

// sendList is one source partition's destinations posted to in the
// current window, in the order first posted to. Each source writes only
// its own, during its window; the padding keeps two sources' lists, which
// two threads append to at once, off one cache line.
type sendList struct {
	to []int
	_  [40]byte
}

// crossEvent is an event posted from one partition to another.
type crossEvent struct {
	t, sent Time
	src     int
	h       Handler
	arg     uint64
}

// NewGroup returns k partitions whose engines share seed (so Stream gives
// the same sequence for a name on every partition), synchronised every
// lookahead of simulated time.
func NewGroup(seed uint64, k int, lookahead Duration) (*Group, error) {
	if k < 1 {
		return nil, fmt.Errorf("sim: %d partitions: need at least 1", k)
	}
	if lookahead < 1 {
		return nil, fmt.Errorf("sim: lookahead %v: must be > 0 (a zero-latency interaction between partitions cannot run in parallel)", lookahead)
	}
	g := &Group{look: lookahead, k: k, out: make([][]crossEvent, k*k), sends: make([]sendList, k), from: make([][]int, k), errs: make([]error, k)}
	for range k {
		e := New(seed)
		e.partition = k > 1
		g.parts = append(g.parts, e)
	}
	return g, nil
}

// Partitions returns the number of partitions.
func (g *Group) Partitions() int { return g.k }

// Engine returns partition i's engine. Build partition i's agents on it;
// they must touch no other partition's state except through Post.
func (g *Group) Engine(i int) *Engine { return g.parts[i] }

// Lookahead returns the least delay of a cross-partition event.
func (g *Group) Lookahead() Duration { return g.look }

// Events returns the events run by all partitions.
func (g *Group) Events() uint64 {
	var n uint64
	for _, e := range g.parts {
		n += e.events
	}
	return n
}

// Windows returns the number of synchronisation windows run so far.
func (g *Group) Windows() uint64 { return g.windows }

// Critical returns the events on the run's critical path: per window, the
// events of the busiest partition, summed. Events over Critical is the
// speed-up the windows allow on as many idle cores as partitions, if
// every event cost the same and barriers nothing; it does not depend on
// the machine's load.
func (g *Group) Critical() uint64 { return g.critical }

// Crossed returns the number of events posted across partitions.
func (g *Group) Crossed() uint64 { return g.crossed }

// Now returns the latest time any partition has reached.
func (g *Group) Now() Time {
	var t Time
	for _, e := range g.parts {
		t = max(t, e.now)
	}
	return t
}

// SetThreads bounds the threads Run uses to n (still at most the
// partitions and GOMAXPROCS): a simulation given n cores of a sweep that
// runs others beside it must not take more. n < 1 leaves the bound at
// GOMAXPROCS. The results do not depend on it.
func (g *Group) SetThreads(n int) { g.threads = max(0, n) }

// Threads returns the number of threads Run runs the partitions on:
// min(partitions, GOMAXPROCS, SetThreads' bound).
func (g *Group) Threads() int {
	n := min(g.k, runtime.GOMAXPROCS(0))
	if g.threads > 0 {
		n = min(n, g.threads)
	}
	return max(1, n)
}

// Post schedules h.Handle(arg) at time t on partition dst, from an event or
// process of partition src. A cross-partition event must lie at least the
// lookahead after src's now; an earlier one is a simulator bug and panics.
// Within a partition (src == dst) Post is AtH.
func (g *Group) Post(src, dst int, t Time, h Handler, arg uint64) {
	e := g.parts[src]
	if src == dst {
		e.AtH(t, h, arg)
		return
	}
	if t < 0 || t >= MaxTime {
		e.overflow() // as AtH: the run fails with a *TimeOverflowError
		return
	}
	if t < e.now+g.look {
		panic(fmt.Sprintf("sim: event posted from partition %d to %d at %v, within the lookahead %v of now %v", src, dst, t, g.look, e.now))
	}
	box := &g.out[src*g.k+dst]
	if len(*box) == 0 {
		g.sends[src].to = append(g.sends[src].to, dst)
	}
	*box = append(*box, crossEvent{t: t, sent: e.now, src: src, h: h, arg: arg})
}

// AddEndCheck registers check to run when Run ends with every partition
// idle, with the latest partition time (see Engine.AddEndCheck).
func (g *Group) AddEndCheck(check EndCheck) { g.endChecks = append(g.endChecks, check) }

// Run runs every partition's events until all queues are empty or an
// engine was stopped, window by window. It returns the failure of the
// earliest (time, then partition) failing partition, a *DeadlockError
// listing the blocked processes of every partition, or an *InvariantError
// from the partitions' and the group's end checks, as Engine.Run does.
// After a Stop, the other partitions finish the current window.
//
// The partitions run on Threads() threads, each running a fixed
// run of consecutive partitions one after the other in every window: the
// windows of different partitions are independent, so the results do not
// depend on the threads. More partitions than threads keeps each
// partition's state small (its nodes, its event queue), so a window's
// events of one partition find that state in the core's caches.
func (g *Group) Run() error {
	work, done := g.startWorkers()
	defer func() {
		for _, w := range work {
			close(w)
		}
	}()
	_, mine := g.share(0, len(work)+1)
	for {
		g.mergeCross()
		limit, ok := g.nextLimit()
		if !ok {
			break
		}
		g.windows++
		g.noteBefore()
		for _, w := range work {
			w <- limit
		}
		for p := range mine {
			g.errs[p] = g.parts[p].runWindow(limit)
		}
		for range work {
			receive(done)
		}
		g.noteAfter()
		if err := g.firstFailure(); err != nil {
			g.shutdown()
			return err
		}
		if g.stopped() {
			return nil
		}
	}
	return g.endOfRun()
}

// share returns the partitions [lo, hi) thread t of n runs.
func (g *Group) share(t, n int) (lo, hi int) {
	return t * g.k / n, (t + 1) * g.k / n
}

// startWorkers starts a goroutine per thread 1..n−1 (n = Threads())
// that runs one window of its partitions (share) per limit
// received on work, each on fixed partitions (their coroutines then stay
// on one thread's caches), and reports on done. The
// channels are buffered so that handing out a window never waits for a
// worker to be scheduled: thread 0 starts its own partitions at once. Both
// sides poll a while before they block (receive), which on idle cores
// spares the wake-up of a sleeping thread at every window.
func (g *Group) startWorkers() (work []chan Time, done chan struct{}) {
	n := g.Threads()
	done = make(chan struct{}, n)
	for me := 1; me < n; me++ {
		w := make(chan Time, 1)
		work = append(work, w)
		lo, hi := g.share(me, n)
		go func() {
			for {
				limit, ok := receive(w)
				if !ok {
					return
				}
				for p := lo; p < hi; p++ {
					g.errs[p] = g.parts[p].runWindow(limit)
				}
				done <- struct{}{}
			}
		}()
	}
	return work, done
}

// noteBefore records every partition's event count before a window.
func (g *Group) noteBefore() {
	g.before = g.before[:0]
	for _, e := range g.parts {
		g.before = append(g.before, e.events)
	}
}

// noteAfter adds the window's busiest partition's events to Critical.
func (g *Group) noteAfter() {
	var most uint64
	for i, e := range g.parts {
		most = max(most, e.events-g.before[i])
	}
	g.critical += most
}

// nextLimit returns the last time of the next window, which starts at the
// earliest pending event; false when every queue is empty.
func (g *Group) nextLimit() (Time, bool) {
	start, ok := MaxTime, false
	for _, e := range g.parts {
		if e.queue.len() > 0 {
			start, ok = min(start, e.queue.peekTime()), true
		}
		if e.pendingMarks() { // a mark stands for an event at its time
			start, ok = min(start, e.firstMark()), true
		}
	}
	return start.Add(g.look - 1), ok
}

// mergeCross moves the events posted during the last window into their
// destination queues in the deterministic order (time, posting time,
// source partition, posting order). It visits only the boxes posted to
// (sends), not all k² of them: at 32 engines and more, scanning every box
// at every barrier cost more than the few events crossing.
func (g *Group) mergeCross() {
	dsts := g.dsts[:0]
	for src := range g.sends {
		sl := &g.sends[src]
		for _, dst := range sl.to {
			if len(g.from[dst]) == 0 {
				dsts = append(dsts, dst)
			}
			g.from[dst] = append(g.from[dst], src) // sources in increasing order
		}
		sl.to = sl.to[:0]
	}
	for _, dst := range dsts {
		g.mergeInto(dst, g.from[dst])
		g.from[dst] = g.from[dst][:0]
	}
	g.dsts = dsts[:0]
}

// mergeInto moves the events that the partitions srcs (in increasing
// order, each with a non-empty box) posted to dst into dst's queue.
func (g *Group) mergeInto(dst int, srcs []int) {
	e := g.parts[dst]
	buf := g.merge[:0]
	for _, src := range srcs {
		box := &g.out[src*g.k+dst]
		buf = append(buf, *box...)
		clear(*box)
		*box = (*box)[:0]
	}
	slices.SortStableFunc(buf, func(a, b crossEvent) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.sent, b.sent), cmp.Compare(a.src, b.src))
	})
	for _, ev := range buf {
		e.seq++
		e.queue.push(ev.t, e.seq, event{h: ev.h, arg: ev.arg})
	}
	g.crossed += uint64(len(buf))
	clear(buf)
	g.merge = buf[:0]
}

// firstFailure returns the failure of the window with the earliest time,
// ties to the lower partition, or nil.
func (g *Group) firstFailure() error {
	var first error
	var at Time
	for i, err := range g.errs {
		if err == nil {
			continue
		}
		g.errs[i] = nil
		if t := g.parts[i].now; first == nil || t < at {
			first, at = err, t
		}
	}
	return first
}

func (g *Group) stopped() bool {
	for _, e := range g.parts {
		if e.stopped {
			return true
		}
	}
	return false
}

// endOfRun reports the blocked processes of every partition as one
// deadlock, else runs the end checks.
func (g *Group) endOfRun() error {
	var blocked []BlockedProc
	for _, e := range g.parts {
		blocked = append(blocked, e.blockedProcs()...)
	}
	if len(blocked) > 0 {
		err := &DeadlockError{At: g.Now(), Blocked: blocked}
		g.shutdown()
		return err
	}
	var all []Violation
	for _, e := range g.parts {
		if err := e.endCheck(); err != nil {
			all = append(all, err.(*InvariantError).Violations...)
		}
	}
	now := g.Now()
	for _, c := range g.endChecks {
		all = append(all, c(now)...)
	}
	if len(all) > 0 {
		return &InvariantError{Violations: all}
	}
	return nil
}

// Close releases every partition's unfinished coroutines.
func (g *Group) Close() { g.shutdown() }

func (g *Group) shutdown() {
	for _, e := range g.parts {
		e.shutdown()
	}
}

// runWindow runs the events with time ≤ limit, as RunUntil does, but
// leaves the end-of-run checks to the Group: an empty queue here only
// means the partition waits for another's events.
func (e *Engine) runWindow(limit Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Proc: "a callback event", At: e.now, Value: r, Stack: string(debug.Stack())}
		}
	}()
	e.runEvents(limit)
	return e.failure
}
