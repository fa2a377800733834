package loggops

import "github.com/gpunetsim/gpunetsim/sim"

// Waiting for a busy CPU or NIC without retries.
//
// An operation or arrival that finds its CPU or NIC busy until f is
// queued again at f with its stamp (LogGOPSim's retry), where it competes
// again; in a linear all-to-all a rank's 2(n−1) ready operations wait on
// one CPU, so each is retried about n times and the run takes ranks³
// events. A failed attempt changes nothing but the count of events, so
// the entries waiting for one resource set (a CPU; a CPU and a NIC's send
// side; a CPU and a NIC's receive side) keep only one representative in
// the queue, the one with the least stamp, and the others wait aside in
// stamp order. The result is the same as with retries:
//
//   - The clocks only grow, so an entry can start at no time before the
//     clock value it last saw, and one re-queued at that value never
//     passes the instant it would have started at.
//   - The representative has the least stamp of its set, so at any instant
//     where the set is free it tries first (entries of one time run in
//     stamp order): no waiting entry can start before it.
//   - When it starts, the next waiting entry is queued at the set's clock
//     (not later than where its own retries would be), from where it
//     competes exactly as its retries would.
//
// Only Events, the count of queue entries processed, shrinks. LogGOPSim
// compatibility keeps the retries (its clocks may go back).
type waitSet struct {
	rep     bool   // an entry of the set is queued as its representative
	repTS   uint64 // its stamp
	repRef  uint32 // and its handle and kind, to clear its mark
	repKind uint32
	parked  keyHeap // the others, least stamp first
}

// keyHeap is a min-heap of keys by stamp (hand-written: container/heap
// would box every key in an interface, an allocation per wait).
type keyHeap []key

func (h *keyHeap) push(k key) {
	*h = append(*h, k)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].ts <= k.ts {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = k
}

func (h *keyHeap) pop() key {
	a := *h
	top, last := a[0], a[len(a)-1]
	a = a[:len(a)-1]
	*h = a
	if len(a) == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(a) {
			break
		}
		if c+1 < len(a) && a[c+1].ts < a[c].ts {
			c++
		}
		if last.ts <= a[c].ts {
			break
		}
		a[i] = a[c]
		i = c
	}
	a[i] = last
	return top
}

// Resource-set identifiers: the CPU index c = host·ncpu + cpu, with the NIC
// index n = host·nnic + nic for sends and arrivals.
func calcSet(c int) uint64        { return uint64(c) << 2 }
func sendSet(c, n, nn int) uint64 { return (uint64(c)*uint64(nn)+uint64(n))<<2 | 1 }
func recvSet(c, n, nn int) uint64 { return (uint64(c)*uint64(nn)+uint64(n))<<2 | 2 }

// repMark returns the representative mark of the entry k refers to.
func (s *state) repMark(k key) *bool {
	if k.kind == evMsg {
		return &s.msgs[k.ref].rep
	}
	return &s.op(k.ref).rep
}

// wait queues k, busy until f, for resource set id: at f if it is or
// becomes the set's representative, else aside.
func (s *state) wait(k key, f sim.Time, id uint64) {
	mark := s.repMark(k)
	if *mark || s.retry || s.p.Compat == CompatLogGOPSim {
		k.t = f
		s.q.push(k)
		return
	}
	if s.waits == nil {
		s.waits = map[uint64]*waitSet{}
	}
	w := s.waits[id]
	if w == nil {
		w = &waitSet{}
		s.waits[id] = w
	}
	if w.rep && k.ts > w.repTS {
		w.parked.push(k)
		return
	}
	if w.rep { // k comes first: the old representative stays queued, unmarked
		*s.repMark(key{ref: w.repRef, kind: w.repKind}) = false
	}
	w.rep, w.repTS, w.repRef, w.repKind = true, k.ts, k.ref, k.kind
	*mark = true
	k.t = f
	s.q.push(k)
}

// proceed is called when the entry k of resource set id starts at t,
// after it took the set's clocks, which are now free again at clock: if
// it was the representative, the next waiting entry is queued at clock
// (at t if the costs were zero) as the new one.
func (s *state) proceed(k key, id uint64, t, clock sim.Time) {
	mark := s.repMark(k)
	if !*mark {
		return
	}
	*mark = false
	w := s.waits[id]
	if len(w.parked) == 0 {
		delete(s.waits, id)
		return
	}
	n := w.parked.pop()
	w.repTS, w.repRef, w.repKind = n.ts, n.ref, n.kind
	*s.repMark(n) = true
	n.t = max(t, clock)
	s.q.push(n)
}
