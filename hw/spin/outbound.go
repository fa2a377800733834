package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Outbound is a message sent by outbound sPIN (the SC'19 paper,
// PtlProcessPut): the NIC creates the message's packets without fetching
// data; for each packet a HER runs the context's payload handler, which
// finds the host regions of that packet's share of the packed stream and
// hands them to the NIC (HandlerCtx.StreamRegion); the NIC appends them to
// one streaming put in packet order, so handlers may finish in any order.
type Outbound struct {
	s       *NIC
	sp      *nic.SPut
	md      *nic.MD
	regions [][]region // per packet, once its handler finished
	done    []bool
	next    int // next packet whose regions go to the stream
	failed  bool
	// Done is notified when the last region has been streamed (eom).
	Done    sim.Signal
	Ended   bool
	streams int
}

type region struct{ off, n uint64 }

// ProcessPut sends a message of length bytes to cmd's target with the data
// the payload handler of ctx selects from cmd.MD (its regions are offsets
// in the MD). The handlers run on this NIC's HPUs, one HER per packet,
// under the context's policy; no packet data is buffered in NIC memory.
// cmd.Length and cmd.LocalOffset are ignored.
func (s *NIC) ProcessPut(ctx *Context, cmd nic.Command, length uint64) *Outbound {
	if ctx.payload == nil {
		panic(fmt.Sprintf("%s: ProcessPut with a context without a payload handler", s.name))
	}
	k := uint64(s.nic.MaxPayload())
	npk := int(max(1, (length+k-1)/k))
	o := &Outbound{s: s, md: cmd.MD, regions: make([][]region, npk), done: make([]bool, npk)}
	cmd.Length, cmd.LocalOffset = 0, 0
	o.sp = s.nic.SPutStart(cmd)
	ms := &msgState{ctx: ctx, payloadLeft: npk, expected: npk, headerDone: true, out: o}
	if ctx.policy.BlockedRR {
		ms.vhpus = make([]*unitQ, ctx.policy.VHPUs)
	}
	for i := range npk {
		off := uint64(i) * k
		p := &packet{msg: ms, pk: nic.CtxPacket{Index: i, Offset: off, Len: min(k, length-off), Last: i == npk-1}, refs: 1}
		s.sched.ready(&her{kind: Payload, p: p, msg: ms})
	}
	s.sched.dispatch()
	return o
}

// StreamRegion hands n bytes at offset off of the outbound message's MD to
// the NIC as the next region of this packet's share (a streaming-put
// command; DMAIssueCycles). Only outbound payload handlers may call it.
func (h *HandlerCtx) StreamRegion(off, n uint64) {
	o := h.ms.out
	if o == nil {
		panic(fmt.Sprintf("%s: StreamRegion from a handler of an inbound message", h.h.track))
	}
	h.charge(h.s.spec.Cycles(h.s.spec.DMAIssueCycles))
	i := h.Packet.Index
	o.regions[i] = append(o.regions[i], region{off, n})
}

// packetDone runs when packet i's handler has finished: its regions, and
// those of every following finished packet, join the stream in order.
func (o *Outbound) packetDone(i int) {
	o.done[i] = true
	for o.next < len(o.done) && o.done[o.next] {
		for _, r := range o.regions[o.next] {
			o.sp.Stream(o.md, r.off, r.n, false)
			o.streams++
		}
		o.regions[o.next] = nil
		o.next++
	}
}

// finish ends the stream (eom) once every handler has run.
func (o *Outbound) finish(failed bool) {
	o.failed = failed
	o.sp.Stream(o.md, 0, 0, true)
	o.Ended = true
	o.Done.Notify()
}

// Failed reports whether a handler returned FAIL (the message still ends,
// with what was streamed).
func (o *Outbound) Failed() bool { return o.failed }

// Streams is the number of regions streamed.
func (o *Outbound) Streams() int { return o.streams }
