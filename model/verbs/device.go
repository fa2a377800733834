package verbs

import (
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The GPU-side post path (the GPUrdma paper): a GPU thread writes the
// WQE, updates the doorbell record, fences at system scope and writes the
// QP's MMIO doorbell; it then polls the CQ. The stores are real: a WQE in
// GPU memory sits in the (dGPU, write-back) L2 until the system fence
// writes it back, so a doorbell without the fence makes the NIC fetch
// stale bytes.

// store is one GPU store of an 8-byte word into q's rings, costing c: into
// GPU memory through the caches, or a posted write over the GPU's PCIe
// link into host memory (postHost).
func (q *QP) store(wg *gpu.WG, a mem.Addr, v uint64, c sim.Duration) {
	if q.pool == mem.GPU {
		// The calibrated cost includes the store's own L1 access.
		g := wg.GPU().Spec()
		wg.StoreAfter(max(0, c-g.Cycles(g.L1Cycles)), a, v)
		return
	}
	wg.Sleep(c)
	q.postHost(wg, a, v)
}

// postHost enters one GPU store of v at a in host memory into the GPU's
// PCIe link as a posted write. The thread does not wait for the link:
// a GPU store is fire-and-forget, the thread goes on once its store
// instruction has issued (its cost is the caller's), and the link
// serialises the writes behind it; a warp stalls on stores only when its
// memory pipeline is full ("memory throttle" in NVIDIA's profiler stall
// reasons), which one thread's few stores per WQE never reach. The
// system fence before the doorbell waits for the writes' visibility
// (flushRead), so the ordering the NIC needs is kept.
func (q *QP) postHost(wg *gpu.WG, a mem.Addr, v uint64) {
	n := q.node
	_, vis := n.gpuLink.PostedWrite(pcie.Up, wg.Now(), 8)
	vis += n.gpuLink.HostWriteLatency() // through the PCIe switch to the root complex
	q.hostVis = max(q.hostVis, vis)
	m := n.mem
	n.e.At(vis, func() { m.Store64(a, v) })
}

// Post writes w into the next send slot from one GPU thread: FieldStore
// per 8-byte field written, every field on the naive path, only the
// fields that differ from the slot's contents with WQE reuse. It fails,
// naming the QP, when the send queue is full.
func (q *QP) Post(wg *gpu.WG, w nic.WQE) error {
	if q.Outstanding() >= uint64(q.depth) {
		return q.errFull()
	}
	start := wg.Now()
	q.write(wg, w)
	q.stats.WQETime += wg.Now() - start
	return nil
}

func (q *QP) write(wg *gpu.WG, w nic.WQE) {
	w.QPN = q.nq.Num
	s := q.pi % uint64(q.depth)
	base := q.slot(q.pi)
	reuse := q.node.spec.WQEReuse
	for i := range nic.WQEWords {
		v := w.Word(i)
		if reuse && !dynamic(i) && q.sh(s)[i] == v {
			continue
		}
		q.store(wg, base+mem.Addr(8*i), v, q.node.spec.FieldStore)
		q.sh(s)[i] = v
		q.stats.Fields++
	}
	q.pi++
	q.stats.Posts++
}

// dynamic reports whether WQE word i is one of the fields that change
// per message (the GPUrdma paper: size and addresses — words 1, 2,
// 3), which WQE reuse always writes; the static fields are written only
// when they differ from the pre-initialised slot.
func dynamic(i int) bool { return i >= 1 && i <= 3 }

// PostBlock is the threadblock-collaborative post (the dissertation
// §2.4): thread t writes WQE t at its own slot, all lanes together, so
// each field costs one FieldStore for the whole block (one vector store);
// the stores themselves are all made. It fails, naming the QP, when the
// WQEs do not fit the queue.
func (q *QP) PostBlock(wg *gpu.WG, ws []nic.WQE) error {
	if q.Outstanding()+uint64(len(ws)) > uint64(q.depth) {
		return q.errFull()
	}
	start := wg.Now()
	spec := q.node.spec
	for i := range nic.WQEWords {
		var addrs []mem.Addr
		var vals []uint64
		for t, w := range ws {
			w.QPN = q.nq.Num
			k := q.pi + uint64(t)
			s := k % uint64(q.depth)
			v := w.Word(i)
			if spec.WQEReuse && !dynamic(i) && q.sh(s)[i] == v {
				continue
			}
			addrs = append(addrs, q.slot(k)+mem.Addr(8*i))
			vals = append(vals, v)
			q.sh(s)[i] = v
			q.stats.Fields++
		}
		if len(addrs) == 0 {
			continue
		}
		c := spec.FieldStore
		if q.pool == mem.GPU {
			g := wg.GPU().Spec()
			c = max(0, c-g.Cycles(g.L1Cycles)) // the vector store's L1 access is part of it
		}
		wg.Sleep(c)
		q.storeLanes(wg, addrs, vals)
	}
	q.pi += uint64(len(ws))
	q.stats.Posts += uint64(len(ws))
	q.stats.WQETime += wg.Now() - start
	return nil
}

// storeLanes is one vector store into q's rings: through the GPU caches,
// or one posted write per lane over the GPU's PCIe link (postHost: the
// thread does not wait for the link).
func (q *QP) storeLanes(wg *gpu.WG, addrs []mem.Addr, vals []uint64) {
	if q.pool == mem.GPU {
		wg.StoreLanes(addrs, vals)
		return
	}
	for i, a := range addrs {
		q.postHost(wg, a, vals[i])
	}
}

// Ring updates the doorbell record, fences at system scope and writes
// the MMIO doorbell with the producer index (a posted write from the GPU,
// forwarded down the NIC's link). A ring with nothing new is skipped.
func (q *QP) Ring(wg *gpu.WG) {
	q.ring(wg, true)
}

// RingUnfenced is Ring without the system fence: the missing-fix variant
// the visibility tests use (WQE bytes may still sit in the GPU L2).
func (q *QP) RingUnfenced(wg *gpu.WG) { q.ring(wg, false) }

func (q *QP) ring(wg *gpu.WG, fence bool) {
	if q.rung == q.pi {
		return
	}
	start := wg.Now()
	spec := q.node.spec
	q.store(wg, q.dbr, q.pi, spec.DBRecord)
	if fence {
		wg.Sleep(spec.Fence)
		wg.Release(gpu.System)
		if q.pool == mem.Host {
			// Posted writes are never acknowledged: the fence makes the
			// WQE stores to host memory globally visible with a read
			// over the same path, whose completion cannot pass them
			// (PCIe ordering), so it pays one round trip after the
			// last store is visible.
			wg.SleepUntil(flushRead(q, wg))
		}
	}
	q.bell(wg)
	q.rung = q.pi
	q.stats.Doorbells++
	q.stats.DoorbellTime += wg.Now() - start
}

// mmio is a GPU thread's posted MMIO write of size bytes to the NIC
// issued at now: over the GPU's link and, where that link is NVLink-C2C
// to the CPU (GH200), on over the NIC's PCIe link from the CPU's root
// complex. It returns when the thread is free and when the NIC sees it.
func (n *Node) mmio(now sim.Time, size unit.Bytes) (senderFree, visible sim.Time) {
	senderFree, visible = n.gpuLink.PostedWrite(pcie.Up, now, size)
	if n.gpuLink.ChipToChip() {
		_, visible = n.nic.Link().PostedWrite(pcie.Down, visible, size)
	}
	return senderFree, visible
}

// flushRead is the fence's read of host memory that makes the WQE
// stores there globally visible: an 8 B load by wg across the GPU's link,
// issued once the last store is visible (PCIe ordering: the read cannot
// pass them). It returns when the data is back in the core.
func flushRead(q *QP, wg *gpu.WG) sim.Time {
	_, done := wg.HostLoad(q.node.gpuLink, q.hostVis, 8)
	return done
}

// FlushPPB is the GIO device runtime's flush of the PCIe-path cache: a
// posted MMIO write of its control register over the GPU's link; the
// flush completes its latency after the write arrives, and NIC reads of
// GPU memory that reach the PPB meanwhile wait for it (nic.FlushPPBAt).
func (q *QP) FlushPPB(wg *gpu.WG) { wg.SleepUntil(q.BeginFlushPPB(wg)) }

// BeginFlushPPB is FlushPPB without the wait: it issues the flush's MMIO
// write now and returns when wg's side of it is done (where FlushPPB's
// wait ends).
//
// The control write is a store of the work-group like the ones before it
// (ROC_SHMEM's hdp_flush is a plain store to the mapped register, with no
// wait between the caller's stores and it): it leaves the GPU through the
// same memory pipeline behind them and does not pass them, so it reaches
// the PPB no earlier than they reach memory plus its own way over the
// link. The work-group does not wait for that (a posted store). Without
// the order, a flush arriving before a store to a put's source landed
// could be followed by another put's NIC read caching the line without
// that store (halo3d on preset compnet at a 100 MHz GPU clock, whose
// cycles the store's way through the L2 pays and the link's latency does
// not). The link's bookkeeping of the 8 B stays at the issue (under a
// nanosecond of its byte server).
func (q *QP) BeginFlushPPB(wg *gpu.WG) sim.Time {
	n := q.node
	now := wg.Now()
	sf, vis := n.mmio(now, 8)
	if behind := wg.StoresAt() - now; behind > 0 {
		vis += behind
	}
	n.nic.FlushPPBAt(vis)
	return sf
}

// The CQ poll (the GPUrdma paper) is a loop of real loads of
// the CQE slot: from GPU memory a volatile load at the GPU's memory
// latency, from host memory a non-posted PCIe read, one round trip per
// iteration. A CQE is seen by the first load that samples the slot after
// the NIC's write has landed, never at the write itself.

// pollLoad is one poll iteration by a GPU thread: it loads CQE slot k and
// reports whether the load saw a valid CQE. Either load reads the slot at
// its sample point, when the request reaches the memory that holds it,
// and the thread has the answer when the data is back: a GPU-memory load
// after the L2 lookup and half of the memory latency (gpu.WG.AtomicLoad),
// a PCIe read when it reaches host memory, a one-way latency before its
// completion. sample, when not nil, runs at the sample point too (the
// collaborative poll's lanes read their slots there).
func (c *CQ) pollLoad(wg *gpu.WG, k uint64, sample func()) bool {
	c.Loads++
	defer c.traceLoad(wg, wg.Now())
	if c.node.spec.PollInvalidate {
		g := wg.GPU().Spec()
		wg.Sleep(g.Cycles(g.L1InvCycles))
	}
	var ok bool
	read := func() {
		_, ok = c.cqeAt(k)
		if sample != nil {
			sample()
		}
	}
	if c.pool == mem.GPU {
		wg.AtomicLoad(c.nq.SlotAddr(k), read)
		return ok
	}
	sampled, done := wg.HostLoad(c.node.gpuLink, wg.Now(), nic.CQESize)
	wg.SleepUntil(sampled)
	read()
	wg.SleepUntil(done)
	return ok
}

// idle advances a GPU-memory poll loop whose last load, ending now, saw
// no valid CQE in slot k, to the end of the first later load that does:
// the loop's loads start every per (the memory latency, after the L1
// invalidate when polls invalidate) and each reads the slot at its sample
// point (gpu.GPU.LoadSample into its access), so that is the first load
// whose sample point is at or after the NIC's write lands. The iterations
// in between would each load the same invalid slot; they are counted, not
// simulated one by one (a GPU-memory load is a fixed cost with no shared
// resource, so the times are exactly those of the loop). A host-memory CQ
// has no shortcut: every iteration is a real PCIe read. It reports
// whether the load it ends on saw a valid CQE.
func (c *CQ) idle(wg *gpu.WG, k uint64, what string) bool {
	if c.pool != mem.GPU {
		return c.pollLoad(wg, k, nil)
	}
	t1 := wg.Now()
	if _, ok := c.cqeAt(k); !ok {
		wg.Wait(c.node.mem.Watch(c.nq.SlotAddr(k)), what)
	}
	per, sample := c.loopTimes(wg, 0)
	n := 1 + loadsBefore(wg.Now()-t1, sample, per)
	wg.SleepUntil(t1 + n*per)
	c.Loads += uint64(n)
	if wg.Engine().Tracer() != nil {
		for i := range n {
			wg.Engine().Span(wg.Name(), traceGPULoad, t1+i*per, t1+(i+1)*per)
		}
	}
	_, ok := c.cqeAt(k)
	return ok
}

// The trace's names of a poll and of its loads (--trace): a poll of a
// GPU-memory CQ is a row of GPU loads, one of a host-memory CQ a row of
// PCIe reads, each span one load from its issue to its data's return.
const (
	tracePoll     = "CQ poll"
	traceGPULoad  = "CQ load: GPU memory"
	traceHostLoad = "CQ load: host memory (PCIe read)"
)

// traceLoad records one poll load that began at start and ends now.
func (c *CQ) traceLoad(wg *gpu.WG, start sim.Time) {
	name := traceGPULoad
	if c.pool != mem.GPU {
		name = traceHostLoad
	}
	wg.Engine().Span(wg.Name(), name, start, wg.Now())
}

// loadFrom is pollLoad of a GPU-memory CQ for a load that began at from,
// at or before now, whose sample point is not before now: the load a poll
// loop's closed form finds in flight when the CQE lands. read runs at the
// sample point.
func (c *CQ) loadFrom(wg *gpu.WG, from sim.Time, read func()) {
	c.Loads++
	per, sample := c.loopTimes(wg, 0)
	wg.SleepUntil(from + sample)
	read()
	wg.SleepUntil(from + per)
	c.traceLoad(wg, from)
}

// loopTimes returns the period of a GPU-memory poll loop whose
// iterations are one load of a CQE slot and extra (the collaborative
// poll's vote), and how far into an iteration its load samples the slot.
func (c *CQ) loopTimes(wg *gpu.WG, extra sim.Duration) (per, sample sim.Duration) {
	g := wg.GPU().Spec()
	// One AtomicLoad of a line the loop's previous load has just made:
	// memory's latency, or an L2 hit behind a memory-side L2, which the
	// NIC's CQE write updates (gpu.GPU.PollLoad).
	per, sample = wg.GPU().PollLoad(c.nq.SlotAddr(c.ci))
	per += extra
	if c.node.spec.PollInvalidate {
		per += g.Cycles(g.L1InvCycles)
		sample += g.Cycles(g.L1InvCycles)
	}
	return per, sample
}

// loadsBefore returns how many iterations of a poll loop (period per, its
// load sampling sample into an iteration) that starts now run whole
// before the first whose load samples at or after a write landing w from
// now: those that sample before w.
func loadsBefore(w, sample, per sim.Duration) sim.Duration {
	if w <= sample {
		return 0
	}
	return (w - sample + per - 1) / per
}

// busyPoll makes wg, about to poll a host-memory CQ, a busy poller and
// reports whether it did: every iteration is a PCIe read with nothing to
// wait on (a GPU-memory CQ waits on its slot's writes instead), so the
// polls would keep the event queue busy and hide a deadlock of whatever
// should complete the work (sim/poll.go).
func (c *CQ) busyPoll(wg *gpu.WG) bool {
	if c.pool == mem.GPU {
		return false
	}
	wg.SetPoller("a CQE in host memory")
	return true
}

// frozen parks wg for good once its busy poll found the simulation
// frozen (the run has failed with the deadlock; the engine ends it).
func (c *CQ) frozen(wg *gpu.WG) {
	var never sim.Signal
	wg.Wait(&never, "a CQE in host memory (frozen)")
}

// Poll polls the CQ from one GPU thread until the next CQE is valid,
// consumes it (retiring a WQE of the QP it names) and returns it.
func (c *CQ) Poll(wg *gpu.WG) nic.CQE {
	k, start := c.ci, wg.Now()
	defer func() { wg.Engine().Span(wg.Name(), tracePoll, start, wg.Now()) }()
	ok := c.pollLoad(wg, k, nil)
	busy := !ok && c.busyPoll(wg)
	if busy {
		defer wg.StopPolling()
	}
	for !ok {
		wg.PollStart()
		ok = c.idle(wg, k, "CQE")
		if busy && wg.PollRound(ok) {
			c.frozen(wg)
		}
	}
	e, _ := c.cqeAt(k)
	c.consume(e)
	return e
}

// WaitQP polls until q has at most keep WQEs outstanding and returns the
// first error CQE seen, if any.
func (c *CQ) WaitQP(wg *gpu.WG, q *QP, keep uint64) (bad nic.CQE, ok bool) {
	return c.pollWhile(wg, q, func() bool { return q.Outstanding() > keep })
}

// WaitDone polls until n WQEs of q have completed (a context's own posts
// on a QP it shares with others: the later posts of the others are not
// waited for) and returns the first error CQE seen, if any. The CQ must
// hold only q's completions and have one poller at a time.
func (c *CQ) WaitDone(wg *gpu.WG, q *QP, n uint64) (bad nic.CQE, ok bool) {
	return c.pollWhile(wg, q, func() bool { return q.Completed() < n })
}

// pollWhile polls c while more is true, counting the polls and their time
// in q's statistics, and returns the first error CQE seen, if any.
func (c *CQ) pollWhile(wg *gpu.WG, q *QP, more func() bool) (bad nic.CQE, ok bool) {
	start := wg.Now()
	ok = true
	for more() {
		e := c.Poll(wg)
		q.stats.Polls++
		if e.Status != nic.WCSuccess && ok {
			bad, ok = e, false
		}
	}
	q.stats.PollTime += wg.Now() - start
	return bad, ok
}

// Scanner is one thread block's view of a shared CQ for the
// collaborative poll (the GPUrdma paper): thread t examines slot
// cursor+t, and a warp vote tells whether any slot holds a CQE of the
// block's QP. Each block keeps its own cursor; the CQ must hold every CQE
// of the run (no block consumes for the others).
type Scanner struct {
	cq     *CQ
	qp     *QP
	cursor uint64
	width  int
	seen   []slotSeen // a round's slots as its loads read them
}

// slotSeen is one CQ slot as a lane's load read it.
type slotSeen struct {
	e     nic.CQE
	valid bool
}

// NewScanner returns block q's scanner of its CQ with width threads.
func (q *QP) NewScanner(width int) *Scanner { return &Scanner{cq: q.cq, qp: q, width: width} }

// Wait scans until the block's QP has at most keep WQEs outstanding. Each
// round costs one parallel load (all lanes at once) and the vote.
func (s *Scanner) Wait(wg *gpu.WG, keep uint64) (bad nic.CQE, ok bool) {
	start := wg.Now()
	ok = true
	q, c := s.qp, s.cq
	busy := q.Outstanding() > keep && c.busyPoll(wg)
	if busy {
		defer wg.StopPolling()
	}
	inFlight, from := false, sim.Time(0) // the next round's load began at from (closed form below)
	for q.Outstanding() > keep {
		wg.PollStart()
		out, cur0 := q.Outstanding(), s.cursor
		base := s.cursor
		s.seen = s.seen[:0]
		read := func() { // each lane's load reads its slot at the sample point
			for t := range s.width {
				e, valid := c.cqeAt(base + uint64(t))
				s.seen = append(s.seen, slotSeen{e, valid})
			}
		}
		if inFlight {
			c.loadFrom(wg, from, read)
			inFlight = false
		} else {
			c.pollLoad(wg, base, read)
		}
		wg.Scalar(4) // the warp vote
		q.stats.Polls++
		adv := true
		for t, sn := range s.seen {
			k := base + uint64(t)
			e, valid := sn.e, sn.valid
			if !valid {
				adv = false
				continue
			}
			if adv {
				s.cursor = k + 1
			}
			if e.QPN == q.nq.Num && k >= q.scanned {
				q.scanned = k + 1
				q.retire(e)
				if e.Status != nic.WCSuccess && ok {
					bad, ok = e, false
				}
			}
		}
		if q.Outstanding() > keep && c.pool == mem.GPU {
			// Rounds that would find the cursor's slot still invalid
			// (each one load and the vote) in closed form, as CQ.idle:
			// those whose load read the slot before the CQE landed. The
			// next round began at its place in the loop, possibly before
			// the landing (its load in flight, reading the slot after it).
			if _, valid := c.cqeAt(s.cursor); !valid {
				t1 := wg.Now()
				wg.Wait(c.node.mem.Watch(c.nq.SlotAddr(s.cursor)), "CQE (collaborative)")
				g := wg.GPU().Spec()
				per, sample := c.loopTimes(wg, g.Cycles(g.ScalarCycles*4))
				n := loadsBefore(wg.Now()-t1, sample, per)
				c.Loads += uint64(n)
				q.stats.Polls += uint64(n)
				if wg.Engine().Tracer() != nil {
					load, _ := c.loopTimes(wg, 0)
					for i := range n {
						wg.Engine().Span(wg.Name(), traceGPULoad, t1+i*per, t1+i*per+load)
					}
				}
				inFlight, from = true, t1+n*per
			}
		}
		if busy && wg.PollRound(q.Outstanding() < out || s.cursor != cur0) {
			c.frozen(wg)
		}
	}
	q.stats.PollTime += wg.Now() - start
	return bad, ok
}
