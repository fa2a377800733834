package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
)

// lib is the host side of OpenSHMEM over Portals (the dissertation (Portals 4), SOS-like)
// as the service threads call it: one non-matching portal table entry
// per symmetric allocation (match bits = allocation index, remote offset
// = offset in it), one counting event per context, puts with CT_ACK_REQ,
// gets counted on REPLY, AMOs as Portals atomics. Fence is a no-op on the
// in-order network; quiet(ctx) waits until the context's CT counts every
// operation issued on it. The library's shared state is guarded by
// mutexes built on lock-prefixed RMWs of their own lines, taken when
// several threads call the library (SHMEM_THREAD_MULTIPLE)
// (the dissertation's ComP-Net chapter), scoped as in a thread-safe SOS: each context
// has its own (its CT, issue count and Portals posts), held across its
// critical section only (the context's bounce words, CT, issue count and
// Portals posts, as SOS keeps them per context). Service threads that own
// different queues (different contexts) therefore never wait for each
// other's locks.
type lib struct {
	b    *queueBackend
	nic  *nic.NIC
	link *pcie.Link // the NIC's attachment: CT reads
	pt   int
	ctxs map[int]*lctx
	m    *mem.Memory
	pool mem.Pool
	// locks counts mutex acquisitions, spins the failed test-and-sets
	// among them (a thread found the lock held by another).
	locks, spins uint64
	// multiple says more than one thread calls the library: the runtime
	// initialises it at SHMEM_THREAD_MULTIPLE and the mutexes are taken.
	// With a single caller it is initialised single-threaded, and a
	// thread-safe SOS takes no mutex at all (its SHMEM_MUTEX_LOCK is a
	// no-op below SHMEM_THREAD_MULTIPLE).
	multiple bool
}

// lctx is one OpenSHMEM context's library state. Its mutex word and
// issue count share one line of library memory (the CP's: GPU memory
// behind the L2), the struct's first line.
type lctx struct {
	ct     *nic.CT
	state  mem.Addr // word 0: the mutex; word 1: operations issued
	mirror mem.Addr // the CT as the NIC writes it back: success, failure
	issued uint64
	bounce []mem.Addr // free 8 B words for inline data and AMO operands
	inUse  []mem.Addr
}

func newLib(b *queueBackend, n Node, pool mem.Pool) *lib {
	l := &lib{b: b, nic: n.NIC, link: n.NICLink, m: n.Mem, pool: pool, ctxs: map[int]*lctx{}}
	l.pt = n.NIC.PTAlloc(nil, false)
	return l
}

func (l *lib) expose(idx int, base mem.Addr, size uint64) {
	l.nic.MEAppend(l.pt, nic.ME{Start: base, Length: size, MatchID: nic.AnyID, MatchBits: uint64(idx),
		Options: nic.MEOpPut | nic.MEOpGet | nic.MEEventDisable}, nic.Priority)
}

func (l *lib) ctx(i int) *lctx {
	c := l.ctxs[i]
	if c == nil {
		c = &lctx{ct: l.nic.NewCT(), state: l.m.AllocData(l.pool, mem.LineSize, fmt.Sprintf("shmem.lib.ctx[%d]", i)),
			mirror: l.m.AllocData(l.pool, mem.LineSize, fmt.Sprintf("shmem.lib.ct[%d]", i))}
		if g := l.b.dev.rt.node.GPU; l.pool == mem.GPU && g != nil {
			g.ShareWithNIC(c.mirror, mem.LineSize) // a system acquire drops the CP's stale L2 copy
		}
		c.ct.Mirror(c.mirror)
		l.ctxs[i] = c
	}
	return c
}

// lock takes the mutex at a: a test-and-set by lock-prefixed RMW,
// retried after a short spin while another thread holds it. Spinning
// stays on the core, so a holder time-sliced on the same core gets it
// back at the spinner's quantum end.
func (l *lib) lock(c consumer, a mem.Addr) {
	if !l.multiple {
		return
	}
	c.instr(l.b.sw.Mutex)
	l.locks++
	for c.rmw(a, func(uint64) uint64 { return 1 }) != 0 {
		l.spins++
		c.instr(l.b.sw.ConsumerPoll)
	}
}

func (l *lib) unlock(c consumer, a mem.Addr) {
	if l.multiple {
		c.local(a, 0)
	}
}

// word returns a bounce word of ctx holding v, written by the service
// thread (with ctx's lock held).
func (l *lib) word(c consumer, ctx *lctx, v uint64) mem.Addr {
	a := l.bounceWord(ctx)
	c.local(a, v)
	return a
}

// bounceWord takes a free bounce word of ctx (with ctx's lock held).
func (l *lib) bounceWord(ctx *lctx) mem.Addr {
	if len(ctx.bounce) == 0 {
		base := l.m.AllocData(l.pool, 8*mem.LineSize, "shmem.lib.bounce")
		for i := range 8 * mem.LineSize / 8 {
			ctx.bounce = append(ctx.bounce, base+mem.Addr(8*i))
		}
	}
	a := ctx.bounce[len(ctx.bounce)-1]
	ctx.bounce = ctx.bounce[:len(ctx.bounce)-1]
	ctx.inUse = append(ctx.inUse, a)
	return a
}

func atomicType(n uint64) nic.AtomicType {
	if n == 4 {
		return nic.Uint32
	}
	return nic.Uint64
}

// issue hands entry e of queue q to the NIC (the dissertation's ComP-Net chapter step
// 2): blocking entries are issued as their non-blocking forms.
func (l *lib) issue(s *service, q *queue, e entry) {
	c := s.port
	if e.op == OpFence || e.op == OpQuiet {
		start := s.now()
		c.instr(l.b.sw.ShmemQuiet)
		s.span("library call", start)
		if e.blocking() {
			q.stamp(e.seq, PhaseLibrary, start)
			q.stamp(e.seq, PhasePortals, s.now())
			q.stamp(e.seq, PhaseNetwork, s.now())
		}
		return
	}
	sw := &l.b.sw
	start := s.now()
	if e.blocking() {
		q.stamp(e.seq, PhaseLibrary, start)
	}
	c.instr(sw.ShmemOp) // argument checks, symmetric address translation: no shared state
	s.span("library call", start)
	post := s.now()
	if e.blocking() {
		q.stamp(e.seq, PhasePortals, post)
	}
	defer func() {
		s.span("Portals post", post)
		if e.blocking() {
			q.stamp(e.seq, PhaseNetwork, s.now())
		}
	}()
	ctx := l.ctx(q.idx)
	cmd := l.command(q, e, ctx)
	// The critical section: the context's bounce words, issue count and
	// the Portals post on its command queue.
	l.lock(c, ctx.state)
	defer l.unlock(c, ctx.state)
	if e.op.bounced() {
		cmd.MD.Start = l.word(c, ctx, e.src) // inline data or the AMO operand
	}
	c.instr(sw.PortalsPost)
	ctx.issued++
	c.local(ctx.state+8, ctx.issued)
	c.releaseSystem() // the command's source data visible to the NIC
	c.addPCIe()       // the doorbell
	l.nic.Doorbell(c.proc(), cmd)
}

// command is entry e's Portals command on context ctx; an operation with
// inline data or an AMO operand gets its bounce word as the MD's start
// later (under the context's lock).
func (l *lib) command(q *queue, e entry, ctx *lctx) nic.Command {
	heap := l.b.dev.heap
	sym := e.dst
	if e.op == OpGet {
		sym = mem.Addr(e.src)
	}
	idx, off, ok := heap.lookup(sym, e.len)
	if !ok {
		panic(fmt.Sprintf("shmem: queue %d entry %d: %#x is not symmetric (the device library checks this) %+v mem=%x", q.idx, e.seq, uint64(sym), e, l.m.Bytes(q.slot(e.seq), 64)))
	}
	cmd := nic.Command{Target: e.pe, PT: l.pt, MatchBits: uint64(idx), RemoteOffset: off, Length: e.len}
	md := func(a mem.Addr, n uint64, opt nic.MDOptions) *nic.MD {
		return &nic.MD{Start: a, Length: n, CT: ctx.ct, Options: opt | nic.MDEventSuccessDisable}
	}
	switch e.op {
	case OpPut:
		cmd.Op, cmd.MD, cmd.Ack = nic.CmdPut, md(mem.Addr(e.src), e.len, 0), nic.CTAckReq
	case OpP:
		cmd.Op, cmd.MD, cmd.Ack = nic.CmdPut, md(0, e.len, 0), nic.CTAckReq
	case OpGet:
		cmd.Op, cmd.MD = nic.CmdGet, md(e.dst, e.len, nic.MDEventCTReply)
	case OpAdd:
		cmd.Op, cmd.MD, cmd.Ack = nic.CmdAtomic, md(0, 8, 0), nic.CTAckReq
		cmd.AtomicOp, cmd.AtomicType = nic.Sum, atomicType(e.len)
	default: // fetching atomics: the old value lands in the slot's result word
		cmd.MD = &nic.MD{Length: 8}
		cmd.ResultMD = md(q.result(e.seq), 8, nic.MDEventCTReply)
		cmd.AtomicType = atomicType(e.len)
		switch e.op {
		case OpFetchAdd:
			cmd.Op, cmd.AtomicOp = nic.CmdFetchAtomic, nic.Sum
		case OpSwap:
			cmd.Op, cmd.AtomicOp = nic.CmdSwap, nic.Swap
		case OpCSwap:
			cmd.Op, cmd.AtomicOp, cmd.Operand = nic.CmdSwap, nic.CSwap, e.cond
		}
	}
	return cmd
}

// quiet is shmem_ctx_quiet on context i with n pending entries: check
// each (ShmemQuiet instructions) and read the context's CT where the NIC
// writes it back (library memory: the helper's cache, the CP's L2 after
// the system acquire quietPending issues first). It reports
// whether the CT counts every operation issued on the context, and
// whether any failed; it does not wait.
func (l *lib) quiet(c consumer, i, n int) (done, failed bool) {
	c.instr(l.b.sw.ShmemQuiet * n)
	ctx := l.ctx(i)
	l.lock(c, ctx.state)
	succ, fail := c.ctRead(ctx.mirror)
	defer l.unlock(c, ctx.state)
	if succ+fail < ctx.issued {
		return false, false
	}
	ctx.bounce = append(ctx.bounce, ctx.inUse...)
	ctx.inUse = ctx.inUse[:0]
	return true, fail > 0
}
