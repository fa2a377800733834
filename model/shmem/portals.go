package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
)

// lib is the host side of OpenSHMEM over Portals (nic.md §6.2, SOS-like)
// as the service threads call it: one non-matching portal table entry
// per symmetric allocation (match bits = allocation index, remote offset
// = offset in it), one counting event per context, puts with CT_ACK_REQ,
// gets counted on REPLY, AMOs as Portals atomics. Fence is a no-op on the
// in-order network; quiet(ctx) waits until the context's CT counts every
// operation issued on it. The library's shared state is guarded by a
// mutex built on a lock-prefixed RMW (gpu-networking.md §1.5).
type lib struct {
	b      *queueBackend
	nic    *nic.NIC
	link   *pcie.Link // the NIC's attachment: CT reads
	pt     int
	mutex  mem.Addr
	ctxs   map[int]*lctx
	m      *mem.Memory
	pool   mem.Pool
	bounce []mem.Addr // free 8 B words for inline data and AMO operands
}

type lctx struct {
	ct     *nic.CT
	issued uint64
	inUse  []mem.Addr
}

func newLib(b *queueBackend, n Node, pool mem.Pool) *lib {
	l := &lib{b: b, nic: n.NIC, link: n.NICLink, m: n.Mem, pool: pool, ctxs: map[int]*lctx{}}
	l.pt = n.NIC.PTAlloc(nil, false)
	l.mutex = n.Mem.AllocData(pool, 8, "shmem.lib.mutex")
	return l
}

func (l *lib) expose(idx int, base mem.Addr, size uint64) {
	l.nic.MEAppend(l.pt, nic.ME{Start: base, Length: size, MatchID: nic.AnyID, MatchBits: uint64(idx),
		Options: nic.MEOpPut | nic.MEOpGet | nic.MEEventDisable}, nic.Priority)
}

func (l *lib) ctx(i int) *lctx {
	c := l.ctxs[i]
	if c == nil {
		c = &lctx{ct: l.nic.NewCT()}
		l.ctxs[i] = c
	}
	return c
}

// lock takes the library mutex: a test-and-set by lock-prefixed RMW,
// retried after a short spin while another thread holds it. Spinning
// stays on the core, so a holder time-sliced on the same core gets it
// back at the spinner's quantum end.
func (l *lib) lock(c consumer) {
	c.instr(l.b.sw.Mutex)
	for c.rmw(l.mutex, func(uint64) uint64 { return 1 }) != 0 {
		c.instr(l.b.sw.ConsumerPoll)
	}
}

func (l *lib) unlock(c consumer) { c.local(l.mutex, 0) }

// word returns a bounce word holding v, written by the service thread.
func (l *lib) word(c consumer, ctx *lctx, v uint64) mem.Addr {
	if len(l.bounce) == 0 {
		base := l.m.AllocData(l.pool, 64*mem.LineSize, "shmem.lib.bounce")
		for i := range 64 * mem.LineSize / 8 {
			l.bounce = append(l.bounce, base+mem.Addr(8*i))
		}
	}
	a := l.bounce[len(l.bounce)-1]
	l.bounce = l.bounce[:len(l.bounce)-1]
	ctx.inUse = append(ctx.inUse, a)
	c.local(a, v)
	return a
}

func atomicType(n uint64) nic.AtomicType {
	if n == 4 {
		return nic.Uint32
	}
	return nic.Uint64
}

// issue hands entry e of queue q to the NIC (gpu-networking.md §1.4 step
// 2): blocking entries are issued as their non-blocking forms.
func (l *lib) issue(c consumer, q *queue, e entry) {
	if e.op == OpFence || e.op == OpQuiet {
		c.instr(l.b.sw.ShmemQuiet)
		return
	}
	l.lock(c)
	defer l.unlock(c)
	sw := l.b.sw
	c.instr(sw.ShmemOp + sw.PortalsPost)
	ctx := l.ctx(q.idx)
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
		cmd.Op, cmd.MD, cmd.Ack = nic.CmdPut, md(l.word(c, ctx, e.src), e.len, 0), nic.CTAckReq
	case OpGet:
		cmd.Op, cmd.MD = nic.CmdGet, md(e.dst, e.len, nic.MDEventCTReply)
	case OpAdd:
		cmd.Op, cmd.MD, cmd.Ack = nic.CmdAtomic, md(l.word(c, ctx, e.src), 8, 0), nic.CTAckReq
		cmd.AtomicOp, cmd.AtomicType = nic.Sum, atomicType(e.len)
	default: // fetching atomics: the old value lands in the slot's result word
		cmd.MD = &nic.MD{Start: l.word(c, ctx, e.src), Length: 8}
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
	ctx.issued++
	c.releaseSystem() // the command's source data visible to the NIC
	c.addPCIe()       // the doorbell
	l.nic.Doorbell(c.proc(), cmd)
}

// quiet is shmem_ctx_quiet on context i with n pending entries: check
// each (ShmemQuiet instructions) and read the context's CT. It reports
// whether the CT counts every operation issued on the context, and
// whether any failed; it does not wait.
func (l *lib) quiet(c consumer, i, n int) (done, failed bool) {
	c.instr(l.b.sw.ShmemQuiet * n)
	ctx := l.ctx(i)
	c.addPCIe() // CT read
	c.stall(l.link.Read(pcie.Down, c.proc().Now(), 8, false))
	succ, fail := ctx.ct.Get()
	if succ+fail < ctx.issued {
		return false, false
	}
	l.bounce = append(l.bounce, ctx.inUse...)
	ctx.inUse = ctx.inUse[:0]
	return true, fail > 0
}
