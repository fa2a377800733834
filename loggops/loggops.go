package loggops

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Result is the outcome of a run. Everything but Wall is a pure function of
// the schedule and the parameters.
type Result struct {
	// Finish is each host's finish time: the last moment one of its CPUs is
	// busy.
	Finish []sim.Time
	// Max is the largest finish time and MaxHost the lowest host reaching it.
	Max     sim.Time
	MaxHost int
	// Events is the number of queue entries processed (operations, message
	// arrivals and re-tries when a CPU or NIC was busy).
	Events uint64
	// Ops is the number of operations executed.
	Ops uint64
	// PeakOps is the largest number of operations held in memory at once.
	PeakOps int
	// Wall is the wall-clock time of the run.
	Wall time.Duration
}

// EventsPerSecond is Events divided by Wall.
func (r *Result) EventsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Events) / r.Wall.Seconds()
}

// ErrDeadlock reports a schedule that cannot finish: operations whose
// dependencies never complete, receives without a matching send or sends
// without a matching receive. The *DeadlockError wrapping it lists them.
var ErrDeadlock = errors.New("loggops: schedule deadlocks")

// DeadlockError lists the operations left when no event remained.
type DeadlockError struct {
	At    sim.Time // simulated time when the run got stuck
	Count int      // number of stuck operations and messages
	Stuck []string // the first few, described with rank and line
}

// Error returns the message of a DeadlockError.
func (e *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v at %v: %d operation(s) stuck: ", ErrDeadlock, e.At, e.Count)
	b.WriteString(strings.Join(e.Stuck, "; "))
	if e.Count > len(e.Stuck) {
		fmt.Fprintf(&b, "; ... and %d more", e.Count-len(e.Stuck))
	}
	return b.String()
}

// Unwrap returns the error a DeadlockError wraps.
func (e *DeadlockError) Unwrap() error { return ErrDeadlock }

// maxStuck bounds the operations listed in a DeadlockError.
const maxStuck = 10

// Operation states.
const (
	stPending uint8 = iota // waiting for dependencies
	stQueued               // in the event queue
	stStarted              // a posted receive or a rendezvous send in flight
	stDone
)

// op is one operation of a rank in memory.
type op struct {
	size     uint64   // bytes, or calc duration in ps
	earliest sim.Time // before start: lower bound from dependencies; after a send starts: end of its CPU overhead
	pos      uint64   // statement position in the rank block
	num      uint64   // operation number in the rank
	line     int64
	host     uint32
	peer     uint32
	tag      uint32
	deps     uint32 // unfinished dependencies
	head     int32  // first edge to a dependent, -1 if none
	tail     int32
	qnext    int32 // next receive in the host's posted-receive queue
	kind     goal.Kind
	cpu, nic uint8
	state    uint8
	rep      bool   // queued as its resource set's representative (wait.go)
	qseq     uint32 // order in the indexed posted-receive queue (match.go)
}

// edge makes op `to` wait for the start (IRequires) or end (Requires) of
// the op owning the list.
type edge struct {
	to   uint32
	next int32
	kind goal.Kind
}

// msg is a message in flight or waiting as unexpected.
type msg struct {
	size     uint64
	end      sim.Time // when receiving it ended (unexpected messages)
	src, dst uint32
	tag      uint32
	sendOp   uint32 // the send, completed on match when rendezvous
	line     int64  // the send's line (its op may be freed once eager-complete)
	num      uint64 // the send's op number
	next     int32  // next message in the unexpected queue
	cpu, nic uint8  // the send's indices, also used at the receiver
	rep      bool   // queued as its resource set's representative (wait.go)
	qseq     uint32 // order in the indexed unexpected queue (match.go)
}

// host is a rank's streaming and matching state.
type host struct {
	rr       goal.RankReader
	look     uint64 // window lookahead
	readPos  uint64 // statements read so far
	nops     uint64 // operations read so far
	base     uint64 // op number of ring[head]
	ring     []uint32
	head     uint32
	count    uint32
	rq       mq // posted receives (match.go)
	uq       mq // unexpected messages
	eof      bool
	finished bool
}

// sim is one run's state.
type state struct {
	p          Params
	prog       goal.Program
	ncpu, nnic int
	nexto      []sim.Time // per host and CPU: next free time
	nextgs     []sim.Time // per host and NIC: next free send time
	nextgr     []sim.Time // per host and NIC: next free receive time
	hosts      []host
	ops        [][]op // slab in chunks of opChunk
	nops       int    // handles allocated
	freeOps    []uint32
	live       int
	peak       int
	edges      []edge
	freeEdge   int32
	msgs       []msg
	freeMsgs   []uint32
	q          queue
	ts         uint64
	ready      []uint32
	keys       []readyKey // flushReady's scratch
	progress   func(Status)
	every      uint64 // events between progress calls
	events     uint64
	done       uint64
	now        sim.Time
	err        error
	stmt       goal.Stmt
	waits      map[uint64]*waitSet // entries waiting for busy resources (wait.go)
	retry      bool                // Options.retry
	indexAt    uint32              // queue length from which matching queues are indexed
}

// Status is a snapshot of a run in progress.
type Status struct {
	Now    sim.Time // simulated time of the current event
	Events uint64   // events processed so far
	Ops    uint64   // operations completed so far
}

// Options are the optional settings of RunOptions.
type Options struct {
	// Progress, if set, is called every ProgressEvery events (default
	// 2^24, a second or two) from the simulating goroutine. It must not
	// keep the run waiting; rate-limit printing by wall time inside it.
	Progress      func(Status)
	ProgressEvery uint64
	// retry re-queues every entry that finds its CPU or NIC busy, as
	// LogGOPSim does, instead of waiting aside (wait.go): for the test
	// that the two give the same result.
	retry bool
	// indexAt, when not zero, replaces the queue length at which a
	// matching queue is indexed (match.go), for the test that indexed and
	// scanned queues match alike.
	indexAt uint32
}

// Run simulates prog under p. It returns a *DeadlockError (wrapping
// ErrDeadlock) if the schedule cannot finish and the reader's error if the
// schedule is malformed; never a partial result.
func Run(prog goal.Program, p Params) (*Result, error) {
	return RunOptions(prog, p, Options{})
}

// RunOptions is Run with progress reporting. The result does not depend on
// the options.
func RunOptions(prog goal.Program, p Params, opt Options) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	n := prog.NumRanks()
	s := &state{p: p, prog: prog, ncpu: prog.NumCPU(), nnic: prog.NumNIC(), freeEdge: -1, progress: opt.Progress, every: opt.ProgressEvery, retry: opt.retry, indexAt: opt.indexAt}
	if s.indexAt == 0 {
		s.indexAt = indexAt
	}
	if s.every == 0 {
		s.every = 1 << 24
	}
	s.nexto = make([]sim.Time, n*s.ncpu)
	s.nextgs = make([]sim.Time, n*s.nnic)
	s.nextgr = make([]sim.Time, n*s.nnic)
	s.hosts = make([]host, n)
	s.q = newQueue()
	if err := s.init(); err != nil {
		return nil, err
	}
	s.loop()
	if s.err != nil {
		return nil, s.err
	}
	if err := s.checkFinished(); err != nil {
		return nil, err
	}
	res := &Result{Finish: make([]sim.Time, n), Events: s.events, Ops: s.done, PeakOps: s.peak}
	for h := range n {
		f := sim.Time(0)
		for _, t := range s.nexto[h*s.ncpu : (h+1)*s.ncpu] {
			if s.wrapped(h, t) {
				return nil, s.err
			}
			f = max(f, t)
		}
		res.Finish[h] = f
		if f > res.Max {
			res.Max, res.MaxHost = f, h
		}
	}
	res.Wall = time.Since(start)
	return res, nil
}

func (s *state) init() error {
	for h := range s.hosts {
		hs := &s.hosts[h]
		hs.rq, hs.uq = newMQ(), newMQ()
		rr, err := s.prog.Rank(h)
		if err != nil {
			return err
		}
		win := s.prog.Window(h)
		hs.rr, hs.look = rr, win.Lookahead
		if win.Roots > 0 {
			s.readThrough(h, win.Roots+win.Lookahead)
		}
		if s.err != nil {
			return s.err
		}
		for i := uint32(0); i < hs.count; i++ {
			hd := hs.ring[(hs.head+i)&hs.mask()]
			o := s.op(hd)
			if o.pos < win.Roots && o.deps == 0 && o.state == stPending {
				s.ready = append(s.ready, hd)
			}
		}
		// Roots start at time 0, whatever the clocks say (LogGOPSim).
		s.flushReady(true)
		s.trim(h)
	}
	return s.err
}

// readThrough reads host h's statements until n have been read.
func (s *state) readThrough(h int, n uint64) {
	hs := &s.hosts[h]
	st := &s.stmt
	for hs.readPos < n && !hs.eof {
		ok, err := hs.rr.Next(st)
		if err != nil {
			s.fail(err)
			return
		}
		if !ok {
			hs.eof = true
			hs.rr = nil
			return
		}
		if st.Kind.IsOp() {
			if st.Kind == goal.Send && st.Peer == goal.AnySource || st.Kind != goal.Calc && st.Peer != goal.AnySource && int(st.Peer) >= len(s.hosts) {
				s.fail(fmt.Errorf("loggops: rank %d %s: peer %d out of range 0..%d", h, where(st.Line, hs.nops), st.Peer, len(s.hosts)-1))
				return
			}
			if int(st.CPU) >= s.ncpu || int(st.NIC) >= s.nnic {
				s.fail(fmt.Errorf("loggops: rank %d %s: cpu %d or nic %d beyond the declared %d CPUs and %d NICs", h, where(st.Line, hs.nops), st.CPU, st.NIC, s.ncpu, s.nnic))
				return
			}
			hd := s.newOp()
			o := s.op(hd)
			*o = op{size: st.Size, pos: hs.readPos, num: hs.nops, line: st.Line, host: uint32(h), peer: st.Peer, tag: st.Tag,
				head: -1, tail: -1, qnext: -1, kind: st.Kind, cpu: st.CPU, nic: st.NIC}
			if st.Kind == goal.Calc {
				o.size = scale(st.Size, s.p.CalcUnit)
				if sim.Time(o.size) >= Horizon {
					s.fail(&HorizonError{Rank: h, Where: where(st.Line, o.num), What: fmt.Sprintf("calc %d × calc unit %v:", st.Size, s.p.CalcUnit), Input: true})
					return
				}
			}
			s.ringPush(hs, hd)
			hs.nops++
		} else {
			a, okA := s.lookup(hs, st.A)
			b, okB := s.lookup(hs, st.B)
			if !okA || !okB || s.op(a).state != stPending || s.op(b).state >= stStarted {
				s.fail(fmt.Errorf("loggops: rank %d line %d: dependency read after its operations started (streaming window violated by the program source)", h, st.Line))
				return
			}
			s.addEdge(b, a, st.Kind)
			s.op(a).deps++
		}
		hs.readPos++
	}
}

func where(line int64, opNum uint64) string {
	if line > 0 {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("op %d", opNum)
}

// Horizon bounds the LogGOPS clock: every computed duration (a calc's
// D × unit, a message's (s−1)·G or (s−1)·O) saturates there and every
// clock value must stay below it, so that a sum of the few terms one step
// adds (t + o + L + (s−1)·G) cannot wrap int64. A run that reaches it fails
// with a *HorizonError naming the operation: 2^60 ps is 13.3 days.
const Horizon sim.Time = 1 << 60

// HorizonError reports an operation whose time would reach Horizon: the
// run fails (it wraps sim.ErrTimeOverflow) instead of reporting a clamped
// or wrapped time.
type HorizonError struct {
	Rank  int    // the rank whose clock would pass the horizon
	Where string // the statement: "line N" or "op N"
	What  string // the operation and the time it computes
	// Input is true when the statement's own duration (a calc's D × unit,
	// a send's o + (s−1)·O, g + (s−1)·G or o + L) reaches the horizon
	// whenever it starts: a value of the input out of range, not a clock
	// that ran past the horizon by adding up statements.
	Input bool
}

// Error returns the message of a HorizonError.
func (e *HorizonError) Error() string {
	if e.Input {
		return fmt.Sprintf("loggops: rank %d %s: %s must be below 2^60 ps (13.3 days), the end of the LogGOPS clock", e.Rank, e.Where, e.What)
	}
	return fmt.Sprintf("loggops: rank %d %s: %s reaches the end of the LogGOPS clock, 2^60 ps (13.3 days): a calc duration, message size or parameter is too large for the run",
		e.Rank, e.Where, e.What)
}

// Unwrap returns sim.ErrTimeOverflow.
func (e *HorizonError) Unwrap() error { return sim.ErrTimeOverflow }

// past fails the run, and reports true, if v (computed by what, for rank
// h at statement where) reached Horizon. Callers test v ≥ Horizon first,
// so that the message is formatted only for a failing run, not at every
// event.
func (s *state) past(v sim.Time, h int, where, what string) bool {
	if v < Horizon {
		return false
	}
	s.fail(&HorizonError{Rank: h, Where: where, What: what})
	return true
}

// scale multiplies a calc duration by the unit, saturating at Horizon
// (which a run then reports as an overflow).
func scale(d uint64, u sim.Time) uint64 {
	hi, lo := bits.Mul64(d, uint64(u))
	if hi != 0 || lo > uint64(Horizon) {
		return uint64(Horizon)
	}
	return lo
}

// perByte is the cost of the bytes after the first: ⌈(size−1)·c / 1000⌉ ps
// for c in fs per byte; zero for empty and one-byte messages.
func perByte(size uint64, c PerByte) sim.Time {
	if size <= 1 || c == 0 {
		return 0
	}
	hi, lo := bits.Mul64(size-1, uint64(c))
	if hi >= fsPerPs {
		return Horizon
	}
	q, rem := bits.Div64(hi, lo, fsPerPs)
	if rem != 0 {
		q++
	}
	if q > uint64(Horizon) {
		return Horizon
	}
	return sim.Time(q)
}

// perByte is the package-level perByte, except that with CompatLogGOPSim
// an empty message costs (0−1)·c, that is −⌈c/1000⌉ ps, as LogGOPSim's
// unsigned arithmetic makes it.
func (s *state) perByte(size uint64, c PerByte) sim.Time {
	if size == 0 && s.p.Compat == CompatLogGOPSim {
		return -perByte(2, c)
	}
	return perByte(size, c)
}

// wrapped reports, and fails the run, if clock v of host h is below zero:
// under CompatLogGOPSim an empty message's (0−1)·G or (0−1)·O can take a
// clock there, which LogGOPSim's unsigned arithmetic wraps to about 2^64.
// That is harmless until the clock is read (a later operation, or the
// finish time), where LogGOPSim's result stops meaning anything.
func (s *state) wrapped(h int, v sim.Time) bool {
	if v >= 0 {
		return false
	}
	if s.p.Compat != CompatLogGOPSim { // only an int64 overflow takes a clock below zero
		s.fail(fmt.Errorf("loggops: %w on rank %d after %v: the parameters or the schedule's sizes and calc durations are too large", sim.ErrTimeOverflow, h, s.now))
		return true
	}
	s.fail(fmt.Errorf("loggops: compat=loggopsim: rank %d reads a clock that an empty message's (0−1)·G or (0−1)·O took below zero; LogGOPSim's unsigned clock wraps around to about 2^64 there and its result has no meaning", h))
	return true
}

func (s *state) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *state) newOp() uint32 {
	s.live++
	s.peak = max(s.peak, s.live)
	if n := len(s.freeOps); n > 0 {
		hd := s.freeOps[n-1]
		s.freeOps = s.freeOps[:n-1]
		return hd
	}
	if s.nops >= math.MaxInt32 {
		panic("loggops: more than 2^31 operations in memory")
	}
	if s.nops&(opChunk-1) == 0 {
		s.ops = append(s.ops, make([]op, opChunk))
	}
	s.nops++
	return uint32(s.nops - 1)
}

// opChunk is the number of operations per slab chunk. Chunks never move,
// so growing the slab copies nothing.
const opChunk = 4096

// op returns the operation with handle hd.
func (s *state) op(hd uint32) *op { return &s.ops[hd/opChunk][hd%opChunk] }

func (s *state) ringPush(hs *host, hd uint32) {
	if int(hs.count) == len(hs.ring) {
		nr := make([]uint32, max(4, 2*len(hs.ring)))
		for i := uint32(0); i < hs.count; i++ {
			nr[i] = hs.ring[(hs.head+i)&hs.mask()]
		}
		hs.ring, hs.head = nr, 0
	}
	hs.ring[(hs.head+hs.count)&hs.mask()] = hd
	hs.count++
}

// mask maps a position to a ring slot: rings grow from 4 by doubling, so
// their lengths are powers of two.
func (hs *host) mask() uint32 { return uint32(len(hs.ring)) - 1 }

// lookup finds the handle of operation number num of host hs.
func (s *state) lookup(hs *host, num uint64) (uint32, bool) {
	if num < hs.base || num-hs.base >= uint64(hs.count) {
		return 0, false
	}
	return hs.ring[(hs.head+uint32(num-hs.base))&hs.mask()], true
}

// trim frees finished operations that no later statement can name.
func (s *state) trim(h int) {
	hs := &s.hosts[h]
	for hs.count > 0 {
		hd := hs.ring[hs.head]
		o := s.op(hd)
		if o.state != stDone || !hs.eof && o.pos+hs.look >= hs.readPos {
			break
		}
		hs.head = (hs.head + 1) & hs.mask()
		hs.count--
		hs.base++
		s.freeOps = append(s.freeOps, hd)
		s.live--
	}
	if hs.count == 0 && hs.eof && !hs.finished {
		hs.finished = true
		hs.ring = nil
		hs.head = 0
	}
}

func (s *state) addEdge(from, to uint32, k goal.Kind) {
	var e int32
	if s.freeEdge >= 0 {
		e = s.freeEdge
		s.freeEdge = s.edges[e].next
	} else {
		s.edges = append(s.edges, edge{})
		e = int32(len(s.edges) - 1)
	}
	s.edges[e] = edge{to: to, next: -1, kind: k}
	o := s.op(from)
	if o.tail < 0 {
		o.head = e
	} else {
		s.edges[o.tail].next = e
	}
	o.tail = e
}

// release makes dependents of kind k of op hd wait no earlier than t.
func (s *state) release(hd uint32, k goal.Kind, t sim.Time) {
	for e := s.op(hd).head; e >= 0; e = s.edges[e].next {
		ed := &s.edges[e]
		if ed.kind != k {
			continue
		}
		d := s.op(ed.to)
		d.earliest = max(d.earliest, t)
		d.deps--
		if d.deps == 0 {
			s.ready = append(s.ready, ed.to)
		}
	}
}

// started marks op hd started at t: dependents by irequires may go.
func (s *state) started(hd uint32, t sim.Time) {
	o := s.op(hd)
	s.readThrough(int(o.host), o.pos+s.hosts[o.host].look+1)
	o = s.op(hd)
	o.state = stStarted
	if o.head >= 0 {
		s.release(hd, goal.IRequires, t)
	}
}

// finished marks op hd complete at t: dependents by requires may go.
func (s *state) finished(hd uint32, t sim.Time) {
	o := s.op(hd)
	o.state = stDone
	s.done++
	if o.head >= 0 {
		s.release(hd, goal.Requires, t)
		// Free the edge list.
		s.edges[o.tail].next = s.freeEdge
		s.freeEdge = o.head
		o.head, o.tail = -1, -1
	}
	s.trim(int(o.host))
}

// flushReady queues the operations that became ready during one event,
// grouped by host (ascending) and, within a host, sends before receives
// before calcs, and otherwise in program order. With CompatLogGOPSim each
// host's operations keep the order they were released in and are then
// reordered by kind with libstdc++'s unstable std::sort, as LogGOPSim does.
func (s *state) flushReady(roots bool) {
	r := s.ready
	if s.p.Compat == CompatLogGOPSim {
		s.orderLogGOPSim(r)
	} else {
		s.orderProgram(r)
	}
	for _, hd := range r {
		o := s.op(hd)
		o.state = stQueued
		t := sim.Time(0)
		if !roots {
			h := int(o.host)
			t = s.nexto[h*s.ncpu+int(o.cpu)]
			lowest := t
			if o.kind == goal.Send {
				gs := s.nextgs[h*s.nnic+int(o.nic)]
				t, lowest = max(t, gs), min(t, gs)
			}
			if s.wrapped(h, lowest) {
				t = 0
			}
			if s.p.Compat != CompatLogGOPSim {
				t = max(t, o.earliest)
			}
		}
		s.ts++
		s.q.push(key{t: t, ts: s.ts, ref: hd, kind: evOp})
	}
	s.ready = r[:0]
}

// readyKey orders one ready operation.
type readyKey struct {
	major uint64 // host<<2 | kind, or host alone (CompatLogGOPSim)
	minor uint64 // operation number, or release position (CompatLogGOPSim)
	hd    uint32
	kind  goal.Kind
}

func (a readyKey) cmp(b readyKey) int {
	switch {
	case a.major != b.major:
		if a.major < b.major {
			return -1
		}
		return 1
	case a.minor < b.minor:
		return -1
	case a.minor > b.minor:
		return 1
	}
	return 0
}

// sortKeys sorts the ready operations r by the keys mk gives, which are
// unique, and writes the order back to r.
func (s *state) sortKeys(r []uint32, mk func(i int, o *op) readyKey) []readyKey {
	ks := s.keys[:0]
	for i, hd := range r {
		k := mk(i, s.op(hd))
		k.hd = hd
		ks = append(ks, k)
	}
	if len(ks) <= 16 {
		for i := 1; i < len(ks); i++ {
			for j := i; j > 0 && ks[j].cmp(ks[j-1]) < 0; j-- {
				ks[j], ks[j-1] = ks[j-1], ks[j]
			}
		}
	} else {
		slices.SortFunc(ks, readyKey.cmp)
	}
	for i := range ks {
		r[i] = ks[i].hd
	}
	s.keys = ks
	return ks
}

// orderProgram orders by host, kind and program order.
func (s *state) orderProgram(r []uint32) {
	if len(r) < 2 {
		return
	}
	s.sortKeys(r, func(_ int, o *op) readyKey {
		return readyKey{major: uint64(o.host)<<2 | uint64(o.kind), minor: o.num}
	})
}

// orderLogGOPSim orders by host, keeping release order, and then each
// host's run by kind with std::sort's permutation of equal kinds.
func (s *state) orderLogGOPSim(r []uint32) {
	if len(r) < 2 {
		return
	}
	ks := s.sortKeys(r, func(i int, o *op) readyKey {
		return readyKey{major: uint64(o.host), minor: uint64(i), kind: o.kind}
	})
	for a := 0; a < len(ks); {
		b := a + 1
		for b < len(ks) && ks[b].major == ks[a].major {
			b++
		}
		run := ks[a:b]
		gccSort(run, func(x, y readyKey) bool { return x.kind < y.kind })
		for i := range run {
			r[a+i] = run[i].hd
		}
		a = b
	}
}

func (s *state) newMsg() uint32 {
	if n := len(s.freeMsgs); n > 0 {
		m := s.freeMsgs[n-1]
		s.freeMsgs = s.freeMsgs[:n-1]
		return m
	}
	s.msgs = append(s.msgs, msg{})
	return uint32(len(s.msgs) - 1)
}

// matches reports whether a receive for (src, tag) accepts a message.
func matches(rsrc, rtag, msrc, mtag uint32) bool {
	return (rsrc == goal.AnySource || rsrc == msrc) && (rtag == goal.AnyTag || rtag == mtag)
}

// completeRendezvous finishes the send of message m, matched at t: the
// sender's clocks of CPU cpu and NIC nic (the send's, or with
// CompatLogGOPSim on a queued message the receive's) are raised to t.
func (s *state) completeRendezvous(m *msg, t sim.Time, cpu, nic uint8) {
	c := int(m.src)*s.ncpu + int(cpu)
	n := int(m.src)*s.nnic + int(nic)
	// Unsigned, as in LogGOPSim: a wrapped clock stays wrapped.
	s.nexto[c] = sim.Time(max(uint64(s.nexto[c]), uint64(t)))
	s.nextgs[n] = sim.Time(max(uint64(s.nextgs[n]), uint64(t)))
	so := m.sendOp
	s.finished(so, max(t, s.op(so).earliest))
}

func (s *state) loop() {
	p := s.p
	for s.q.len() > 0 && s.err == nil {
		k := s.q.pop()
		t := k.t
		if t < s.now && p.Compat != CompatLogGOPSim {
			// Only an int64 overflow of a sum of times goes back in time.
			s.fail(fmt.Errorf("loggops: %w after %v: the parameters or the schedule's sizes and calc durations are too large", sim.ErrTimeOverflow, s.now))
			break
		}
		s.now = t
		s.events++
		if s.progress != nil && s.events%s.every == 0 {
			s.progress(Status{Now: t, Events: s.events, Ops: s.done})
		}
		if k.kind == evMsg {
			s.arrive(k)
		} else {
			hd := k.ref
			o := s.op(hd)
			h := int(o.host)
			c := h*s.ncpu + int(o.cpu)
			switch o.kind {
			case goal.Calc:
				if s.nexto[c] > t {
					s.wait(k, s.nexto[c], calcSet(c))
					continue
				} else if s.wrapped(h, s.nexto[c]) {
					k.t = s.nexto[c]
					s.q.push(k)
					continue
				}
				end := t + sim.Time(o.size)
				if end >= Horizon && s.past(end, h, where(o.line, o.num), fmt.Sprintf("calc of %v starting at %v", sim.Time(o.size), t)) {
					return
				}
				s.nexto[c] = end
				s.proceed(k, calcSet(c), t, end)
				o = s.op(hd)
				s.started(hd, t)
				s.finished(hd, end)
			case goal.Send:
				n := h*s.nnic + int(o.nic)
				if f := max(s.nexto[c], s.nextgs[n]); f > t {
					s.wait(k, f, sendSet(c, n, s.nnic))
					continue
				} else if s.wrapped(h, min(s.nexto[c], s.nextgs[n])) {
					k.t = f
					s.q.push(k)
					continue
				}
				s.started(hd, t)
				o = s.op(hd)
				oEnd := t + p.O + s.perByte(o.size, p.OverheadPerByte)
				gEnd := t + p.Gap + s.perByte(o.size, p.GapPerByte)
				if end := max(oEnd, gEnd, t+p.O+p.L); end >= Horizon && end-t >= Horizon {
					s.fail(&HorizonError{Rank: h, Where: where(o.line, o.num), What: fmt.Sprintf("send of %d bytes: its own cost (o + (s−1)·O, g + (s−1)·G, o + L)", o.size), Input: true})
					return
				}
				if max(oEnd, gEnd, t+p.O+p.L) >= Horizon && s.past(max(oEnd, gEnd, t+p.O+p.L), h, where(o.line, o.num), fmt.Sprintf("send of %d bytes starting at %v (o + (s−1)·O, g + (s−1)·G, o + L)", o.size, t)) {
					return
				}
				s.nexto[c] = oEnd
				s.nextgs[n] = gEnd
				s.proceed(k, sendSet(c, n, s.nnic), t, max(oEnd, gEnd))
				o = s.op(hd)
				o.earliest = oEnd
				mh := s.newMsg()
				s.msgs[mh] = msg{size: o.size, src: uint32(h), dst: o.peer, tag: o.tag, sendOp: hd, next: -1, cpu: o.cpu, nic: o.nic, line: o.line, num: o.num}
				s.ts++
				s.q.push(key{t: t + p.O + p.L, ts: s.ts, ref: mh, kind: evMsg})
				if o.size <= uint64(p.Eager) {
					s.finished(hd, oEnd)
				}
			case goal.Recv:
				s.started(hd, t)
				o = s.op(hd)
				hs := &s.hosts[h]
				found := false
				if mi := s.takeUnexpected(hs, o.peer, o.tag); mi >= 0 {
					m := &s.msgs[mi]
					cpu, nic := m.cpu, m.nic
					if p.Compat == CompatLogGOPSim {
						if (o.size > uint64(p.Eager)) != (m.size > uint64(p.Eager)) {
							s.fail(fmt.Errorf("loggops: compat=loggopsim: rank %d %s: a %db receive matches a queued %db message from rank %d and S=%v lies between them; LogGOPSim decides rendezvous by the receive's size there and completes the send twice or never, which is not reproduced (use compat=none)", h, where(o.line, o.num), o.size, m.size, m.src, p.Eager))
							return
						}
						cpu, nic = o.cpu, o.nic // LogGOPSim raises the receive's indices
					}
					if m.size > uint64(p.Eager) {
						s.completeRendezvous(m, t, cpu, nic)
					}
					s.finished(hd, max(t, m.end))
					s.freeMsgs = append(s.freeMsgs, uint32(mi))
					found = true
				}
				if !found {
					hs.rq.add(rqLinks{s}, int32(hd), s.indexAt)
				}
			}
		}
		if len(s.ready) > 0 {
			s.flushReady(false)
		}
	}
}

// arrive processes a message arrival event.
func (s *state) arrive(k key) {
	p := s.p
	t := k.t
	m := &s.msgs[k.ref]
	h := int(m.dst)
	c := h*s.ncpu + int(m.cpu)
	n := h*s.nnic + int(m.nic)
	if f := max(s.nexto[c], s.nextgr[n]); f > t {
		s.wait(k, f, recvSet(c, n, s.nnic))
		return
	} else if s.wrapped(h, min(s.nexto[c], s.nextgr[n])) {
		k.t = f
		s.q.push(k)
		return
	}
	gb := s.perByte(m.size, p.GapPerByte)
	// Unsigned, as in LogGOPSim: equal to max for the non-negative costs
	// of CompatNone, and LogGOPSim's result for CompatLogGOPSim's −G.
	end := t + p.O + sim.Time(max(uint64(s.perByte(m.size, p.OverheadPerByte)), uint64(gb)))
	if max(end, t+p.Gap+gb) >= Horizon && s.past(max(end, t+p.Gap+gb), h, "receiving "+where(m.line, m.num)+" of rank "+fmt.Sprint(m.src), fmt.Sprintf("arrival of %d bytes at %v (o + max((s−1)·O, (s−1)·G), g + (s−1)·G)", m.size, t)) {
		return
	}
	s.nexto[c] = end
	s.nextgr[n] = t + p.Gap + gb
	s.proceed(k, recvSet(c, n, s.nnic), t, max(end, s.nextgr[n]))
	m = &s.msgs[k.ref]
	hs := &s.hosts[h]
	if ri := s.takePosted(hs, m.src, m.tag); ri >= 0 {
		if m.size > uint64(p.Eager) {
			s.completeRendezvous(m, t, m.cpu, m.nic)
		}
		s.finished(uint32(ri), end)
		s.freeMsgs = append(s.freeMsgs, k.ref)
		return
	}
	m.end = end
	hs.uq.add(uqLinks{s}, int32(k.ref), s.indexAt)
}

// checkFinished reports a deadlock if any operation or message is left.
func (s *state) checkFinished() error {
	de := &DeadlockError{At: s.now}
	add := func(str string) {
		de.Count++
		if len(de.Stuck) < maxStuck {
			de.Stuck = append(de.Stuck, str)
		}
	}
	for h := range s.hosts {
		hs := &s.hosts[h]
		if !hs.eof {
			s.readThrough(h, math.MaxUint64)
			if s.err != nil {
				return s.err
			}
		}
		for i := uint32(0); i < hs.count; i++ {
			num := hs.base + uint64(i)
			o := s.op(hs.ring[(hs.head+i)&hs.mask()])
			if o.state == stDone {
				continue
			}
			st := goal.Stmt{Kind: o.kind, Size: o.size, Peer: o.peer, Tag: o.tag, CPU: o.cpu, NIC: o.nic}
			var why string
			switch {
			case o.state == stPending:
				why = fmt.Sprintf("never ready, %d unfinished dependencies", o.deps)
			case o.kind == goal.Recv:
				why = "posted, no matching send"
			case o.kind == goal.Send:
				why = "rendezvous, no matching receive"
			default:
				why = "not finished"
			}
			desc := st.Describe()
			if o.kind == goal.Calc {
				desc = fmt.Sprintf("calc %v cpu %d", sim.Time(o.size), o.cpu)
			}
			add(fmt.Sprintf("rank %d %s: %s: %s", h, where(o.line, num), desc, why))
		}
		for _, mi := range hs.uq.all(uqLinks{s}) {
			m := &s.msgs[mi]
			add(fmt.Sprintf("rank %d: message of %db from rank %d (%s) tag %d never received", h, m.size, m.src, where(m.line, m.num), m.tag))
		}
	}
	if de.Count > 0 {
		return de
	}
	return nil
}
