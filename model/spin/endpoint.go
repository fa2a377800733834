package spin

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Match bits of the two messages of the ready-to-receive protocol.
const (
	rtrBits  = 0x5254520000000000 // "RTR"
	dataBits = 0x4444540000000000 // "DDT"
)

// Endpoint is one node's datatype-receive machinery under one method
// (the SC'19 paper): the MPI-side receive that posts an ME (with a sPIN
// context when the method runs handlers), the ready-to-receive handshake,
// and the host unpack of the baseline. Every node allocates its PTs in the
// same order, so a PT index names the same PT everywhere.
type Endpoint struct {
	nic    *nic.NIC
	sp     *hwspin.NIC // nil unless the method runs on the NIC
	method Method
	env    Env
	dataEQ *nic.EQ
	rtrEQ  *nic.EQ
	dataPT int
	rtrPT  int
	res    *residency // NIC-resident structures (methods with handlers)
	ovSize unit.Bytes // overflow buffer size (EnableUnexpected)
	ovMin  unit.Bytes // largest unexpected message an overflow buffer must still take
	// TraceDMA records the DMA write FIFO occupancy over time.
	TraceDMA bool
	// The node's host (Host): the baseline's core, the DRAM server that
	// counts traffic, and the DRAM bytes the NIC's writes cost so far.
	host     cpu.Spec
	dram     *mem.Server
	dmaBytes uint64
}

// NewEndpoint sets up node n for method: two PTs (data and RTR) with their
// EQs and, for the NIC methods, the sPIN side with spec sp.
func NewEndpoint(n *nic.NIC, method Method, sp hwspin.Spec, cs Costs, link LinkView) *Endpoint {
	e := &Endpoint{nic: n, method: method, env: Env{Spin: sp, Costs: cs, K: int(n.MaxPayload()), TPkt: link.PacketTime}}
	e.dataEQ = n.NewEQ(0, 0)
	e.rtrEQ = n.NewEQ(0, 0)
	e.dataPT = n.PTAlloc(e.dataEQ, false)
	e.rtrPT = n.PTAlloc(e.rtrEQ, false)
	if method != HostUnpack {
		e.sp = hwspin.New(n, sp)
		e.res = &residency{sp: e.sp}
	}
	return e
}

// LinkView is what the Δr model needs of the network: the time between
// full packets at line rate.
type LinkView struct {
	PacketTime sim.Duration
}

// Method returns the endpoint's method.
func (e *Endpoint) Method() Method { return e.method }

// Env returns the plan environment of the endpoint.
func (e *Endpoint) Env() Env { return e.env }

// Residency returns the counters of the NIC-resident datatype structures
// (zero for host unpack and iovec).
func (e *Endpoint) Residency() ResidencyStats {
	if e.res == nil {
		return ResidencyStats{}
	}
	return e.res.Stats()
}

// Spin returns the sPIN side (nil for host unpack).
func (e *Endpoint) Spin() *hwspin.NIC { return e.sp }

// RecvResult is what one receive measured.
type RecvResult struct {
	Start    sim.Time     // RTR issued
	Arrived  sim.Time     // PUT event seen by the host
	End      sim.Time     // receive complete (after the host unpack for the baseline)
	Post     sim.Duration // structure copy to the NIC over PCIe, before the RTR
	Unpack   sim.Duration // host unpack (baseline)
	Traffic  Traffic      // memory traffic, counted by the memory system (with Endpoint.Host)
	Fail     nic.FailType
	Stats    hwspin.Stats
	Trace    []hwspin.OccSample
	Break    Breakdown
	Fetches  int  // iovec entry fetches
	Fallback bool // no room in NIC memory: the host unpacked (the SC'19 paper step 2 (a))
	Resident bool // the structures were already in NIC memory: nothing copied
	Evicted  int  // resident structures evicted to make room for this receive
	// Unexpected: the message arrived before the receive was posted; the
	// host unpacked it from an overflow buffer (the SC'19 paper).
	Unexpected bool
}

// Time is the receive's duration: RTR send to the last byte placed.
func (r RecvResult) Time() sim.Duration { return r.End - r.Start }

// Plan builds the method's plan for count elements of the committed type.
func (e *Endpoint) Plan(pl func(Method, Env) (*Plan, error)) (*Plan, error) {
	return pl(e.method, e.env)
}

// Recv receives the message of plan from node src into the buffer whose
// span starts at buf (the datatype origin is buf − plan.Lo): it makes the
// plan's structures resident in NIC memory — reused from an earlier
// receive, or allocated (evicting idle ones under ddt.nic_mem_policy =
// evict) and copied over PCIe as host time —, posts the ME, sends the RTR
// and waits for the data, unpacking on the host for the baseline or when
// no NIC memory could be found. Structures that can never fit the NIC
// memory fail before anything is sent.
func (e *Endpoint) Recv(p *sim.Proc, plan *Plan, buf mem.Addr, src int) (RecvResult, error) {
	return e.recv(p, plan, buf, src, true)
}

// RecvPosted posts the receive of plan from src without the
// ready-to-receive handshake (the sender used SendEager). A message that
// arrived before the post is unexpected: it cannot be offloaded, because
// its datatype was unknown when it came (the SC'19 paper); Portals' append
// finds it on the unexpected list (PUT_OVERFLOW) and the host unpacks it
// from the overflow buffer (EnableUnexpected) on the host core (cold caches).
// A message that arrives after the post is processed by the method.
func (e *Endpoint) RecvPosted(p *sim.Proc, plan *Plan, buf mem.Addr, src int) (RecvResult, error) {
	return e.recv(p, plan, buf, src, false)
}

func (e *Endpoint) recv(p *sim.Proc, plan *Plan, buf mem.Addr, src int, rtr bool) (RecvResult, error) {
	var res RecvResult
	origin := buf - mem.Addr(plan.Lo)
	span := uint64(plan.Hi - plan.Lo)
	me := nic.ME{Start: buf, Length: span, MatchID: src, MatchBits: dataBits, Options: nic.MEOpPut | nic.MEUseOnce}
	method := e.method
	if plan.NoOffload && method != HostUnpack {
		method = HostUnpack
	}
	var ent *resident
	if method.Handlers() {
		var err error
		ent, res.Resident, res.Evicted, err = e.res.acquire(plan, e.env.Costs.NICPolicy)
		switch {
		case errors.Is(err, errNoRoom):
			method, res.Fallback = HostUnpack, true
		case err != nil:
			return res, fmt.Errorf("%s receive: %w", e.method, err)
		default:
			defer e.res.release(ent)
		}
	}
	var bounce mem.Addr
	var iov *hwspin.Iovec
	var bd Breakdown
	switch method {
	case HostUnpack:
		bounce = e.nic.Memory().Alloc(mem.Host, uint64(plan.Size), "ddt.bounce")
		me.Start, me.Length = bounce, uint64(plan.Size)
	case Iovec:
		list := make([]hwspin.IOVec, len(plan.Blocks))
		for i, b := range plan.Blocks {
			list[i] = hwspin.IOVec{Off: uint64(b.Off - plan.Lo), Len: uint64(b.Len)}
		}
		iov = e.sp.NewIovec(list)
		me.Ctx = iov
	default:
		st := newRecvState(plan, e.env.Costs, origin, e.env.Spin.HPUs, &bd)
		hs, pol := st.handlers(e.env.Spin.HPUs)
		ctx, err := e.sp.NewContextIn(hs, pol, ent.region)
		if err != nil {
			return res, fmt.Errorf("%s receive: %w", e.method, err)
		}
		defer ctx.Release()
		me.Ctx = ctx
	}
	if e.sp != nil {
		e.sp.TraceDMA(e.TraceDMA)
	}
	// Post: copy the structures to the NIC (host overhead, the SC'19 paper
	// step 2), unless an earlier receive left them there.
	dram0, dma0 := e.dramBytes(), e.dmaBytes
	up0, down0 := e.pcie()
	var nicMem0 uint64
	if e.sp != nil {
		nicMem0 = e.sp.Stats().NICMemBytes
	}
	t0 := p.Now()
	if moved := plan.Mem.Total(); moved > 0 && method.Handlers() && !res.Resident {
		free, _ := e.nic.Link().PostedWrite(pcie.Down, p.Now(), moved)
		p.SleepUntil(free)
	}
	res.Post = p.Now() - t0
	e.nic.MEAppend(e.dataPT, me, nic.Priority)
	res.Start = p.Now()
	if rtr {
		e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{}, Target: src, PT: e.rtrPT, MatchBits: rtrBits})
	}
	ev := e.waitPut(p, e.dataEQ)
	res.Arrived, res.Fail = p.Now(), ev.NIFail
	if e.sp == nil || ev.Type == nic.EventPutOverflow {
		// The plain put's bytes went to host memory without a handler.
		e.dmaWrite(p.Now(), ev.Start, ev.MLength)
	}
	switch {
	case ev.Type == nic.EventPutOverflow:
		// Unexpected: the bytes sit in an overflow buffer, packed.
		res.Unexpected = true
		if err := e.unpackOnHost(p, plan, origin, ev.Start, &res); err != nil {
			return res, err
		}
	case method == HostUnpack:
		if err := e.unpackOnHost(p, plan, origin, bounce, &res); err != nil {
			return res, err
		}
	}
	res.End = p.Now()
	res.Break = bd
	if e.sp != nil {
		res.Stats = e.sp.Stats()
		res.Trace = e.sp.DMATrace()
		res.Traffic.NICMem = res.Stats.NICMemBytes - nicMem0
	}
	up, down := e.pcie()
	res.Traffic.PCIeUp, res.Traffic.PCIeDown = up-up0, down-down0
	res.Traffic.DMAWrite = e.dmaBytes - dma0
	res.Traffic.DRAM = e.dramBytes() - dram0
	if iov != nil {
		res.Fetches = iov.Fetches()
	}
	return res, nil
}

// unpackOnHost unpacks the packed bytes at src into the receive buffer
// with the datatype engine and charges its execution on the host core
// (cold caches: the NIC just wrote the packed bytes to DRAM), or the
// affine model when ddt.host_model = affine or no host is connected.
func (e *Endpoint) unpackOnHost(p *sim.Proc, plan *Plan, origin, src mem.Addr, res *RecvResult) error {
	t := p.Now()
	if err := hostUnpack(e.nic.Memory(), plan, origin, src); err != nil {
		return err
	}
	if !useSim(e.env.Costs, e.host) || e.dram == nil {
		p.Sleep(sim.Duration(plan.Regions)*e.env.Costs.HostRegion + e.env.Costs.HostCopyCold.TransferTime(unit.Bytes(plan.Size)))
		res.Unpack = p.Now() - t
		return nil
	}
	w := walkUnpack(e.host, e.env.Costs, plan, origin, src, t, e.dram)
	p.SleepUntil(w.End())
	res.Unpack = p.Now() - t
	// The lines the unpack left dirty are written back later: counted as
	// traffic, not as unpack time.
	w.Flush()
	res.Traffic.Host = w.Stats()
	return nil
}

func (e *Endpoint) dramBytes() uint64 {
	if e.dram == nil {
		return 0
	}
	return e.dram.Bytes()
}

// pcie returns the bytes the NIC's link carried so far towards the host
// and towards the NIC.
func (e *Endpoint) pcie() (up, down uint64) {
	_, up = e.nic.Link().Stats(pcie.Up)
	_, down = e.nic.Link().Stats(pcie.Down)
	return up, down
}

// rtrCancel in an RTR's header data tells the sender the receive failed.
const rtrCancel = 1

// Cancel tells the sender src that the receive will not happen (its plan
// failed), so it sends nothing.
func (e *Endpoint) Cancel(p *sim.Proc, src int) {
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{}, Target: src, PT: e.rtrPT, MatchBits: rtrBits, HdrData: rtrCancel})
}

// waitPut waits for the data message's event: PUT on the posted ME, or
// PUT_OVERFLOW when the append found it on the unexpected list. Events of
// the overflow buffers are progress: a buffer the NIC unlinked because it
// filled up is replaced (MPI progress happens inside its calls, the dissertation (Portals 4)
// §6.1), and the PUT that landed a message in it is noted only by the NIC.
func (e *Endpoint) waitPut(p *sim.Proc, q *nic.EQ) nic.Event {
	for {
		ev := q.Wait(p)
		_, over := ev.UserPtr.(overflowTag)
		switch {
		case over && ev.Type == nic.EventAutoUnlink:
			e.appendOverflow()
		case over:
		case ev.Type == nic.EventPut || ev.Type == nic.EventPutOverflow:
			return ev
		}
	}
}

// overflowTag marks the overflow-list buffers' events.
type overflowTag struct{}

// EnableUnexpected gives the data PT n overflow-list buffers of size bytes
// each (MANAGE_LOCAL, unlinked when they cannot take one more message of
// up to maxMsg bytes, then replaced): a message that arrives before its
// receive is posted lands in one (the SC'19 paper, the dissertation (Portals 4)).
func (e *Endpoint) EnableUnexpected(n int, size, maxMsg unit.Bytes) {
	e.ovSize, e.ovMin = size, maxMsg
	for range n {
		e.appendOverflow()
	}
}

func (e *Endpoint) appendOverflow() {
	buf := e.nic.Memory().Alloc(mem.Host, uint64(e.ovSize), "ddt.overflow")
	e.nic.MEAppend(e.dataPT, nic.ME{Start: buf, Length: uint64(e.ovSize), MatchID: nic.AnyID, MatchBits: dataBits,
		Options: nic.MEOpPut | nic.MEManageLocal | nic.MENoTruncate, MinFree: uint64(e.ovMin), UserPtr: overflowTag{}}, nic.Overflow)
}

// SendEager puts m packed bytes from buf to dst now, without waiting for
// a ready-to-receive message: if dst has not posted the receive yet, the
// message is unexpected there.
func (e *Endpoint) SendEager(p *sim.Proc, buf mem.Addr, m int, dst int) {
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: buf, Length: uint64(m)}, Length: uint64(m),
		Target: dst, PT: e.dataPT, MatchBits: dataBits})
}

// hostUnpack unpacks the bounce buffer into the receive buffer with the
// datatype engine (the functional half of the baseline; its time is the
// cost model's).
func hostUnpack(m *mem.Memory, plan *Plan, origin, bounce mem.Addr) error {
	src := m.Bytes(bounce, plan.Size)
	dst := m.Bytes(origin+mem.Addr(plan.Lo), plan.Hi-plan.Lo)
	if src == nil || dst == nil {
		return nil // payload-free run: timing only
	}
	_, err := plan.C.Unpack(dst, -plan.Lo, src, plan.Count)
	return err
}

// Send waits for the RTR from dst, then puts m packed bytes from buf to it
// (the sender side of the benchmark protocol, the SC'19 paper). A cancelled
// receive sends nothing.
func (e *Endpoint) Send(p *sim.Proc, buf mem.Addr, m int, dst int) {
	e.nic.MEAppend(e.rtrPT, nic.ME{MatchID: dst, MatchBits: rtrBits, Options: nic.MEOpPut | nic.MEUseOnce}, nic.Priority)
	if ev := e.waitPut(p, e.rtrEQ); ev.HdrData == rtrCancel {
		return
	}
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: buf, Length: uint64(m)}, Length: uint64(m),
		Target: dst, PT: e.dataPT, MatchBits: dataBits})
}
