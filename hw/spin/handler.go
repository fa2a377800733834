package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// HandlerCtx is what a running handler sees and how it spends time: its
// packet, its message, and the handler services of the SC'19 paper. Compute is
// charged with Cycles against a handler-local clock that runs ahead of the
// engine; services that interact with shared resources (NIC memory, DMA,
// commands) first bring the HPU's agent to that time, so every request
// reaches its resource at the simulated time the handler issued it.
type HandlerCtx struct {
	s     *NIC
	p     *sim.Proc
	h     *hpu
	pkt   *packet
	ms    *msgState
	start sim.Time
	t     sim.Time
	work  sim.Duration // cycles charged: compute, invocation, DMA issue

	Kind   Kind          // which handler this is
	Packet nic.CtxPacket // the packet (zero for the completion handler)
	Msg    *nic.CtxMsg   // the message; Msg.State is the context's per-message state
	VHPU   int           // the vHPU under blocked round-robin, else -1
	HPU    int           // the physical HPU
}

// Spec returns the NIC's parameters (cycle costs for the handler's model).
func (h *HandlerCtx) Spec() Spec { return h.s.spec }

// Elapsed is the handler's time so far, invocation overhead included.
func (h *HandlerCtx) Elapsed() sim.Duration { return h.t - h.start }

// Now is the handler's local time: the engine's time plus the compute
// charged since the last service call.
func (h *HandlerCtx) Now() sim.Time { return h.t }

// Work is the part of Elapsed the handler charged as cycles (compute,
// invocation, DMA issue): the instructions of a single-issue core at one
// per cycle. Elapsed − Work is time stalled on memories and DMAs, so
// Work/Elapsed is the handler's IPC under the cost model.
func (h *HandlerCtx) Work() sim.Duration { return h.work }

// Cycles charges n HPU cycles of compute.
func (h *HandlerCtx) Cycles(n int) { h.charge(h.s.spec.Cycles(n)) }

func (h *HandlerCtx) charge(d sim.Duration) {
	h.t += d
	h.work += d
}

// sync brings the HPU's agent to the handler's local time.
func (h *HandlerCtx) sync() {
	if h.t > h.p.Now() {
		h.p.SleepUntil(h.t)
	}
}

// NICMem reads or writes b bytes of the handler's HPU-local state (arm:
// the shared NIC-memory server with its bandwidth, channels and latency;
// pulp: the L1 banks of the HPU's core); the HPU waits for it.
func (h *HandlerCtx) NICMem(b unit.Bytes) {
	h.sync()
	h.t = h.s.mem.local(h.p.Now(), h.HPU, b)
	h.sync()
}

// SharedMem reads or writes b bytes at offset off of the context's shared
// NIC memory (dataloops, master checkpoints; arm: NIC memory, pulp: L2
// with its bank queues); the HPU waits for it.
func (h *HandlerCtx) SharedMem(off, b unit.Bytes) {
	h.sync()
	h.t = h.s.mem.shared(h.p.Now(), h.HPU, h.ms.ctx.base+uint64(off), b)
	h.sync()
}

// SharedMemEach is n rounds of SharedMem(off, b) each followed by work of
// compute (a loop that reads shared memory once per item, such as a
// catch-up reading the leaf dataloop per skipped block), in one step: the
// memory serves the n reads as it serves such a loop (arm: their bytes
// queue at the NIC memory together; pulp: word accesses at the L2 bank,
// see hw/pulp), the handler waits for that and for each read's latency in
// turn; the compute is charged as work, the rest as stalls.
func (h *HandlerCtx) SharedMemEach(off, b unit.Bytes, n int, work sim.Duration) {
	if n <= 0 {
		return
	}
	h.sync()
	now := h.p.Now()
	lat := h.s.mem.sharedLatency()
	h.t = now + h.s.mem.sharedEach(now, h.HPU, h.ms.ctx.base+uint64(off), b, n) + sim.Duration(n)*(lat+work)
	h.work += sim.Duration(n) * work
	h.sync()
}

// Bring makes the b-byte object at offset off of the context's memory (a
// checkpoint or segment worked on in place) resident where this HPU works:
// nothing on the flat NIC memory; on pulp a DMA into the L1 of the HPU's
// cluster on first use, or from the L1 of the cluster that used it last.
// The HPU waits for it.
func (h *HandlerCtx) Bring(off, b unit.Bytes) {
	if h.s.accel == nil {
		return // one flat NIC memory: used in place, nothing to move
	}
	h.sync()
	h.t = max(h.t, h.s.mem.bring(h.p.Now(), h.HPU, h.ms.ctx.base+uint64(off), b))
	h.sync()
}

// DMAPayload issues PtlHandlerDMAToHostNB from the packet's payload bytes
// [off, off+n) to host address dst (flags: NoEvent). The packet stays in
// the packet buffer until the DMA engine has read them.
func (h *HandlerCtx) DMAPayload(off, n uint64, dst mem.Addr, flags int) {
	if h.pkt == nil || off+n > h.pkt.pk.Len {
		panic(fmt.Sprintf("%s: %v handler DMAs payload [%d, +%d) of a %d-byte packet", h.h.track, h.Kind, off, n, h.pktLen()))
	}
	var data []byte
	if h.pkt.pk.Data != nil {
		data = h.pkt.pk.Data[off : off+n]
	}
	h.pkt.refs++
	h.issue(&dmaReq{host: dst, n: unit.Bytes(n), data: data, pkt: h.pkt, event: flags&NoEvent == 0, tag: h.ms.ctx.Tag, hpu: h.HPU})
}

func (h *HandlerCtx) pktLen() uint64 {
	if h.pkt == nil {
		return 0
	}
	return h.pkt.pk.Len
}

// DMAToHost issues PtlHandlerDMAToHostNB of n bytes of NIC memory (data,
// nil in a payload-free run) to dst; a zero-byte DMA without NoEvent is
// the completion handler's end-of-message marker (the SC'19 paper).
func (h *HandlerCtx) DMAToHost(data []byte, n uint64, dst mem.Addr, flags int) {
	h.issue(&dmaReq{host: dst, n: unit.Bytes(n), data: data, event: flags&NoEvent == 0, tag: h.ms.ctx.Tag, hpu: h.HPU})
}

// DMAToHostB is the blocking PtlHandlerDMAToHostB: the HPU waits until
// the write is visible in host memory.
func (h *HandlerCtx) DMAToHostB(data []byte, n uint64, dst mem.Addr, flags int) {
	done := false
	r := &dmaReq{host: dst, n: unit.Bytes(n), data: data, event: flags&NoEvent == 0, tag: h.ms.ctx.Tag, hpu: h.HPU,
		wake: func() { done = true; h.h.wake.Notify() }}
	h.issue(r)
	h.sync()
	h.p.WaitUntil(&h.h.wake, "blocking DMA to host", func() bool { return done })
	h.t = h.p.Now()
}

func (h *HandlerCtx) issue(r *dmaReq) {
	h.charge(h.s.spec.Cycles(h.s.spec.DMAIssueCycles))
	s := h.s
	if s.dmaQ == nil || s.spec.PULP.DMAQueue == 0 {
		s.e.At(h.t, func() { s.dma.enqueue(r) })
		return
	}
	// The cluster DMA takes a bounded number of transfers: a core issuing
	// into a full queue stalls until one has been read out.
	h.sync()
	c := s.accel.Cluster(h.HPU)
	if q := s.spec.PULP.DMAQueue; s.dmaQ[c] >= q {
		t0 := h.p.Now()
		h.p.WaitUntil(&s.dmaQS[c], "cluster DMA queue", func() bool { return s.dmaQ[c] < q })
		h.t = h.p.Now()
		s.stats.DMAQueueWait += h.t - t0
	}
	s.dmaQ[c]++
	r.queued = true
	s.dma.enqueue(r)
}

// DMAFromHostB reads n bytes at host address src into dst (nil: timing
// only) by a DMA read over PCIe; the HPU waits for the data.
func (h *HandlerCtx) DMAFromHostB(src mem.Addr, n uint64, dst []byte) {
	h.charge(h.s.spec.Cycles(h.s.spec.DMAIssueCycles))
	h.sync()
	h.s.stats.DMAReads++
	done := false
	h.s.nic.HostRead(src, n, func() {
		if dst != nil {
			h.s.host.Read(src, dst[:n])
		}
		done = true
		h.h.wake.Notify()
	})
	h.p.WaitUntil(&h.h.wake, "DMA read from host", func() bool { return done })
	h.t = h.p.Now()
}

// Command pushes a NIC command (Put, Get, counter update …) into the NIC
// command queue from the handler (the SC'19 paper): it executes CmdLatency
// later, with no doorbell and no PCIe fetch.
func (h *HandlerCtx) Command(cmd nic.Command) {
	h.charge(h.s.spec.Cycles(h.s.spec.DMAIssueCycles))
	h.sync()
	h.s.stats.Commands++
	h.s.nic.Execute(cmd)
}

func memAddr(o uint64) mem.Addr     { return mem.Addr(o) }
func unitBytes(o uint64) unit.Bytes { return unit.Bytes(o) }
