package shmem

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The GIO backend (the GIO slides, the dissertation): GPU-native
// networking behind the same device API. Each context (work-group queue)
// owns a reliable-connected QP to every other PE and a CQ, all in GPU
// memory mapped L2-uncacheable, as is the symmetric heap. A host thread
// templates the send queues ahead of the GPU: it writes the static
// fields of upcoming WQEs (rkey, QP number, wr_id) into slots whose
// previous WQE completed. A device call then claims the next slot with a
// device-scope atomic, waits if the template is not there yet (a counted
// stall), writes the four dynamic fields (opcode, size with lkey, source,
// destination), flushes the PCIe-path cache when the NIC will read GPU
// memory, releases at system scope and rings the doorbell. Quiet polls the
// context's CQ until every WQE it issued has completed.
//
// With shmem.gio.qps_per_peer = n > 0 the contexts share n QPs (and their
// CQs) to each PE, as NVSHMEM IBGDA's CTAs share its RC QPs per peer PE:
// context q posts on QP q mod n. Contexts that share a QP take turns
// through two ticket locks in GPU memory: one around the post (PPB
// flush, slot claim, WQE fields, release, doorbell: one producer at a
// time, the doorbells in slot order, as IBGDA's ready-head ordering and
// post-send lock serialise them) and one around the CQ poll (one consumer
// of the CQ at a time); a context waits for the completions of its own
// posts only, which on an in-order RC QP means every WQE before them too.

// gioBackend is one PE's GIO runtime.
type gioBackend struct {
	dev      *Device
	vn       *verbs.Node
	spec     GIOSpec
	mrs      []*nic.MR
	passive  *verbs.CQ   // CQ of the remote ends of other PEs' QPs
	ctxs     []*gioCtx   // by QP set: one per queue, or shmem.gio.qps_per_peer shared
	shared   bool        // several queues share a QP set (locks below)
	locks    mem.Addr    // shared: per (set, PE) a post ticket, its now-serving word, a poll ticket, its now-serving word
	tmpl     *cpu.Thread // the templating host thread
	work     sim.Signal  // a slot freed or a QP created: templating work
	stats    GIOStats
	scratch  mem.Addr // 8 B per queue: atomic results
	scratchM *nic.MR
	hdp      mem.Addr // the word other PEs' fences write: this GPU's HDP flush register
	hdpM     *nic.MR
	landing  *nic.MR // the device's g landing words
	heap     *nic.MR // the symmetric heap's current registration
	heapBase mem.Addr
	heapEnd  mem.Addr
	// Connections are numbered and placed by who connects to whom, not by
	// the order PEs connect in, and each end is made by its own PE, so a
	// PE touches no other PE's memory, NIC or GPU during the run (its
	// engine may be another partition's). Init takes the PE's QP numbers
	// (2 × sets × (npes − 1) from qpBase, gio numbering below); reserve
	// reserves their memory, one block from resBase, laid out as PEs 0, 1,
	// … connecting one after another would have placed it, and their CQ
	// numbers from cqBase: this PE's side of its connections (CQ and QP,
	// ownRes) and the remote ends of other PEs' connections to it (endRes,
	// made when their first packet arrives, makeEnd) are computed from
	// their index, not stored.
	qpBase   uint32
	resBase  mem.Addr
	cqBase   int
	reserved bool
	// cand marks, by context × PE, the QPs that may have a slot to
	// template: every QP at first, cleared when the templater finds the
	// QP full, set again when a completion of it is consumed (the only
	// way a full QP frees a slot). The templater visits only these, in
	// the order of its full round-robin scan, so it templates the same
	// slots at the same times without loading every QP each pass.
	cand []uint64
	// The templater's writes into QPs nobody has posted to yet, in
	// closed form (gioclosed.go): posted marks, by context × PE, the QPs
	// whose templating runs as events (every QP once it has a post);
	// closed says the others' may run as one busy stretch per run of them
	// (the conditions under which that takes the same times); ops holds
	// the closed-form writes whose landing or visibility may still be
	// ahead; notifyAt the times of the visibility events scheduled for
	// them; tmplWait that the templater waits for work.
	posted []uint64
	closed bool
	// keys are every PE's heap rkey when this PE connected, which the
	// closed form templates: while closed holds none has changed (a
	// registration after any PE connected ends the closed form on every
	// PE), and reading them here spares the templater a chain of cache
	// misses into the peer's runtime per slot. Shared by the PEs that
	// connected with the same keys (Team.heapKeys), never written.
	keys     []uint32
	ops      []tmplOp
	opsHead  int
	notifyAt []sim.Time
	tmplWait bool
	// stopped: the PE finalized (its kernels ended), so the templater
	// templates nothing more after the slot it is writing (ROC_SHMEM's
	// finalize ends its host thread): nothing posts on this PE's QPs any
	// more, and with thousands of peers the slots it would still fill (64
	// per QP, 2 QPs per peer) were most of a run's simulated time and
	// events after the workload had finished (a 512-GPU allreduce_hier:
	// 170 us, its templaters busy to 2.3 ms). Every time the workloads
	// report is taken before (the events after it are gone); the
	// templater keeps waiting on its core as when it has no work, so a
	// run whose templater was done by then keeps its core statistics.
	stopped bool
	// tsteps is the templater's loop as steps (giotmpl.go); loopTemplater
	// keeps the coroutine loop (tests compare the two).
	tsteps        tmplSteps
	loopTemplater bool
	// flushEvents keeps the PPB flush's wake-up and the full QP's CQ
	// poll's invalidate end events where they could be marks
	// (gioPutSteps.claimAtFlushEnd, verbs.CQWait.InvEvents): tests
	// compare the two.
	flushEvents bool
	// claim, of GPU claimG: the slot claim's device-scope atomic, L2
	// cycles (claimTime: gpu.GPU.Spec copies the whole spec).
	claimG *gpu.GPU
	claim  sim.Duration
}

// GIOStats count the GIO runtime's activity.
type GIOStats struct {
	Posts, TemplateStalls, Templates, PPBFlushes uint64
	Fields                                       uint64 // WQE fields the GPU wrote
	StallTime                                    sim.Duration
	// TurnTime is the time contexts sharing a QP spent waiting for their
	// turn to post or to poll (shmem.gio.qps_per_peer).
	TurnTime sim.Duration
}

// gioCtx is one QP set: a QP to every other PE and their CQs, owned by
// one context (queue) or shared by several (shmem.gio.qps_per_peer).
type gioCtx struct {
	b     *gioBackend
	q     int
	conns gioConns // by PE: the connections made (none to this PE)
	// templated counts, per PE, the slots whose template is visible. It
	// is the one per-PE word every QP needs (the templater fills the QPs
	// nobody posts to as well); 32 bits, as the closed form's writes
	// number their slots: a QP would need 2^32 posts, tens of billions of
	// events, to pass it.
	templated gioCounts
}

// gioCounts holds a count per PE in chunks of gioChunk made at the first
// change of one of theirs: with template_at_init every QP starts full and
// only those posted to change (a halo's context posts to a few PEs of
// thousands), where a count for every PE of each QP set was 64 KiB per GPU
// at 8,192 GPUs. A count of a chunk not made is the one its PE started
// with: init for every PE but own (0).
type gioCounts struct {
	chunks []*[gioChunk]uint32
	init   uint32
	own    int
}

// newGIOCounts returns the counts of npes PEs, each init but own's 0.
func newGIOCounts(npes, own int, init uint32) gioCounts {
	return gioCounts{chunks: make([]*[gioChunk]uint32, (npes+gioChunk-1)/gioChunk), init: init, own: own}
}

// at returns pe's count.
func (t *gioCounts) at(pe int) uint32 {
	if c := t.chunks[pe/gioChunk]; c != nil {
		return c[pe%gioChunk]
	}
	if pe == t.own {
		return 0
	}
	return t.init
}

// ref returns pe's count to change, making its chunk (its PEs' counts as
// they started).
func (t *gioCounts) ref(pe int) *uint32 {
	c := t.chunks[pe/gioChunk]
	if c == nil {
		c = new([gioChunk]uint32)
		for k := range c {
			if j := pe/gioChunk*gioChunk + k; j != t.own {
				c[k] = t.init
			}
		}
		t.chunks[pe/gioChunk] = c
	}
	return &c[pe%gioChunk]
}

// gioConn is a connection of a context to a PE, made on first use: its
// QP and its CQ (one CQ per (context, PE), as ROC_SHMEM's GPU-IB backend).
type gioConn struct {
	qp *verbs.QP
	cq *verbs.CQ
}

// gioConns holds a context's connections by PE in chunks made when a
// connection in them is: a ring or an rhd connects to a few PEs of
// thousands.
type gioConns []*[gioChunk]gioConn

const gioChunk = 16

// get returns the connection to pe, or nil if none of its chunk is made.
func (t gioConns) get(pe int) *gioConn {
	if c := t[pe/gioChunk]; c != nil {
		return &c[pe%gioChunk]
	}
	return nil
}

// make returns the connection slot of pe, making its chunk.
func (t gioConns) make(pe int) *gioConn {
	c := t[pe/gioChunk]
	if c == nil {
		c = new([gioChunk]gioConn)
		t[pe/gioChunk] = c
	}
	return &c[pe%gioChunk]
}

// each calls f with every made connection in PE order.
func (t gioConns) each(f func(pe int, c *gioConn)) {
	for i, ch := range t {
		if ch == nil {
			continue
		}
		for k := range ch {
			if ch[k].qp != nil {
				f(i*gioChunk+k, &ch[k])
			}
		}
	}
}

// gioChan is one context (a work-group's queue) on its QP set: where its
// atomics land, and with a shared set the QP index after each PE's last
// post of its own (what its waits wait for).
type gioChan struct {
	c  *gioCtx
	q  int
	wg *gpu.WG
	// shared reports a shared QP set, whose waits wait for last.
	shared bool
	// last is, by PE, the QP index after the context's last post there
	// (shared set only), made at the first post: a context posts to a
	// few PEs of thousands (a halo's work-group to one), and a slice by
	// PE for each of 26 contexts was 1.7 MB per GPU at 8,192 GPUs, 14 GB
	// in all. A PE never posted to reads 0, as the slice's did.
	last map[int]uint64
}

// qp returns the context's QP to pe, making the connection reserved for
// it on first use (nil for this PE).
func (c *gioCtx) qp(pe int) (*verbs.QP, error) {
	if cn := c.conns.get(pe); cn != nil && cn.qp != nil || pe == c.b.dev.pe {
		if cn == nil {
			return nil, nil
		}
		return cn.qp, nil
	}
	b := c.b
	depth := b.vn.Spec().QPDepth
	rcq, rqp := b.ownRes(c.q, pe)
	cq, err := b.vn.MakeCQ(rcq, depth, mem.GPU)
	if err != nil {
		return nil, err
	}
	rb := b.dev.rt.team.devs[pe].backend.(*gioBackend)
	qa, err := b.vn.MakeConnected(rqp, verbs.Place{QP: mem.GPU}, cq, depth, pe, rb.endNum(b.dev.pe, c.q))
	if err != nil {
		return nil, err
	}
	cn := c.conns.make(pe)
	cn.cq, cn.qp = cq, qa
	i := c.q*b.dev.npes + pe
	if b.shared {
		b.dev.rt.node.Mem.MarkControl(b.lock(i), 32) // before its first use (lock)
	}
	qa.OnRetire(func() {
		b.cand[i/64] |= 1 << (i % 64)
		if b.tmplWait {
			b.notifyNext() // the waiting templater takes the freed slot at the next visibility
		}
	})
	return qa, nil
}

func newGIOBackend(d *Device) (*gioBackend, error) {
	r := d.rt
	s := r.spec.GIO
	vs := verbs.DefaultSpec()
	vs.FieldStore, vs.DBRecord, vs.QPDepth = s.FieldStore, s.DBRecord, r.spec.QueueEntries
	vs.PollInvalidate = true // quiet's poll loop invalidates the cache each iteration (__roc_inv)
	n := r.node
	b := &gioBackend{dev: d, spec: s, vn: verbs.NewNode(n.Host.Engine(), d.pe, n.NIC, n.Mem, n.GPULink, vs)}
	if s.PPBLines > 0 {
		n.NIC.SetPPB(&nic.PPB{Lines: s.PPBLines, FlushLatency: s.PPBFlush})
	}
	var err error
	pool := mem.GPU
	sets := d.queues
	if n := s.QPsPerPeer; n > 0 && n < sets {
		sets, b.shared = n, true
	}
	if b.passive, err = b.vn.NewCQ(max(1, sets*d.npes)*vs.QPDepth, pool); err != nil {
		return nil, err
	}
	b.scratch = n.Mem.AllocData(mem.GPU, uint64(d.queues)*8, "gio.atomic-results")
	b.scratchM = b.vn.RegMR(b.scratch, uint64(d.queues)*8)
	b.uncache(b.scratch, uint64(d.queues)*8)
	// The HDP flush register, exposed to the other PEs' fences (ROC_SHMEM
	// registers its address and key with every PE at init, hdp_address):
	// a register word, so an 8 B slot the NIC's write lands in.
	b.hdp = n.Mem.AllocData(mem.GPU, 8, "gio.hdp-flush-register")
	b.hdpM = b.vn.RegMR(b.hdp, 8)
	b.uncache(b.hdp, 8)
	b.ctxs = make([]*gioCtx, sets)
	if b.shared {
		// A ticket lock per (set, PE), 32 B each, sized as the runtime's
		// array is; in a payload-free memory only the locks of the
		// connections made keep their words (control lines, marked as
		// gioCtx.qp makes a connection): at 8,192 PEs the array is 512
		// KiB, and each lock used backed a 4 KiB page of it.
		locks := uint64(sets*d.npes) * 32
		if n.Mem.Functional() {
			b.locks = n.Mem.AllocData(mem.GPU, locks, "gio.qp-locks")
		} else {
			b.locks = n.Mem.Alloc(mem.GPU, locks, "gio.qp-locks")
		}
	}
	b.qpBase = b.vn.ReserveQPNumbers(2 * sets * (d.npes - 1))
	b.vn.SetQPMaker(b.makeEnd)
	return b, nil
}

// The numbering of a PE's QPs (index k from qpBase), and the order reserve
// places them in memory: PEs 0, 1, …, npes−1 connecting one after another,
// as ROC_SHMEM's init connects every PE's contexts to every PE. PE j's
// connection adds, per set q, one remote end here (k = j·sets + q for j
// below this PE, (npes−1)·sets + (j−1)·sets + q above it); this PE's own
// connection adds, per set q and PE pe, the QP
// k = pe·sets + q·(npes−1) + pe', pe' = pe below this PE, pe−1 above.

// endNum returns the number of the remote end on this PE of PE j's
// connection for set q.
func (b *gioBackend) endNum(j, q int) uint32 {
	p, sets, n := b.dev.pe, len(b.ctxs), b.dev.npes
	k := j*sets + q
	if j > p {
		k = (n-1)*sets + (j-1)*sets + q
	}
	return b.qpBase + uint32(k)
}

// ownNum returns the number of this PE's QP of set q to PE pe.
func (b *gioBackend) ownNum(q, pe int) uint32 {
	p, sets, n := b.dev.pe, len(b.ctxs), b.dev.npes
	pe1 := pe
	if pe > p {
		pe1--
	}
	return b.qpBase + uint32(p*sets+q*(n-1)+pe1)
}

// endOf returns the PE and set of the remote end numbered num, or false
// when num is not one.
func (b *gioBackend) endOf(num uint32) (j, q int, ok bool) {
	p, sets, n := b.dev.pe, len(b.ctxs), b.dev.npes
	if num < b.qpBase {
		return 0, 0, false
	}
	k := int(num - b.qpBase)
	switch {
	case k < p*sets:
		return k / sets, k % sets, true
	case k < p*sets+(n-1)*sets:
		return 0, 0, false // this PE's own QP
	case k < 2*(n-1)*sets:
		k -= (n - 1) * sets
		return k/sets + 1, k % sets, true
	}
	return 0, 0, false
}

// reserve reserves, once, the memory of every connection this PE takes
// part in (its own CQs and QPs and the remote ends of the others'), as
// one block where PEs 0, 1, … connecting in turn would have put them,
// and maps the block L2-uncacheable in one range (between its rings lie
// only their guard lines, which nothing touches). A connection's memory,
// QPs and CQ are made when first used (gioCtx.qp, makeEnd): most are
// never posted to, and a QP's state is about 10 KiB. The block's layout,
// in the numbering's order: the ends of PEs below this one (QPSpan each,
// by PE × set), this PE's connections (a CQ, then its QP, by set × PE),
// the ends of PEs above it.
func (b *gioBackend) reserve() {
	if b.reserved {
		return
	}
	b.reserved = true
	sets, n := len(b.ctxs), b.dev.npes
	depth := b.vn.Spec().QPDepth
	conns := sets * (n - 1)
	b.resBase, b.cqBase = b.vn.ReserveBlock(2*conns, depth, conns, depth)
	if conns > 0 {
		span := 2*uint64(conns)*verbs.QPSpan(depth) + uint64(conns)*verbs.CQSpan(depth)
		b.uncache(b.resBase, span-mem.LineSize) // the last guard line is not the block's
	}
}

// endRes returns the reserved remote end of PE j's connection for set q.
func (b *gioBackend) endRes(j, q int) verbs.QPRes {
	p, sets, n := b.dev.pe, len(b.ctxs), b.dev.npes
	depth := b.vn.Spec().QPDepth
	qs := verbs.QPSpan(depth)
	a := b.resBase + mem.Addr(uint64(j*sets+q)*qs)
	if j > p {
		own := uint64(sets*(n-1)) * (verbs.CQSpan(depth) + qs)
		a = b.resBase + mem.Addr(uint64((j-1)*sets+q)*qs+own)
	}
	return verbs.QPAt(a, b.endNum(j, q))
}

// ownRes returns this PE's reserved CQ and QP of set q to PE pe.
func (b *gioBackend) ownRes(q, pe int) (verbs.CQRes, verbs.QPRes) {
	p, n := b.dev.pe, b.dev.npes
	depth := b.vn.Spec().QPDepth
	qs, cs := verbs.QPSpan(depth), verbs.CQSpan(depth)
	pe1 := pe
	if pe > p {
		pe1--
	}
	m := q*(n-1) + pe1
	cq := b.resBase + mem.Addr(uint64(p*len(b.ctxs))*qs+uint64(m)*(cs+qs))
	return verbs.CQAt(cq, b.cqBase+m), verbs.QPAt(cq+mem.Addr(cs), b.ownNum(q, pe))
}

// makeEnd makes the remote end numbered num of another PE's connection,
// when the connection's first packet reaches this PE's NIC
// (nic.NIC.SetQPMaker): its QP, bound to the passive CQ, connected to the
// other PE's QP.
func (b *gioBackend) makeEnd(num uint32) {
	j, q, ok := b.endOf(num)
	if !ok {
		return
	}
	b.reserve()
	rj, ok := b.dev.rt.team.devs[j].backend.(*gioBackend)
	if !ok {
		return // not a GIO peer: the packet fails as one to an unknown QP
	}
	depth := b.vn.Spec().QPDepth
	if _, err := b.vn.MakeConnected(b.endRes(j, q), verbs.Place{QP: mem.GPU}, b.passive, depth, j, rj.ownNum(q, b.dev.pe)); err != nil {
		panic(fmt.Sprintf("gio: PE %d: the reserved end of PE %d's connection: %v", b.dev.pe, j, err))
	}
}

// uncache maps [a, a+n) L2-uncacheable unless shaders have L2
// maintenance (gio.shader_l2_maintenance).
func (b *gioBackend) uncache(a mem.Addr, n uint64) {
	if !b.spec.ShaderL2Maintenance {
		b.dev.rt.node.GPU.SetUncached(a, n)
	}
}

// Expose registers symmetric allocation idx and maps it uncacheable; the
// first one also connects every context to every other PE (host setup:
// by then every PE has initialised) and starts templating.
func (b *gioBackend) Expose(idx int, base mem.Addr, size uint64) {
	for len(b.mrs) <= idx {
		b.mrs = append(b.mrs, nil)
	}
	// GIO registers one symmetric heap: the region grows to cover every
	// allocation, so one key (the templated rkey) serves all of them.
	if b.heapBase == 0 || base < b.heapBase {
		b.heapBase = base
	}
	b.heapEnd = max(b.heapEnd, base+mem.Addr(size))
	heap := b.vn.RegMR(b.heapBase, uint64(b.heapEnd-b.heapBase))
	if b.ctxs[0] != nil || b.dev.rt.team.connected.Load() {
		// The templater writes the new rkey from now on: no closed form
		// computed ahead with the old one.
		exposedAfterConnect(b.dev.rt.team.devs, b.dev.pe, heap.Key, b.eng().Now())
	}
	b.heap = heap
	b.mrs[idx] = b.heap
	b.uncache(base, size)
}

// connect connects every context to every other PE and starts the
// templater. The connections are reserved (reserve) and made when first
// used (gioCtx.qp on this PE, makeEnd on the other).
func (b *gioBackend) connect() error {
	d := b.dev
	for pe := range d.npes {
		if rb, ok := d.rt.team.devs[pe].backend.(*gioBackend); !ok || len(rb.ctxs) != len(b.ctxs) {
			return fmt.Errorf("gio: PE %d runs another backend or another number of QP sets", pe)
		}
	}
	b.reserve()
	d.rt.team.connected.Store(true)
	// With shmem.gio.template_at_init the host filled every slot of every
	// QP before the kernel started (ROC_SHMEM's init waits for the
	// template thread's first pass): each QP starts full, its words are
	// written when it is first posted to (atInit), and the templater has
	// nothing to do until a completion frees a slot.
	atInit := b.spec.TemplateAtInit
	depth := uint32(b.vn.Spec().QPDepth)
	init := uint32(0)
	if atInit {
		init = depth
	}
	for q := range b.ctxs {
		b.ctxs[q] = &gioCtx{b: b, q: q, conns: make(gioConns, (d.npes+gioChunk-1)/gioChunk), templated: newGIOCounts(d.npes, d.pe, init)}
	}
	b.cand = make([]uint64, (len(b.ctxs)*d.npes+63)/64)
	for i := range len(b.ctxs) * d.npes {
		if !atInit {
			b.cand[i/64] |= 1 << (i % 64)
		}
	}
	b.posted = make([]uint64, len(b.cand))
	n := d.rt.node
	b.closed = !atInit && b.closedOK() // at init nothing is left to template over unposted QPs
	if b.closed {
		b.keys = d.rt.team.heapKeys()
	}
	b.tmpl = n.CPU.Spawn("gio-template", b.template)
	b.tmpl.SetDaemon()
	return nil
}

// template is the host templating loop: it fills the static fields of
// every free, untemplated slot, then sleeps until a slot frees. It goes
// round-robin, one slot per QP per pass, so the next slot of every
// context is ready early instead of the last context waiting until every
// other QP is full (with many contexts that wait would dominate).
func (b *gioBackend) template(t *cpu.Thread) {
	if !b.loopTemplater && t.Proc.CanRunSteps() {
		b.tsteps = tmplSteps{b: b, t: t}
		t.Proc.RunSteps(&b.tsteps) // for good: the steps never end
		return
	}
	npes := b.dev.npes
	for {
		did := false
		for i := b.nextCand(0); i >= 0 && !b.stopped; i = b.nextCand(i + 1) {
			if b.closed && b.posted[i/64]&(1<<(i%64)) == 0 {
				next, made, run := b.templateClosed(t, i)
				if made > 0 {
					t.RunInstr(uint64(made)*uint64(b.spec.TemplateInstr), run)
				}
				did = did || made > 0
				if next < 0 {
					break
				}
				if made > 0 || next != i {
					i = next - 1
					continue
				}
			}
			c, pe := b.ctxs[i/npes], i%npes
			qp, err := c.qp(pe)
			if err != nil {
				panic(fmt.Sprintf("gio: PE %d context %d: a reserved connection to PE %d: %v", b.dev.pe, c.q, pe, err))
			}
			if qp != nil && uint64(c.templated.at(pe)) < qp.Completed()+uint64(qp.Depth()) {
				b.templateSlot(t, c, pe, qp)
				did = true
			}
			if qp == nil || uint64(c.templated.at(pe)) >= qp.Completed()+uint64(qp.Depth()) {
				b.cand[i/64] &^= 1 << (i % 64) // full: a consumed completion marks it again
			}
		}
		if !did {
			b.tmplWait = true
			t.Wait(&b.work, "gio: a slot to template")
			b.tmplWait = false
		}
	}
}

// workNotifier notifies the templater's work signal as an event handler
// (no closure per templated slot).
type workNotifier gioBackend

// Handle notifies the work signal.
func (w *workNotifier) Handle(uint64) { w.work.Notify() }

// nextCand returns the first candidate index at or after i, or -1.
func (b *gioBackend) nextCand(i int) int {
	for w := i / 64; w < len(b.cand); w++ {
		m := b.cand[w]
		if w == i/64 {
			m &^= 1<<(i%64) - 1
		}
		if m != 0 {
			return w*64 + bits.TrailingZeros64(m)
		}
	}
	return -1
}

// templateSlot writes the static words of the next slot of qp: the
// target's heap rkey with the QP number, and wr_id, as two
// PCIe posted writes into GPU memory.
func (b *gioBackend) templateSlot(t *cpu.Thread, c *gioCtx, pe int, qp *verbs.QP) {
	t.Instr(b.spec.TemplateInstr)
	k := uint64(c.templated.at(pe))
	rb := b.dev.rt.team.devs[pe].backend.(*gioBackend)
	w := nic.WQE{QPN: qp.Num()}
	if rb.heap != nil {
		w.RKey = rb.heap.Key
	}
	b.slotTemplated(t, c, pe, qp.HostTemplate(t, k, w, gioWords))
}

// slotTemplated counts the slot templateSlot wrote, visible at vis.
func (b *gioBackend) slotTemplated(t *cpu.Thread, c *gioCtx, pe int, vis sim.Time) {
	*c.templated.ref(pe)++
	b.stats.Templates++
	// A thread preempted on the way (a shared core's slice end) is back
	// after its writes landed: the template is visible by now.
	t.Engine().AtH(max(vis, t.Now()), (*workNotifier)(b), 0)
	b.afterTemplate()
}

func (b *gioBackend) Open(wg *gpu.WG, q int) (Channel, error) {
	if b.ctxs[0] == nil {
		if err := b.connect(); err != nil {
			return nil, err
		}
	}
	return &gioChan{c: b.ctxs[q%len(b.ctxs)], q: q, wg: wg, shared: b.shared}, nil
}

// Stop ends the templater's work (after the slot it is writing; it
// waits on its core as it does when it has none) and reports the counters.
func (b *gioBackend) Stop() Report {
	b.stopped = true
	for _, c := range b.ctxs {
		if c == nil {
			continue
		}
		c.conns.each(func(_ int, cn *gioConn) { b.stats.Fields += cn.qp.Stats().Fields })
	}
	return Report{GIO: b.stats}
}

// Stats returns the GIO counters.
func (b *gioBackend) Stats() GIOStats { return b.stats }

func (ch *gioChan) Close() {}

// region returns the symmetric allocation holding [a, a+n) on this PE.
func (ch *gioChan) region(a mem.Addr, n uint64) (int, bool) {
	for i, r := range ch.c.b.dev.heap.regions {
		if a >= r.base && uint64(a-r.base)+n <= r.size {
			return i, true
		}
	}
	return 0, false
}

// Submit carries one device call as verbs work requests.
func (ch *gioChan) Submit(r *Request) error {
	switch r.Op {
	case OpFence:
		return ch.fence()
	case OpQuiet:
		return ch.quiet()
	}
	g, err := ch.wqe(r)
	if err != nil {
		return err
	}
	if g.qp == nil {
		wg := ch.wg
		wg.Sleep(wg.GPU().MissLatency())
		ch.local(r, g.remote)
		return nil
	}
	qp, w, gpuSource := g.qp, g.w, g.gpuSource
	if err := ch.post(qp, r.PE, w, gpuSource); err != nil {
		return err
	}
	if !r.Blocking && !r.Op.atomic() {
		return nil
	}
	if err := ch.waitOwn(qp, r.PE); err != nil {
		return err
	}
	switch {
	case r.Op == OpGet:
		ch.wg.Acquire(gpu.System) // the NIC wrote the destination
	case r.Op.atomic():
		v := ch.wg.AtomicLoad64(w.LocalAddr)
		r.Result = v & (1<<(8*r.Len) - 1)
		if r.Len == 8 {
			r.Result = v
		}
	}
	return nil
}

// gioWQE is a device call's work request on its QP, or (qp nil) a call
// to this PE, applied in memory at remote.
type gioWQE struct {
	qp        *verbs.QP
	w         nic.WQE
	gpuSource bool // a put from GPU memory: the PPB is flushed first
	remote    mem.Addr
}

// wqe checks r (a put, get, p or atomic) and builds its work request on
// the context's QP to r.PE, making the connection on first use: Submit's
// part before the post, which waits for nothing.
func (ch *gioChan) wqe(r *Request) (gioWQE, error) {
	c := ch.c
	d := c.b.dev
	if r.PE < 0 || r.PE >= d.npes {
		return gioWQE{}, fmt.Errorf("%w: PE %d", ErrFailed, r.PE)
	}
	target := d.rt.team.devs[r.PE]
	tb := target.backend.(*gioBackend)
	sym := r.Dst
	if r.Op == OpGet {
		sym = r.Src
	}
	idx, ok := ch.region(sym, r.Len)
	if !ok {
		return gioWQE{}, fmt.Errorf("%w: PE %d has no such symmetric object", ErrFailed, r.PE)
	}
	remote, _ := d.heap.translate(sym, r.Len, target)
	rk := tb.mrs[idx] // the heap registration current when it was exposed
	if tb.heap != nil {
		rk = tb.heap
	}
	if r.PE == d.pe {
		return gioWQE{remote: remote}, nil
	}
	qp, err := c.qp(r.PE)
	if err != nil {
		return gioWQE{}, fmt.Errorf("%w: %w", ErrFailed, err)
	}
	w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: uint32(r.Len), RemoteAddr: remote, RKey: rk.Key}
	gpuSource := false
	switch r.Op {
	case OpPut:
		w.LocalAddr, w.LKey = r.Src, ch.lkey(r.Src, r.Len)
		gpuSource = d.heap.mem.PoolOf(r.Src) == mem.GPU
	case OpGet:
		w.Op, w.LocalAddr, w.LKey = nic.VRead, r.Dst, ch.lkey(r.Dst, r.Len)
	case OpP:
		w.Flags |= nic.WQEInline
		binary.LittleEndian.PutUint64(w.Inline[:8], r.Value)
	default: // atomics
		w.Op, w.Imm = nic.VAtomic, amoOf(r.Op)
		w.LocalAddr, w.LKey = c.b.scratch+mem.Addr(8*ch.q), c.b.scratchM.Key
		binary.LittleEndian.PutUint64(w.Inline[:8], r.Value)
		binary.LittleEndian.PutUint64(w.Inline[8:], r.Cond)
		if r.Op == OpAdd || r.Op == OpFetchAdd {
			w.Imm = nic.AtomicAdd
		}
	}
	if w.LKey == 0 && w.Flags&nic.WQEInline == 0 && w.Op != nic.VAtomic {
		return gioWQE{}, fmt.Errorf("%w: local buffer %#x is not registered (GIO registers the symmetric heap)", ErrFailed, uint64(w.LocalAddr))
	}
	return gioWQE{qp: qp, w: w, gpuSource: gpuSource, remote: remote}, nil
}

// amoOf maps an atomic op to the verbs atomic.
func amoOf(op Op) uint32 {
	switch op {
	case OpSwap:
		return nic.AtomicSwap
	case OpCSwap:
		return nic.AtomicCSwap
	}
	return nic.AtomicAdd
}

// lkey returns the key of the registered region holding a local buffer
// (the symmetric heap), or 0.
func (ch *gioChan) lkey(a mem.Addr, n uint64) uint32 {
	if _, ok := ch.region(a, n); ok {
		return ch.c.b.heap.Key
	}
	b, d := ch.c.b, ch.c.b.dev
	if size := uint64(d.queues) * mem.LineSize; d.scratch != 0 && a >= d.scratch && uint64(a-d.scratch)+n <= size {
		if b.landing == nil { // the device's landing words of g, registered on first use
			b.landing = b.vn.RegMR(d.scratch, size)
		}
		return b.landing.Key
	}
	return 0
}

// local applies a call whose target is this PE through the NIC's
// loopback-free path: GIO has no intra-PE short cut, so it still goes
// out as a verbs request to itself is not possible over RC; it is applied
// as a local memory operation by the leader (the GIO slides does
// not describe self-targeted calls).
// The caller has waited out the access (the GPU's miss latency) first.
func (ch *gioChan) local(r *Request, remote mem.Addr) {
	m := ch.c.b.dev.heap.mem
	switch r.Op {
	case OpPut:
		buf := make([]byte, r.Len)
		m.Read(r.Src, buf)
		m.Write(remote, buf)
	case OpGet:
		buf := make([]byte, r.Len)
		m.Read(remote, buf)
		m.Write(r.Dst, buf)
	case OpP:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], r.Value)
		m.Write(remote, b[:r.Len])
	default:
		var b [8]byte
		m.Read(remote, b[:r.Len])
		old := binary.LittleEndian.Uint64(b[:])
		r.Result = old
		binary.LittleEndian.PutUint64(b[:], applyAMO(r.Op, old, r.Value, r.Cond))
		m.Write(remote, b[:r.Len])
	}
}

// fence is ROC_SHMEM's GPU-IB fence (QueuePair::fence, for every
// destination PE): a 4 B RDMA write to that PE's HDP flush register on
// the context's QP to it, posted and rung like a put and not waited for.
// One RC QP per PE already delivers the context's writes in order; the
// write's purpose there is the HDP flush at the target, which has no
// counterpart in the model's write path (NIC writes into GPU memory are
// not held in an HDP), so what it adds is its cost: a post per PE, a WQE
// fetch, a packet ahead of the writes after it, and its completion.
func (ch *gioChan) fence() error {
	d := ch.c.b.dev
	for pe := range d.npes {
		if pe == d.pe {
			continue
		}
		qp, err := ch.c.qp(pe)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
		tb := d.rt.team.devs[pe].backend.(*gioBackend)
		w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled | nic.WQEInline, Length: 4, RemoteAddr: tb.hdp, RKey: tb.hdpM.Key}
		w.Inline[0] = 1
		if err := ch.post(qp, pe, w, false); err != nil {
			return err
		}
	}
	return nil
}

// post is the device post path of §3.3 for one WQE on qp (to PE pe).
func (ch *gioChan) post(qp *verbs.QP, pe int, w nic.WQE, gpuSource bool) error {
	c := ch.c
	wg, b := ch.wg, c.b
	if b.shared {
		unlock := ch.lock(pe, 0, "its turn to post on a shared QP")
		defer unlock()
	}
	if gpuSource && b.spec.PPBLines > 0 && !b.spec.SkipPPBFlush {
		// The flush comes first, as ROC_SHMEM's GPU-IB post takes its
		// lock (postLock: hdp_flush, then the CQ-space check, the slot
		// claim and the WQE stores), so it is over long before the NIC
		// reads this put's WQE and payload.
		qp.FlushPPB(wg)
		b.stats.PPBFlushes++
	}
	if qp.Outstanding() >= uint64(qp.Depth()) {
		var err error
		if b.shared {
			// The oldest slot frees with a completion: poll in the CQ's
			// turn too (one consumer at a time).
			unlockPoll := ch.lock(pe, 16, "its turn to poll a shared CQ")
			err = ch.waitDone(qp, pe, qp.Posted()-uint64(qp.Depth()-1))
			unlockPoll()
		} else {
			err = ch.waitKeep(qp, uint64(qp.Depth()-1))
		}
		if err != nil {
			return err
		}
	}
	if i := c.q*b.dev.npes + pe; b.posted[i/64]&(1<<(i%64)) == 0 {
		if b.closed || b.spec.TemplateAtInit {
			b.materialize(c, pe, i)
		}
		b.posted[i/64] |= 1 << (i % 64)
	}
	g := wg.GPU().Spec()
	wg.Sleep(g.Cycles(g.L2Cycles)) // claim the slot: device-scope atomic on the producer index
	k := qp.Posted()
	if uint64(c.templated.at(pe)) <= k {
		b.stats.TemplateStalls++
		t0 := wg.Now()
		b.work.Notify()
		wg.WaitUntil(&b.work, "gio: template of the next slot", func() bool { return uint64(c.templated.at(pe)) > k })
		b.stats.StallTime += wg.Now() - t0
	}
	if err := qp.PostFields(wg, w, []int{0, 1, 2, 3}); err != nil {
		return err
	}
	wg.Release(gpu.System)
	qp.RingUnfenced(wg) // the system release above is the fence
	b.stats.Posts++
	if ch.shared {
		if ch.last == nil {
			ch.last = make(map[int]uint64)
		}
		ch.last[pe] = qp.Posted()
	}
	return nil
}

// lock takes the turn of this context's QP set on its QP to pe (which 0:
// posting, 16: polling) and returns the release: a ticket from a
// device-scope atomic, a poll of the now-serving word until it comes up,
// and at the end a device release and the now-serving word's increment.
func (ch *gioChan) lock(pe int, which mem.Addr, what string) func() {
	wg, b := ch.wg, ch.c.b
	ticket := b.lock(ch.c.q*b.dev.npes+pe) + which
	t0 := wg.Now()
	t := wg.AtomicAdd64(ticket, 1)
	wg.PollDevice(ticket+8, what, func(x uint64) bool { return x == t })
	b.stats.TurnTime += wg.Now() - t0
	return func() {
		wg.Release(gpu.Device)
		wg.AtomicAdd64(ticket+8, 1)
	}
}

// lock returns the address of the ticket lock of connection i (set ×
// npes + PE).
func (b *gioBackend) lock(i int) mem.Addr { return b.locks + mem.Addr(32*i) }

// waitOwn waits until the context's posts on qp (to pe) have completed:
// every WQE of an own QP, up to its last post on a shared one.
func (ch *gioChan) waitOwn(qp *verbs.QP, pe int) error {
	if !ch.shared {
		return ch.wait(qp)
	}
	if qp.Completed() >= ch.last[pe] {
		ch.c.b.work.Notify() // as wait's, which the templater may be waiting on
		return nil
	}
	unlock := ch.lock(pe, 16, "its turn to poll a shared CQ")
	defer unlock()
	return ch.waitDone(qp, pe, ch.last[pe])
}

// waitDone polls qp's CQ (the caller holding its poll turn, or the post
// turn while it waits for a free slot) until n WQEs of qp have completed.
func (ch *gioChan) waitDone(qp *verbs.QP, pe int, n uint64) error {
	e, ok := ch.c.conns.get(pe).cq.WaitDone(ch.wg, qp, n)
	ch.c.b.work.Notify() // slots freed: more templating
	if !ok {
		return fmt.Errorf("%w: GIO work request on QP %d completed with %v", ErrFailed, e.QPN, e.Status)
	}
	return nil
}

// wait polls qp's CQ until qp has nothing outstanding.
func (ch *gioChan) wait(qp *verbs.QP) error { return ch.waitKeep(qp, 0) }

func (ch *gioChan) waitKeep(qp *verbs.QP, keep uint64) error {
	c := ch.c
	var cq *verbs.CQ
	if pe := qp.PeerRank(); pe >= 0 && pe < c.b.dev.npes {
		if cn := c.conns.get(pe); cn != nil && cn.qp == qp {
			cq = cn.cq
		}
	}
	if cq == nil {
		c.conns.each(func(_ int, cn *gioConn) {
			if cn.qp == qp {
				cq = cn.cq
			}
		})
	}
	e, ok := cq.WaitQP(ch.wg, qp, keep)
	c.b.work.Notify() // slots freed: more templating
	if !ok {
		return fmt.Errorf("%w: GIO work request on QP %d completed with %v", ErrFailed, e.QPN, e.Status)
	}
	return nil
}

// quiet completes every WQE the context issued, in PE order. A
// connection not yet made has nothing outstanding: it gets only wait's
// notification of the templater, once per run of them (a second
// notification with nothing run in between finds no waiter).
func (ch *gioChan) quiet() error {
	c := ch.c
	me, npes := c.b.dev.pe, c.b.dev.npes
	next := 0 // the first PE not yet visited
	unmade := func(to int) {
		// PEs next … to−1 have no connection: notify if one is not this PE.
		if to-next > 1 || to-next == 1 && next != me {
			c.b.work.Notify()
		}
	}
	var err error
	c.conns.each(func(pe int, cn *gioConn) {
		if err != nil {
			return
		}
		unmade(pe)
		next = pe + 1
		err = ch.waitOwn(cn.qp, pe)
	})
	if err != nil {
		return err
	}
	unmade(npes)
	ch.wg.Acquire(gpu.System)
	return nil
}

// claimTime returns the slot claim's time on wg's GPU: a device-scope
// atomic on the producer index, at the L2.
func (b *gioBackend) claimTime(wg *gpu.WG) sim.Duration {
	if g := wg.GPU(); g != b.claimG {
		s := g.Spec()
		b.claimG, b.claim = g, s.Cycles(s.L2Cycles)
	}
	return b.claim
}
