package gpi

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Side says who drives a rank's GPI calls, which decides where its queues,
// CQs, notification area and segments live.
type Side uint8

// Sides.
const (
	GPUSide Side = iota // GPU threads: queues where gnn.qp_loc/cq_loc say, data in GPU memory
	CPUSide             // a host thread: everything in host memory
)

// World is the GPI state of one run.
type World struct {
	d      *verbs.Domain
	sides  []Side
	notifs int
	areas  []area
	segs   map[int][]area // segment id → per rank
	qps    map[qkey]*verbs.QP
	cqs    map[[2]int]*verbs.CQ
	// cqPeers is the most peers a rank's queue connects to (SetCQPeers;
	// 0: every other rank), which its CQ is sized for.
	cqPeers int
}

// SetCQPeers sizes the CQs made from now on for QPs to at most n peers
// per rank and queue (an application whose pattern is sparse, that
// connects with ConnectPair): a halo exchange's 6 or 26 neighbours, not
// the 8,191 other ranks of 8,192 GPUs, whose CQ (2 × 8,191 × the QP
// depth) no NIC allows. n < 1 is every other rank.
func (w *World) SetCQPeers(n int) { w.cqPeers = n }

type area struct {
	addr mem.Addr
	size uint64
	mr   *nic.MR
}

type qkey struct{ rank, queue, peer int }

// New returns the GPI world over d with a notification area of notifs
// flags on each rank, rank i driven by sides[i].
func New(d *verbs.Domain, sides []Side, notifs int) (*World, error) {
	if len(sides) != d.Size() {
		return nil, fmt.Errorf("gpi: %d sides for %d ranks", len(sides), d.Size())
	}
	if notifs < 1 || notifs > 1<<16 {
		return nil, fmt.Errorf("gpi: %d notifications: must be in [1, 65536]", notifs)
	}
	w := &World{d: d, sides: sides, notifs: notifs, segs: map[int][]area{}, qps: map[qkey]*verbs.QP{}, cqs: map[[2]int]*verbs.CQ{}}
	for r := range sides {
		n := d.Node(r)
		sz := uint64(notifs) * 8
		a := n.Mem().AllocData(w.dataPool(r), sz, "gpi.notifications")
		w.areas = append(w.areas, area{addr: a, size: sz, mr: n.RegMR(a, sz)})
	}
	return w, nil
}

func (w *World) dataPool(rank int) mem.Pool {
	if w.sides[rank] == CPUSide {
		return mem.Host
	}
	return mem.GPU
}

// SegmentCreate allocates segment id of size bytes on rank (GPU memory on
// a GPU-side rank, host memory otherwise) and registers it.
func (w *World) SegmentCreate(id, rank int, size uint64) mem.Addr {
	return w.SegmentCreateIn(id, rank, size, w.dataPool(rank))
}

// SegmentCreateIn is SegmentCreate in an explicit pool (a CPU-driven rank
// whose data the GPU computes on registers GPU memory).
func (w *World) SegmentCreateIn(id, rank int, size uint64, pool mem.Pool) mem.Addr {
	s := w.segs[id]
	if s == nil {
		s = make([]area, len(w.sides))
		w.segs[id] = s
	}
	n := w.d.Node(rank)
	a := n.Mem().Alloc(pool, size, fmt.Sprintf("gpi.segment[%d]", id))
	s[rank] = area{addr: a, size: size, mr: n.RegMR(a, size)}
	return a
}

// SegmentAddr returns where segment id lives on rank.
func (w *World) SegmentAddr(id, rank int) mem.Addr { return w.segs[id][rank].addr }

// NotificationAddr returns the address of rank's notification id.
func (w *World) NotificationAddr(rank, id int) mem.Addr { return w.areas[rank].addr + mem.Addr(8*id) }

// Footprint returns the verbs memory (QPs, CQs) of rank.
func (w *World) Footprint(rank int) uint64 { return w.d.Node(rank).Footprint() }

func (w *World) place(rank int) (verbs.Place, mem.Pool) {
	if w.sides[rank] == CPUSide {
		return verbs.Place{QP: mem.Host}, mem.Host
	}
	s := w.d.Spec()
	return verbs.Place{QP: verbs.Pool(s.QPLoc)}, verbs.Pool(s.CQLoc)
}

// cq returns rank's CQ of queue, made on first use (sized for a QP to
// every peer, or to cqPeers).
func (w *World) cq(rank, queue int) (*verbs.CQ, error) {
	k := [2]int{rank, queue}
	if c := w.cqs[k]; c != nil {
		return c, nil
	}
	_, pool := w.place(rank)
	ranks := len(w.sides)
	if w.cqPeers > 0 {
		ranks = min(ranks, w.cqPeers+1)
	}
	c, err := w.d.Node(rank).NewCQ(CQEntries(ranks, w.d.Spec().QPDepth), pool)
	if err != nil {
		return nil, err
	}
	w.cqs[k] = c
	return c, nil
}

// queue returns rank's QP of queue to peer and its CQ, connecting both
// ends on first use.
func (w *World) queue(rank, queue, peer int) (*verbs.QP, *verbs.CQ, error) {
	if peer < 0 || peer >= len(w.sides) || peer == rank {
		return nil, nil, fmt.Errorf("gpi: rank %d: target rank %d: must be another rank in [0, %d)", rank, peer, len(w.sides))
	}
	ca, err := w.cq(rank, queue)
	if err != nil {
		return nil, nil, err
	}
	if q := w.qps[qkey{rank, queue, peer}]; q != nil {
		return q, ca, nil
	}
	cb, err := w.cq(peer, queue)
	if err != nil {
		return nil, nil, err
	}
	pa, _ := w.place(rank)
	pb, _ := w.place(peer)
	qa, qb, err := w.d.Connect(rank, peer, pa, pb, ca, cb, w.d.Spec().QPDepth)
	if err != nil {
		return nil, nil, err
	}
	w.qps[qkey{rank, queue, peer}], w.qps[qkey{peer, queue, rank}] = qa, qb
	return qa, ca, nil
}

// Connect creates the QPs of queue between every pair of ranks (host
// setup), so that no call pays for it later.
func (w *World) Connect(queue int) error {
	for a := range w.sides {
		for b := a + 1; b < len(w.sides); b++ {
			if _, _, err := w.queue(a, queue, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// ConnectPair creates the QPs of queue between ranks a and b only (host
// setup), for applications whose communication pattern is sparse (a ring
// needs n pairs per queue, not n²/2).
func (w *World) ConnectPair(queue, a, b int) error {
	_, _, err := w.queue(a, queue, b)
	return err
}

// writeWQE builds the RDMA write of size bytes of segment segL at offL on
// rank to segment segR at offR on peer.
func (w *World) writeWQE(rank, segL int, offL uint64, peer, segR int, offR, size uint64) (nic.WQE, error) {
	l, r := w.segs[segL], w.segs[segR]
	if l == nil || r == nil || l[rank].mr == nil || r[peer].mr == nil {
		return nic.WQE{}, fmt.Errorf("gpi: rank %d: write from segment %d to segment %d of rank %d: segment not created", rank, segL, segR, peer)
	}
	return nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: uint32(size), LKey: l[rank].mr.Key,
		LocalAddr: l[rank].addr + mem.Addr(offL), RemoteAddr: r[peer].addr + mem.Addr(offR), RKey: r[peer].mr.Key}, nil
}

// notifyWQE builds the inline write of value into peer's notification id.
func (w *World) notifyWQE(peer, id int, value uint64) (nic.WQE, error) {
	if id < 0 || id >= w.notifs {
		return nic.WQE{}, fmt.Errorf("gpi: notification %d: must be in [0, %d)", id, w.notifs)
	}
	if value == 0 {
		return nic.WQE{}, fmt.Errorf("gpi: notification %d: value 0 is not a notification", id)
	}
	a := w.areas[peer]
	wq := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled | nic.WQEInline, Length: 8,
		RemoteAddr: a.addr + mem.Addr(8*id), RKey: a.mr.Key}
	for i := range 8 {
		wq.Inline[i] = byte(value >> (8 * i))
	}
	return wq, nil
}

// cqeError turns an error CQE into a Go error naming the QP.
func cqeError(rank int, e nic.CQE) error {
	return fmt.Errorf("gpi: rank %d QP %d: work request completed with %v", rank, e.QPN, e.Status)
}

// Device is a GPU-side rank's GPI handle, passed to kernels.
type Device struct {
	w    *World
	rank int
	// writes are WriteSteps' finished steppers, for reuse: a ring posts
	// one per step and work-group (three allocations each, 240 k per
	// 64-node GNN_GPURDMA allreduce).
	writes sim.FreeList[*writeSteps]
}

// Device returns rank's device handle.
func (w *World) Device(rank int) *Device { return &Device{w: w, rank: rank} }

// post posts ws on rank's QP of queue to peer and rings once, draining
// the queue first if they do not fit.
func (d *Device) post(wg *gpu.WG, queue, peer int, ws ...nic.WQE) error {
	qp, cq, err := d.w.queue(d.rank, queue, peer)
	if err != nil {
		return err
	}
	if wg.Proc.CanRunSteps() && qp.Outstanding()+uint64(len(ws)) <= uint64(qp.Depth()) {
		// The posts, the ring and the barrier as steps lent by the
		// work-group's coroutine (sim.Proc.RunSteps): the same events,
		// one switch there and back instead of two per wait.
		wg.Proc.RunSteps(&barrierAfter{s: qp.NewPostRing(wg, ws), wg: wg})
		return nil
	}
	if qp.Outstanding()+uint64(len(ws)) > uint64(qp.Depth()) {
		if e, ok := cq.WaitQP(wg, qp, uint64(qp.Depth()-len(ws))); !ok {
			return cqeError(d.rank, e)
		}
	}
	for _, w := range ws {
		if err := qp.Post(wg, w); err != nil {
			return err
		}
	}
	qp.Ring(wg)
	wg.Barrier()
	return nil
}

// Write is gpu_gaspi_write: an RDMA write of size bytes.
func (d *Device) Write(wg *gpu.WG, segL int, offL uint64, rank, segR int, offR, size uint64, queue int) error {
	wq, err := d.w.writeWQE(d.rank, segL, offL, rank, segR, offR, size)
	if err != nil {
		return err
	}
	return d.post(wg, queue, rank, wq)
}

// WriteSteps is Write as steps for a work-group body's own state machine
// (lent its process, sim.Proc.RunSteps): the stepper that posts the write,
// rings the doorbell and meets the barrier, the waits Write makes. It is
// nil when the post must first wait for room in the QP (a completion): the
// caller's coroutine calls Write then, which waits for it. The stepper is
// reused for a later write once its Step returned true.
func (d *Device) WriteSteps(wg *gpu.WG, segL int, offL uint64, rank, segR int, offR, size uint64, queue int) (sim.Stepper, error) {
	wq, err := d.w.writeWQE(d.rank, segL, offL, rank, segR, offR, size)
	if err != nil {
		return nil, err
	}
	qp, _, err := d.w.queue(d.rank, queue, rank)
	if err != nil {
		return nil, err
	}
	if qp.Outstanding()+1 > uint64(qp.Depth()) {
		return nil, nil
	}
	ws, ok := d.writes.Get()
	if !ok {
		ws = &writeSteps{d: d}
	}
	ws.one[0] = wq
	qp.InitPostRing(&ws.pr, wg, ws.one[:])
	ws.barrierAfter = barrierAfter{s: &ws.pr, wg: wg}
	return ws, nil
}

// writeSteps is WriteSteps' stepper: the post and ring of one WQE, then
// the barrier, in one object. Once its Step returned true nothing reads it
// (the stepper's caller drops it, the post's events hold the QP, not the
// steps), so it goes back to its Device for the next write.
type writeSteps struct {
	barrierAfter
	pr  verbs.PostRing
	one [1]nic.WQE
	d   *Device
}

// Step implements sim.Stepper; the caller must not step it again after it
// returned true (it may already be another write's).
func (s *writeSteps) Step(p *sim.Proc) bool {
	if !s.barrierAfter.Step(p) {
		return false
	}
	s.d.writes.Put(s)
	return true
}

// Notify is gpu_gaspi_notify: value into rank's notification id.
func (d *Device) Notify(wg *gpu.WG, rank, id int, value uint64, queue int) error {
	wq, err := d.w.notifyWQE(rank, id, value)
	if err != nil {
		return err
	}
	return d.post(wg, queue, rank, wq)
}

// WriteNotify is gpu_gaspi_write_notify: the write, then the notify, on
// one QP with one doorbell.
func (d *Device) WriteNotify(wg *gpu.WG, segL int, offL uint64, rank, segR int, offR, size uint64, id int, value uint64, queue int) error {
	wq, err := d.w.writeWQE(d.rank, segL, offL, rank, segR, offR, size)
	if err != nil {
		return err
	}
	nq, err := d.w.notifyWQE(rank, id, value)
	if err != nil {
		return err
	}
	return d.post(wg, queue, rank, wq, nq)
}

// NotifyWaitsome is gpu_gaspi_notify_waitsome: the block's threads poll
// the flags [first, first+num) (one volatile load round per poll) until
// one is non-zero, and return its id and value. The flag is not reset
// (NotifyReset).
func (d *Device) NotifyWaitsome(wg *gpu.WG, first, num int) (int, uint64, error) {
	if first < 0 || num < 1 || first+num > d.w.notifs {
		return 0, 0, fmt.Errorf("gpi: notify_waitsome [%d, +%d): must be inside [0, %d)", first, num, d.w.notifs)
	}
	m := d.w.d.Node(d.rank).Mem()
	base := d.w.NotificationAddr(d.rank, first)
	for {
		id, v := -1, uint64(0)
		wg.AtomicLoad(base, func() { // the flags as the load reads them, at its sample point
			for i := range num {
				if x := m.Load64(base + mem.Addr(8*i)); x != 0 {
					id, v = i, x
					return
				}
			}
		})
		if id >= 0 {
			wg.Barrier()
			return first + id, v, nil
		}
		if anySet(m, base, num) {
			continue // written after the load read the flags: the next load sees it
		}
		waitLines(wg, m, base, num)
	}
}

// anySet reports whether one of the num flags at base is non-zero now.
func anySet(m *mem.Memory, base mem.Addr, num int) bool {
	for i := range num {
		if m.Load64(base+mem.Addr(8*i)) != 0 {
			return true
		}
	}
	return false
}

// waitLines sleeps until one of the lines of num flags at base is
// written (a whole line is one watch; beyond one line the block re-polls
// after one load time: a poll loop's load, an L2 hit behind a memory-side
// L2, gpu.GPU.PollLoad).
func waitLines(wg *gpu.WG, m *mem.Memory, base mem.Addr, num int) {
	if mem.Line(base) == mem.Line(base+mem.Addr(8*num-1)) {
		wg.Wait(m.Watch(base), "gpi notification")
		return
	}
	d, _ := wg.GPU().PollLoad(base)
	wg.Sleep(d)
}

// NotifyReset is gaspi_notify_reset: a system-scope store of 0 to the
// flag (it bypasses the caches, so a later NIC write is not shadowed),
// returning the old value.
func (d *Device) NotifyReset(wg *gpu.WG, id int) uint64 {
	a := d.w.NotificationAddr(d.rank, id)
	m := d.w.d.Node(d.rank).Mem()
	var v uint64
	wg.AtomicLoad(a, func() { v = m.Load64(a); m.Store64(a, 0) }) // an exchange at memory: no notification lost between
	return v
}

// Wait is gaspi_wait: poll until every request of queue has completed.
func (d *Device) Wait(wg *gpu.WG, queue int) error {
	for p := range d.w.sides {
		if p == d.rank {
			continue
		}
		if d.w.qps[qkey{d.rank, queue, p}] == nil {
			// Never connected, so nothing is outstanding on it: connecting
			// it here would make every rank's wait create a QP pair to every
			// other rank (n² QPs of 128 KiB of rings each).
			continue
		}
		qp, cq, err := d.w.queue(d.rank, queue, p)
		if err != nil {
			return err
		}
		if e, ok := cq.WaitQP(wg, qp, 0); !ok {
			return cqeError(d.rank, e)
		}
	}
	wg.Barrier()
	return nil
}

// WaitPeers is Wait over the QPs of queue to the given peers only, for
// applications whose pattern is sparse (a halo's neighbours): Wait visits
// every rank and would connect a QP to each.
func (d *Device) WaitPeers(wg *gpu.WG, queue int, peers []int) error {
	for _, p := range peers {
		if p == d.rank {
			continue
		}
		qp, cq, err := d.w.queue(d.rank, queue, p)
		if err != nil {
			return err
		}
		if e, ok := cq.WaitQP(wg, qp, 0); !ok {
			return cqeError(d.rank, e)
		}
	}
	wg.Barrier()
	return nil
}

// Host is a CPU-side rank's GPI handle for host thread t.
type Host struct {
	w    *World
	rank int
	t    *cpu.Thread
	sw   cost.Spec
}

// Host returns rank's host handle on thread t.
func (w *World) Host(rank int, t *cpu.Thread, sw cost.Spec) *Host {
	return &Host{w: w, rank: rank, t: t, sw: sw}
}

func (h *Host) post(queue, peer int, ws ...nic.WQE) error {
	qp, cq, err := h.w.queue(h.rank, queue, peer)
	if err != nil {
		return err
	}
	if qp.Outstanding()+uint64(len(ws)) > uint64(qp.Depth()) {
		if e, ok := cq.HostWaitQP(h.t, h.sw, qp, uint64(qp.Depth()-len(ws))); !ok {
			return cqeError(h.rank, e)
		}
	}
	for _, w := range ws {
		if err := qp.HostPost(h.t, h.sw, w); err != nil {
			return err
		}
	}
	qp.HostRing(h.t)
	return nil
}

// Write is gaspi_write.
func (h *Host) Write(segL int, offL uint64, rank, segR int, offR, size uint64, queue int) error {
	wq, err := h.w.writeWQE(h.rank, segL, offL, rank, segR, offR, size)
	if err != nil {
		return err
	}
	return h.post(queue, rank, wq)
}

// Notify is gaspi_notify.
func (h *Host) Notify(rank, id int, value uint64, queue int) error {
	wq, err := h.w.notifyWQE(rank, id, value)
	if err != nil {
		return err
	}
	return h.post(queue, rank, wq)
}

// WriteNotify is gaspi_write_notify.
func (h *Host) WriteNotify(segL int, offL uint64, rank, segR int, offR, size uint64, id int, value uint64, queue int) error {
	wq, err := h.w.writeWQE(h.rank, segL, offL, rank, segR, offR, size)
	if err != nil {
		return err
	}
	nq, err := h.w.notifyWQE(rank, id, value)
	if err != nil {
		return err
	}
	return h.post(queue, rank, wq, nq)
}

// NotifyWaitsome is gaspi_notify_waitsome on the host: it polls the flags
// (cached host memory the NIC's DMA keeps coherent).
func (h *Host) NotifyWaitsome(first, num int) (int, uint64, error) {
	if first < 0 || num < 1 || first+num > h.w.notifs {
		return 0, 0, fmt.Errorf("gpi: notify_waitsome [%d, +%d): must be inside [0, %d)", first, num, h.w.notifs)
	}
	m := h.w.d.Node(h.rank).Mem()
	base := h.w.NotificationAddr(h.rank, first)
	oneLine := mem.Line(base) == mem.Line(base+mem.Addr(8*num-1))
	p := h.t.Proc
	if !oneLine {
		// Flags over several lines are polled round by round (no one
		// watch covers them): a busy poller, whose rounds must not hide a
		// deadlock of the agents that would notify it (sim/poll.go).
		p.SetPoller(fmt.Sprintf("gpi notifications [%d, +%d) of rank %d", first, num, h.rank))
		defer p.StopPolling()
	}
	for {
		p.PollStart()
		for i := range num {
			if v := m.Load64(base + mem.Addr(8*i)); v != 0 {
				h.t.Sleep(h.t.CPU().Spec().CacheHit)
				return first + i, v, nil
			}
		}
		if oneLine {
			h.t.Wait(m.Watch(base), "gpi notification")
		}
		h.t.Sleep(h.t.CPU().Spec().MissLatency())
		if !oneLine && p.PollRound(h.t.Contended()) { // (a waiter for the core may find work)
			return 0, 0, fmt.Errorf("gpi: notify_waitsome [%d, +%d) on rank %d: %w", first, num, h.rank, p.Engine().PollDeadlock())
		}
	}
}

// NotifyReset is gaspi_notify_reset.
func (h *Host) NotifyReset(id int) uint64 {
	a := h.w.NotificationAddr(h.rank, id)
	m := h.w.d.Node(h.rank).Mem()
	v := m.Load64(a)
	m.Store64(a, 0)
	return v
}

// Wait is gaspi_wait.
func (h *Host) Wait(queue int) error {
	for p := range h.w.sides {
		if p == h.rank || h.w.qps[qkey{h.rank, queue, p}] == nil {
			continue // never connected: nothing outstanding (see Device.Wait)
		}
		qp, cq, err := h.w.queue(h.rank, queue, p)
		if err != nil {
			return err
		}
		if e, ok := cq.HostWaitQP(h.t, h.sw, qp, 0); !ok {
			return cqeError(h.rank, e)
		}
	}
	return nil
}

// barrierAfter runs s, then the work-group barrier that ends a device
// call, as one sim.Stepper.
type barrierAfter struct {
	s    sim.Stepper
	wg   *gpu.WG
	done bool
	bar  bool
}

// Step implements sim.Stepper.
func (b *barrierAfter) Step(p *sim.Proc) bool {
	if !b.done {
		b.done = b.s.Step(p)
		return false // the barrier comes in the next call (s finished without a wait pending)
	}
	if !b.bar {
		b.bar = true
		b.wg.Barrier()
		return false
	}
	return true
}

// CQEntries is the entries of a rank's CQ of one queue in a world of ranks
// ranks whose QPs hold depth WQEs each: room for a QP to every peer, send
// and receive side.
func CQEntries(ranks, depth int) int { return 2 * max(1, ranks-1) * depth }
