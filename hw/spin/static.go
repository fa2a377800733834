package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// HandlerRun is one handler execution as a static run records it.
type HandlerRun struct {
	HPU, Index int
	Kind       Kind
	Start      sim.Time
	Elapsed    sim.Duration // invocation to return (staging before it excluded)
	Work       sim.Duration // cycles the handler charged (HandlerCtx.Work)
}

// IPC is the run's instructions per cycle under the cost model: charged
// cycles over elapsed cycles.
func (r HandlerRun) IPC() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Work) / float64(r.Elapsed)
}

// Static is a static run (the SC'19 paper): packets preloaded
// in NIC memory and statically assigned to HPUs, each HPU running its
// list in order with no scheduler and no arrivals. Run the engine, then
// read the results.
type Static struct {
	s      *NIC
	start  sim.Time
	hpus   []*hpu
	Runs   []HandlerRun // every handler, in completion order
	Done   sim.Signal   // notified when every handler has run and every DMA is on PCIe
	Ended  bool
	posted sim.Time
}

// RunStatic preloads the packets of lists (lists[i] for HPU i, run in
// that order) and starts ctx's payload handler on each, now. The packets
// sit back to back in NIC memory, each at its stream offset (on pulp: in
// L2, interleaved over the banks), outside the packet buffer's
// accounting: they are not arriving, they are already there. Every HPU
// with a list must be idle.
func (s *NIC) RunStatic(ctx *Context, lists [][]nic.CtxPacket) (*Static, error) {
	if ctx.payload == nil {
		return nil, fmt.Errorf("%s: static run with a context without a payload handler", s.name)
	}
	if len(lists) > len(s.hpus) {
		return nil, fmt.Errorf("%s: static run over %d HPUs, spin.hpus = %d", s.name, len(lists), len(s.hpus))
	}
	st := &Static{s: s, start: s.e.Now()}
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total == 0 {
		return nil, fmt.Errorf("%s: static run without packets", s.name)
	}
	ms := &msgState{ctx: ctx, payloadLeft: total, expected: total, headerDone: true, static: st}
	for i, l := range lists {
		if len(l) == 0 {
			continue
		}
		h := s.hpus[i]
		if h.unit != nil || !s.sched.takeIdle(h) {
			return nil, fmt.Errorf("%s: static run on HPU %d, which is busy", s.name, i)
		}
		u := &unitQ{vhpu: -1, running: true}
		for _, pk := range l {
			p := &packet{msg: ms, pk: pk, refs: 1, size: unit.Bytes(pk.Len), addr: pk.Offset, preloaded: true}
			u.hers = append(u.hers, &her{kind: Payload, p: p, msg: ms})
		}
		h.record = func(r HandlerRun) { st.Runs = append(st.Runs, r) }
		h.unit = u
		h.sig.Notify()
		st.hpus = append(st.hpus, h)
	}
	return st, nil
}

// finish runs when the last handler has: the run ends once every DMA
// issued is on PCIe.
func (st *Static) finish() {
	st.s.dma.afterPosted(func() {
		st.posted = st.s.e.Now()
		for _, h := range st.hpus {
			h.record = nil
		}
		st.Ended = true
		st.Done.Notify()
	})
}

// HPUTimes returns each participating HPU's total time: from the start to
// the end of its last handler (the slowest gives the throughput of
// the SC'19 paper).
func (st *Static) HPUTimes() []sim.Duration {
	out := make([]sim.Duration, len(st.hpus))
	for i, h := range st.hpus {
		out[i] = h.last - st.start
	}
	return out
}

// Start is when the run began.
func (st *Static) Start() sim.Time { return st.start }

// LastRead is when the last DMA request issued so far finished reading
// its source (pulp: passed the output port into the PCIe FIFO).
func (st *Static) LastRead() sim.Time { return st.s.dma.lastRd }

// LastVisible is when the last DMA write issued by the NIC so far became
// visible in host memory.
func (st *Static) LastVisible() sim.Time { return st.s.dma.lastLand }
