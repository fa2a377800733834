package shmem

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cp"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// queueBackend is the host-forwarding family (GHN_*, COMPNET): one queue
// per work-group, service threads that own queues round-robin, and the
// OpenSHMEM-over-Portals library they call.
type queueBackend struct {
	dev    *Device
	kind   Kind
	spec   Spec
	sw     cost.Spec
	prod   producer
	queues []*queue
	svcs   []*service
	lib    *lib
	// deviations from the preset the thread placement made (cores added
	// or time-sliced), for the report.
	deviations []string
	// split: GHN_DGPU with Spec.QueueInGPU off (ROC_SHMEM's placement):
	// entries in host memory, completion status in GPU memory.
	split bool
}

func newQueueBackend(d *Device) (*queueBackend, error) {
	rt := d.rt
	n := rt.node
	if n.GPU == nil || n.NIC == nil {
		return nil, fmt.Errorf("shmem %s on PE %d: needs a GPU and a NIC", rt.kind, n.PE)
	}
	b := &queueBackend{dev: d, kind: rt.kind, spec: rt.spec, sw: n.SW}
	mode := n.GPU.Spec().Mode
	switch rt.kind {
	case GHNAPU:
		if mode != "apu" {
			return nil, fmt.Errorf("shmem %s on PE %d: needs gpu.mode = apu (coherent shared memory), got %s", rt.kind, n.PE, mode)
		}
		b.prod = gpuProducer{scope: gpu.System, g: n.GPU}
	case GHNDGPU, CompNetCP, GHNHostQ:
		if mode != "dgpu" {
			return nil, fmt.Errorf("shmem %s on PE %d: needs gpu.mode = dgpu, got %s", rt.kind, n.PE, mode)
		}
	}
	b.split = rt.kind == GHNDGPU && !rt.spec.QueueInGPU
	switch rt.kind {
	case GHNDGPU:
		b.prod = gpuProducer{scope: gpu.System, g: n.GPU}
		if b.split {
			b.prod = splitProducer{host: &hostqProducer{link: n.GPULink, m: n.Mem}, dev: gpuProducer{scope: gpu.System, g: n.GPU}, m: n.Mem}
		}
	case CompNetCP:
		b.prod = gpuProducer{scope: gpu.Device, locked: rt.spec.LLCLocking, g: n.GPU}
	case GHNHostQ:
		b.prod = &hostqProducer{link: n.GPULink, m: n.Mem}
	}
	pool, resPool, libPool := mem.GPU, mem.GPU, mem.Host
	if rt.kind == GHNHostQ {
		pool, resPool = mem.Host, mem.Host
	}
	if b.split {
		pool = mem.Host
	}
	if rt.kind == CompNetCP {
		libPool = mem.GPU
	}
	q := uint64(rt.spec.QueueEntries)
	for i := range d.queues {
		ring, ctrl := allocRing(n.Mem, pool, q*entrySize+mem.LineSize, fmt.Sprintf("shmem.queue[%d]", i))
		res := n.Mem.AllocData(resPool, q*8, fmt.Sprintf("shmem.results[%d]", i))
		n.GPU.ShareWithNIC(res, q*8)
		qu := &queue{idx: i, q: q, ring: ring, readIdx: ring + mem.Addr(q*entrySize), results: res,
			done: make([]bool, q), ctrl: ctrl}
		if ctrl {
			n.Mem.MarkControl(qu.readIdx, 8)
		}
		if b.split {
			qu.status = n.Mem.AllocData(mem.GPU, q*8, fmt.Sprintf("shmem.status[%d]", i))
		}
		b.queues = append(b.queues, qu)
	}
	b.lib = newLib(b, n, libPool)
	b.startServices()
	return b, nil
}

// allocRing allocates a work-group queue's ring of size bytes. In a
// payload-free memory it keeps only the lines the queue uses (control
// ctrl: the read index's line now, each slot's line at the producer's
// first claim of it, queue.claimFirst), each with the bytes it is written
// (mem.Memory.MarkControl): a halo's work-group posts a few entries of
// its 64, and the first poll of a ring with real bytes backed all of it,
// 4 KiB for each of a GPU's 26 queues, 0.9 GB at 8,192 GPUs. A line not
// marked reads as zeros, as a slot not written yet does.
func allocRing(m *mem.Memory, pool mem.Pool, size uint64, name string) (a mem.Addr, ctrl bool) {
	if m.Functional() {
		return m.AllocData(pool, size, name), false
	}
	return m.Alloc(pool, size, name), true
}

func (b *queueBackend) Expose(idx int, base mem.Addr, size uint64) { b.lib.expose(idx, base, size) }

func (b *queueBackend) Open(wg *gpu.WG, q int) (Channel, error) {
	if wg.GPU() != b.dev.rt.node.GPU {
		return nil, fmt.Errorf("work-group of another GPU")
	}
	return &qchan{b: b, q: b.queues[q], wg: wg}, nil
}

// startServices spawns the service threads and splits the queues evenly
// among them (contiguous blocks).
func (b *queueBackend) startServices() {
	n := b.dev.rt.node
	threads := min(b.spec.Threads, len(b.queues))
	cores := 0 // GHN: helper threads are pinned to cores 1…cores (core 0 runs the application)
	if b.kind == CompNetCP {
		// One CP core per thread (cp.oversubscribe keeps cp.cores and
		// time-slices instead).
		if add := n.CP.Provision(threads); add > 0 {
			b.deviations = append(b.deviations, fmt.Sprintf("%d service threads on %d CP cores (the preset has %d): one hardware context per thread, as the documents' simulator ran them; cp.oversubscribe=true time-slices them on cp.cores instead",
				threads, n.CP.Cores(), n.CP.Spec().Cores))
		} else if threads > n.CP.Cores() {
			b.deviations = append(b.deviations, fmt.Sprintf("%d service threads time-sliced on %d CP cores (cp.oversubscribe, quantum %v): the documents do not describe time-slicing",
				threads, n.CP.Cores(), n.CP.Spec().Quantum))
		}
	} else {
		cores = b.spec.HostCores
		if cores == 0 {
			// One host core per helper thread, besides the application's.
			cores = threads
			if need := threads + 1 - n.CPU.Cores(); need > 0 {
				b.deviations = append(b.deviations, fmt.Sprintf("%d helper threads + the application thread on %d host cores (the preset has %d): one hardware context per thread, as the documents' simulator ran them; shmem.host_cores pins them to fewer cores, time-sliced",
					threads, threads+1, n.CPU.Spec().Cores))
				n.CPU.AddCores(need)
			}
		} else if threads > cores {
			b.deviations = append(b.deviations, fmt.Sprintf("%d helper threads time-sliced on %d host cores (shmem.host_cores): the documents do not describe time-slicing", threads, cores))
		}
		cores = max(1, min(cores, n.CPU.Cores()))
	}
	// Several callers of the library (service threads, or a service
	// thread and the progress thread) need SHMEM_THREAD_MULTIPLE.
	b.lib.multiple = threads > 1 || b.kind == GHNDGPU && b.spec.ProgressThread
	for t := range threads {
		s := &service{b: b}
		for i, q := range b.queues {
			if i*threads/len(b.queues) == t {
				s.queues = append(s.queues, q)
				q.owner = s
			}
		}
		b.svcs = append(b.svcs, s)
		name := fmt.Sprintf("svc[%d]", t)
		if b.kind == CompNetCP {
			n.CP.Spawn(name, func(th *cp.Thread) {
				s.port = &cpPort{t: th, acquire: b.spec.ConsumerAcquire}
				th.Proc.SetPoller(s.what()) // its polls are simulated one by one (sim/poll.go)
				s.run()
			})
			continue
		}
		core := (1 + t%cores) % n.CPU.Cores()
		_, err := n.CPU.SpawnOn(core, name, func(th *cpu.Thread) {
			s.port = &hostPort{t: th, spec: n.CPU.Spec(), link: n.GPULink, m: n.Mem,
				overPC: b.kind == GHNDGPU && !b.split}
			if hp := s.port.(*hostPort); hp.overPC {
				// Its polls across PCIe are simulated one by one (through
				// its cache it sleeps on a signal between busy stretches:
				// no busy poller).
				th.Proc.SetPoller(s.what())
			}
			s.run()
		})
		if err != nil {
			panic(err) // core is in range by construction
		}
	}
	if b.kind == GHNDGPU && b.spec.ProgressThread {
		b.startProgress(threads)
	}
}

// Stop ends the service threads and reports them. Static power is a
// core's (the dissertation: the profile of the core type running the
// thread): threads time-sliced on one core share that core's static
// energy, P_static × the longest of their lives, in proportion to their
// lives, instead of each paying for a core of its own. A thread alone on
// its core (the documents' case) pays P_static × its life.
func (b *queueBackend) Stop() Report {
	rep := Report{Deviations: b.deviations}
	es := b.dev.rt.spec.Energy
	type coreKey struct {
		typ string
		id  int
	}
	span := map[coreKey]sim.Duration{} // longest life on the core
	lives := map[coreKey]sim.Duration{}
	var keys []coreKey
	for _, s := range b.svcs {
		s.stop = true
		if s.port == nil {
			continue
		}
		if sig := s.port.nudge(); sig != nil {
			sig.Notify()
		}
		s.settle()
		n := s.port.counts()
		alive := s.port.proc().Now() - s.start
		k := coreKey{s.port.coreType(), s.port.core()}
		span[k] = max(span[k], alive)
		lives[k] += alive
		keys = append(keys, k)
		rep.Threads = append(rep.Threads, ThreadReport{Name: s.port.name(), Core: k.typ, CoreID: k.id, Alive: alive, OnCore: s.port.onCore(),
			Counts: n, Polls: s.polls, Served: s.served, Preemptions: s.port.preemptions()})
	}
	rep.Locks, rep.LockSpins = b.lib.locks, b.lib.spins // after settle: a quiet's marks count their locks there
	for i := range rep.Threads {
		tr, k := &rep.Threads[i], keys[i]
		prof := es.Host
		if k.typ == "cp" {
			prof = es.CP
		}
		tr.Energy = prof.of(0, tr.Counts)
		if lives[k] > 0 {
			tr.Energy.Static = prof.Static * span[k].Seconds() * float64(tr.Alive) / float64(lives[k])
		}
		rep.Energy.Static += tr.Energy.Static
		rep.Energy.Dynamic += tr.Energy.Dynamic
	}
	return rep
}

// service is one service thread: the consumer protocol of
// the dissertation's ComP-Net chapter.
type service struct {
	b        *queueBackend
	progress *progress // GHN_DGPU with Spec.ProgressThread: issues go through it
	port     consumer
	queues   []*queue
	pending  []pend
	clock    quietClock
	stop     bool
	start    sim.Time
	polls    uint64
	served   uint64
	steps    *pollSteps  // its polls as steps (nil: the blocking loop)
	mem      *mem.Memory // its node's memory (posted), once looked up
}

// settle brings the thread's counts up to date with the relayed wake-ups
// of its polls that have run (pollSteps.settle), before they are read.
func (s *service) settle() {
	if ps := s.steps; ps != nil && ps.rel != 0 {
		ps.settle(s.port.proc())
	}
	if ps := s.steps; ps != nil && ps.g.on { // its empty polls as marks: the body resumes at the next (ghost.go)
		ps.ghostWake()
		ps.ghostSettle()
	}
}

type pend struct {
	q *queue
	e entry
}

// what names the queues the thread polls, for deadlock reports.
func (s *service) what() string {
	if len(s.queues) == 1 {
		return fmt.Sprintf("queue %d's next slot", s.queues[0].idx)
	}
	return fmt.Sprintf("the next slots of %d queues", len(s.queues))
}

// nudge wakes the thread if it sleeps through an idle stretch.
func (s *service) nudge() {
	if s.port == nil {
		return
	}
	if sig := s.port.nudge(); sig != nil {
		sig.Notify()
	}
}

func (s *service) run() {
	defer s.port.exit()
	s.start = s.port.proc().Now()
	if sp, ok := s.port.(stepPort); ok {
		s.runSteps(sp)
		return
	}
	sw := &s.b.sw
	for !s.stop {
		s.port.proc().PollStart()
		found := false
		for _, q := range s.queues {
			if s.visit(q) {
				found = true
			}
		}
		if s.clock.endRound(s.b.spec.QuietRounds) && len(s.pending) > 0 {
			s.quietPending()
		}
		if !found && len(s.pending) == 0 && s.port.idle() {
			s.sleep(sw.ConsumerPoll)
		}
		if !s.roundChecks(found) {
			return
		}
	}
}

// roundChecks ends a round that found an entry (found) or not: a round
// that found nothing with nothing pending checks for a stale CP L1 and
// for a deadlock of the other agents, failing the run (false) on either.
func (s *service) roundChecks(found bool) bool {
	if !found && len(s.pending) == 0 {
		if err := s.stale(); err != nil {
			s.port.proc().Engine().Fail(err)
			return false
		}
		// Nothing but the service threads' polls left to happen: a
		// deadlock of the other agents, which these polls would
		// otherwise hide by never letting the event queue empty.
		// (A thread that will hand its core to a waiting one at the
		// slice end is not idle: the waiter may find work.)
		if p := s.port.proc(); s.port.contended() {
			p.PollBusy()
		} else if !s.stop && p.PollIdle() {
			p.Engine().Fail(p.Engine().PollDeadlock())
			return false
		}
	} else {
		s.port.proc().PollBusy()
	}
	return true
}

// stale detects the hazard shmem.consumer_acquire=false shows: a CP
// service thread polling without the acquire marker reads its L1 copy of
// each slot. When every slot it polls hits the L1 and nothing is pending
// (no quiet will issue an acquire), no poll can ever miss or see a change,
// so an entry posted to a slot whose copy is stale is never served and the
// work-group waits forever. That is a livelock the engine's deadlock check
// cannot see (the polls keep the event queue busy), so it fails the run
// here, naming the queue. It returns nil whenever the thread may still see
// a change: another thread's coherent port or any poll that misses.
func (s *service) stale() error {
	c, ok := s.port.(*cpPort)
	if !ok || c.acquire {
		return nil
	}
	g := s.b.dev.rt.node.GPU
	var stuck *queue
	for _, q := range s.queues {
		slot := q.slot(q.rd)
		hit, stale := c.t.L1State(mem.Line(slot))
		if !hit {
			return nil
		}
		if stale && stuck == nil {
			d := g.CoherentLine(mem.Line(slot))
			var w [8]uint64
			for i := range w {
				w[i] = binary.LittleEndian.Uint64(d[8*i:])
			}
			if e := decode(w); e.status == statusPosted && e.seq == q.rd {
				stuck = q
			}
		}
	}
	if stuck == nil {
		return nil
	}
	return fmt.Errorf("%w at %v: service thread %s polls a stale copy of queue %d's slot %d in its CP L1 and never sees the entry posted there (shmem.consumer_acquire=false: only the acquire marker drops the copy; set it to true)",
		sim.ErrLivelock, s.now(), c.name(), stuck.idx, stuck.rd)
}

// visit is steps 1–4 for one queue. Its parts are spans on the thread's
// trace track (poll, dequeue, library call, Portals post) and phase
// stamps of blocking calls.
func (s *service) visit(q *queue) bool {
	slot := q.slot(q.rd)
	start := s.now()
	st := s.port.poll(slot)
	s.port.instr(s.b.sw.ConsumerPoll)
	s.polls++
	s.span("poll", start)
	if uint32(st) != statusPosted {
		return false
	}
	return s.dequeue(q)
}

// dequeue is steps 2–4 for queue q after a poll saw its slot POSTED: read
// the entry, hand it to the library, complete or keep it pending, and
// publish the read index. It reports whether it served an entry.
func (s *service) dequeue(q *queue) bool {
	slot := q.slot(q.rd)
	found := s.now()
	e := decode(s.port.line(slot))
	if e.status != statusPosted || e.seq != q.rd {
		return false // an entry of an earlier lap, left POSTED while pending
	}
	if e.blocking() {
		q.stamp(e.seq, PhaseDequeue, found)
	}
	s.span("dequeue", found)
	if s.progress != nil {
		s.progress.hand(s, q, e)
	} else {
		s.b.lib.issue(s, q, e)
	}
	s.served++
	if e.blocking() {
		s.pending = append(s.pending, pend{q, e}) // converted to non-blocking, completed by a quiet
	} else {
		s.complete(q, e.seq, word0(e, statusComplete))
	}
	q.rd++
	s.port.store(q.readIdx, q.rd) // publish the shared read index
	return true
}

// complete writes slot seq's completion word w: into the entry's word 0,
// and with the status in GPU memory also a posted PCIe write of the status
// flag the work-group polls there.
func (s *service) complete(q *queue, seq uint64, w uint64) {
	s.port.store(q.slot(seq), w)
	if q.status != 0 {
		s.port.remote(q.stat(seq), uint64(uint32(w)))
	}
}

// now is the thread's time.
func (s *service) now() sim.Time { return s.port.proc().Now() }

// span records what the thread did since start on its trace track.
func (s *service) span(what string, start sim.Time) {
	p := s.port.proc()
	p.Engine().Span(s.port.name(), what, start, p.Now())
}

func word0(e entry, status uint32) uint64 {
	return uint64(status) | uint64(e.op)<<32 | uint64(e.flags)<<48
}

// quietPending is step 5: quiet each context with pending entries and
// mark its entries COMPLETE (or FAILED). [DEFAULT resolution] The quiet
// checks the context's CT and does not block: a context whose
// operations are still in flight keeps its entries pending until a later
// round, so the thread keeps serving the other work-groups and one
// context's quiet never waits for another's traffic (§1.1 contexts; the
// "skip the quiet when the CTs show completion" optimization of §1.4).
func (s *service) quietPending() {
	ctxs := map[int]int{}
	var order []int
	for _, p := range s.pending {
		if ctxs[p.q.idx] == 0 {
			order = append(order, p.q.idx)
		}
		ctxs[p.q.idx]++
	}
	done, failed := map[int]bool{}, map[int]bool{}
	any := false
	start := s.now()
	defer s.span("quiet", start)
	s.port.acquireSystem() // the NIC-written CT copies (and fetch results) seen
	for _, c := range order {
		if p := s.progress; p != nil && p.handed[c] > p.issued[c] {
			continue // operations of the context still wait for the progress thread
		}
		done[c], failed[c] = s.b.lib.quiet(s.port, c, ctxs[c])
		any = any || done[c]
	}
	if !any {
		return
	}
	s.completeQuieted(done, failed, start)
}

// completeQuieted is the end of quietPending's pass that found contexts
// done: their entries marked COMPLETE (or FAILED), the others kept.
func (s *service) completeQuieted(done, failed map[int]bool, start sim.Time) {
	keep := s.pending[:0]
	for _, p := range s.pending {
		if !done[p.q.idx] {
			keep = append(keep, p)
			continue
		}
		st := uint32(statusComplete)
		if failed[p.q.idx] {
			st = statusFailed
		}
		p.q.stamp(p.e.seq, PhaseQuiet, start)
		s.complete(p.q, p.e.seq, word0(p.e, st))
		p.q.stamp(p.e.seq, PhaseComplete, s.now())
	}
	s.pending = keep
}

// sleep sleeps through an idle stretch of a coherent-cache poller: every
// poll would hit an unchanged line. The polls are accounted, not run.
func (s *service) sleep(instr int) {
	start := s.now()
	s.port.idleWait("a posted entry", s.posted)
	s.slept(start, instr)
}

// posted reports whether an idle sleep is over: the thread stops, or an
// owned queue's next slot holds a posted entry (posted since the round
// polled it: poll again).
func (s *service) posted() bool {
	if s.stop {
		return true
	}
	m := s.mem
	if m == nil { // looked up once: four pointers away, cold at each call
		m = s.b.dev.rt.node.Mem
		s.mem = m
	}
	for _, q := range s.queues {
		if uint32(m.Load64(q.slot(q.rd))) == statusPosted {
			return true
		}
	}
	return false
}

// slept accounts an idle sleep that began at start: the polls it stands
// for.
func (s *service) slept(start sim.Time, instr int) {
	p := s.port.proc()
	if cost := s.port.pollCost(instr); cost > 0 {
		polls := uint64((p.Now() - start) / cost)
		s.port.skip(polls, instr)
		s.polls += polls
		// The rounds slept through count toward the quiet block, as
		// the polls they stand for would have.
		s.clock.skip(int(polls/uint64(len(s.queues))), s.b.spec.QuietRounds)
	}
}

// quietClock is step 5's schedule: the thread polls in blocks of
// quiet_rounds rounds and quiets at the end of each block "if the
// pending list is not empty". "After performing a predefined number of
// polling rounds through all queues assigned to it, the CP will quiet
// the network and mark all blocking queue entries as complete" (the
// dissertation's ComP-Net chapter). The count restarts at every block's
// end, pending or not: an entry found after an idle stretch waits for the
// end of its block like any other, instead of a quiet at the end of the
// very round that issued it, which cannot find the operation complete
// (and costs the CP an L2 invalidation).
type quietClock struct{ rounds int }

// endRound counts one finished round and reports whether it closes a
// block of every rounds.
func (c *quietClock) endRound(every int) bool {
	c.rounds++
	if c.rounds < every {
		return false
	}
	c.rounds = 0
	return true
}

// skip counts n rounds slept through (nothing was pending, so no block
// end among them quiets anything).
func (c *quietClock) skip(n, every int) { c.rounds = (c.rounds + n) % every }
