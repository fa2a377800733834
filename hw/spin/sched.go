package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// her is a handler execution request (the SC'19 paper).
type her struct {
	kind Kind
	p    *packet // nil for the completion handler
	msg  *msgState
}

// unitQ is what the scheduler hands an HPU: one HER (default policy) or a
// vHPU with its queue of ready HERs (blocked round-robin).
type unitQ struct {
	hers    []*her
	head    int
	vhpu    int // -1 for a lone HER
	running bool
	queued  bool
}

// msgState is the scheduler's view of one message.
type msgState struct {
	ctx         *Context
	cm          *nic.CtxMsg
	headerDone  bool
	held        []*her // payload HERs waiting for the header handler
	payloadLeft int    // payload handlers (or deposits) not finished
	vhpus       []*unitQ
	failed      bool
	dropped     bool
	maxIdx      int       // highest packet index taken so far
	expected    int       // packets of the message (a streaming put's grows known at its end)
	out         *Outbound // outbound sPIN message (ProcessPut); nil for inbound ones
	static      *Static   // a static run's packets (RunStatic); nil otherwise
}

func newMsgState(c *Context, m *nic.CtxMsg) *msgState {
	ms := &msgState{ctx: c, cm: m, payloadLeft: m.Packets(), expected: m.Packets(), headerDone: c.header == nil}
	if c.policy.BlockedRR {
		ms.vhpus = make([]*unitQ, c.policy.VHPUs)
	}
	return ms
}

// scheduler assigns ready HERs to idle HPUs (the SC'19 paper). Happens-before:
// a message's payload HERs become ready only once its header handler has
// finished, and its completion HER only once every payload handler has.
type scheduler struct {
	s        *NIC
	idle     []*hpu
	runnable []*unitQ
	rhead    int
}

// arrived raises the HERs of a packet now in the packet buffer.
func (q *scheduler) arrived(p *packet) {
	ms := p.msg
	c := ms.ctx
	if p.pk.Index == 0 && c.header != nil {
		p.refs++
		q.push(&unitQ{hers: []*her{{kind: Header, p: p, msg: ms}}, vhpu: -1})
	}
	switch {
	case c.payload == nil:
		// No payload handler: the bytes land at their stream offset, as
		// on the plain path, through the DMA engine.
		q.s.deposit(p)
		q.s.unref(p)
		q.payloadDone(ms)
	case !ms.headerDone:
		ms.held = append(ms.held, &her{kind: Payload, p: p, msg: ms})
	default:
		q.ready(&her{kind: Payload, p: p, msg: ms})
	}
	q.dispatch()
}

// deposit DMAs a packet's payload to its offset from the ME start.
func (s *NIC) deposit(p *packet) {
	if p.pk.Len == 0 {
		return
	}
	p.refs++
	s.dma.enqueue(&dmaReq{host: p.msg.cm.Host() + memAddr(p.pk.Offset), n: unitBytes(p.pk.Len), data: p.pk.Data, pkt: p, hpu: -1})
}

// ready makes a payload HER runnable under the context's policy.
func (q *scheduler) ready(x *her) {
	pol := x.msg.ctx.policy
	if !pol.BlockedRR {
		q.push(&unitQ{hers: []*her{x}, vhpu: -1})
		return
	}
	v := (x.p.pk.Index / pol.Delta) % pol.VHPUs
	u := x.msg.vhpus[v]
	if u == nil {
		u = &unitQ{vhpu: v}
		x.msg.vhpus[v] = u
	}
	u.hers = append(u.hers, x)
	if !u.running && !u.queued {
		q.push(u)
	}
}

func (q *scheduler) push(u *unitQ) {
	u.queued = true
	q.runnable = append(q.runnable, u)
}

// dispatch hands runnable units to idle HPUs, both in FIFO order.
func (q *scheduler) dispatch() {
	for len(q.idle) > 0 && q.rhead < len(q.runnable) {
		u := q.runnable[q.rhead]
		q.runnable[q.rhead] = nil
		q.rhead++
		u.queued, u.running = false, true
		h := q.idle[0]
		q.idle = q.idle[1:]
		h.unit = u
		h.sig.Notify()
	}
	if q.rhead == len(q.runnable) {
		q.runnable, q.rhead = q.runnable[:0], 0
	}
}

// takeIdle removes h from the idle HPUs; false if it is not idle.
func (q *scheduler) takeIdle(h *hpu) bool {
	for i, x := range q.idle {
		if x == h {
			q.idle = append(q.idle[:i], q.idle[i+1:]...)
			return true
		}
	}
	return false
}

// done runs after a handler (or its skip) for HER x.
func (q *scheduler) done(x *her) {
	ms := x.msg
	switch x.kind {
	case Header:
		ms.headerDone = true
		for _, y := range ms.held {
			q.ready(y)
		}
		ms.held = nil
		q.s.unref(x.p)
	case Payload:
		if ms.out != nil {
			ms.out.packetDone(x.p.pk.Index)
		} else {
			q.s.unref(x.p)
		}
		q.payloadDone(ms)
	case Completion:
		q.finish(ms)
	}
}

func (q *scheduler) payloadDone(ms *msgState) {
	ms.payloadLeft--
	if ms.payloadLeft > 0 {
		return
	}
	if ms.ctx.completion != nil && !ms.failed {
		q.push(&unitQ{hers: []*her{{kind: Completion, msg: ms}}, vhpu: -1})
		return
	}
	q.finish(ms)
}

// finish completes the message once every DMA issued so far is on PCIe
// (and, through the NIC, once those writes are visible).
func (q *scheduler) finish(ms *msgState) {
	if ms.static != nil {
		ms.static.finish()
		return
	}
	if ms.out != nil {
		ms.out.finish(ms.failed)
		return
	}
	q.s.dma.afterPosted(func() {
		fail := nic.FailOK
		if ms.failed {
			fail = nic.FailHandler
			q.s.stats.Failed++
		}
		ms.cm.Complete(fail)
	})
}

// hpu is one handler processing unit: a blocking agent that runs the HERs
// of the unit the scheduler gives it.
type hpu struct {
	s     *NIC
	id    int
	track string
	unit  *unitQ
	sig   sim.Signal
	wake  sim.Signal // blocking DMAs and reads
	last  sim.Time   // when its last handler ended
	// overlaps counts handlers that started before the HPU's previous one
	// ended (an invariant: an HPU runs one handler at a time).
	overlaps uint64
	// record, when set, receives every handler run (static runs).
	record func(HandlerRun)
}

func (h *hpu) run(p *sim.Proc) {
	q := &h.s.sched
	for {
		p.WaitUntil(&h.sig, "her", func() bool { return h.unit != nil })
		u := h.unit
		for u.head < len(u.hers) {
			x := u.hers[u.head]
			u.hers[u.head] = nil
			u.head++
			h.exec(p, x, u.vhpu)
			q.done(x)
		}
		u.hers, u.head, u.running = u.hers[:0], 0, false
		h.unit = nil
		q.idle = append(q.idle, h)
		q.dispatch()
	}
}

// exec runs one handler (or skips it after DROP/FAIL).
func (h *hpu) exec(p *sim.Proc, x *her, vhpu int) {
	ms := x.msg
	c := ms.ctx
	fn := [...]Handler{c.header, c.payload, c.completion}[x.kind]
	if ms.failed || (ms.dropped && x.kind == Payload) {
		if x.kind == Payload {
			h.s.stats.Dropped++
		}
		return
	}
	s := h.s
	if x.p != nil && ms.out == nil {
		// The packet moves to the HPU's local memory before its handler
		// starts (pulp: the cluster DMA from L2 into L1).
		if ready := s.mem.stage(p.Now(), h.id, x.p.addr, x.p.size); ready > p.Now() {
			s.stats.StageWait += ready - p.Now()
			p.SleepUntil(ready)
		}
	}
	start := p.Now()
	if start < h.last {
		h.overlaps++
	}
	invoke := s.spec.Cycles(s.spec.InvokeCycles)
	hc := &HandlerCtx{s: s, p: p, h: h, ms: ms, Kind: x.kind, Msg: ms.cm, VHPU: vhpu, HPU: h.id, start: start,
		t: start + invoke, work: invoke, pkt: x.p}
	if x.p != nil {
		hc.Packet = x.p.pk
	}
	ret := fn(hc)
	hc.sync()
	s.stats.Handlers[x.kind]++
	s.stats.HandlerBusy += p.Now() - start
	s.stats.HandlerWork += hc.work
	h.last = p.Now()
	if h.record != nil {
		h.record(HandlerRun{HPU: h.id, Index: hc.Packet.Index, Kind: x.kind, Start: start, Elapsed: p.Now() - start, Work: hc.work})
	}
	if s.e.Tracer() != nil {
		s.e.Span(h.track, x.kind.String(), start, p.Now())
	}
	switch ret {
	case Drop:
		ms.dropped = true
	case Fail:
		ms.failed = true
	}
}

// learnLength updates a streaming put's packet count once the NIC knows it.
func (ms *msgState) learnLength() {
	if n := ms.cm.Packets(); n != ms.expected {
		ms.payloadLeft -= ms.expected - n
		ms.expected = n
	}
}
