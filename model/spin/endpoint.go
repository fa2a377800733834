package spin

import (
	"fmt"

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
// (datatypes.md §6): the MPI-side receive that posts an ME (with a sPIN
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
	// TraceDMA records the DMA write FIFO occupancy over time.
	TraceDMA bool
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

// Spin returns the sPIN side (nil for host unpack).
func (e *Endpoint) Spin() *hwspin.NIC { return e.sp }

// RecvResult is what one receive measured.
type RecvResult struct {
	Start    sim.Time     // RTR issued
	Arrived  sim.Time     // PUT event seen by the host
	End      sim.Time     // receive complete (after the host unpack for the baseline)
	Post     sim.Duration // structure copy to the NIC over PCIe, before the RTR
	Unpack   sim.Duration // host unpack (baseline)
	Fail     nic.FailType
	Stats    hwspin.Stats
	Trace    []hwspin.OccSample
	Break    Breakdown
	Fetches  int // iovec entry fetches
	Fallback bool
}

// Time is the receive's duration: RTR send to the last byte placed.
func (r RecvResult) Time() sim.Duration { return r.End - r.Start }

// Plan builds the method's plan for count elements of the committed type.
func (e *Endpoint) Plan(pl func(Method, Env) (*Plan, error)) (*Plan, error) {
	return pl(e.method, e.env)
}

// Recv receives the message of plan from node src into the buffer whose
// span starts at buf (the datatype origin is buf − plan.Lo): it allocates
// NIC memory for the plan's structures and copies them over PCIe (host
// time), posts the ME, sends the RTR and waits for the data, unpacking on
// the host for the baseline. A plan whose structures do not fit the NIC
// memory fails before anything is sent.
func (e *Endpoint) Recv(p *sim.Proc, plan *Plan, buf mem.Addr, src int) (RecvResult, error) {
	var res RecvResult
	origin := buf - mem.Addr(plan.Lo)
	span := uint64(plan.Hi - plan.Lo)
	me := nic.ME{Start: buf, Length: span, MatchID: src, MatchBits: dataBits, Options: nic.MEOpPut | nic.MEUseOnce}
	var bounce mem.Addr
	var iov *hwspin.Iovec
	var bd Breakdown
	var ctx *hwspin.Context
	switch e.method {
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
		var err error
		if ctx, err = e.sp.NewContext(hs, pol, plan.Mem.Total()); err != nil {
			return res, fmt.Errorf("%s receive: %w: %w", e.method, ErrNICMemory, err)
		}
		defer ctx.Release()
		me.Ctx = ctx
	}
	if e.sp != nil {
		e.sp.TraceDMA(e.TraceDMA)
	}
	// Post: copy the structures to the NIC (host overhead, datatypes.md §6 step 2).
	t0 := p.Now()
	if moved := plan.Mem.Total(); moved > 0 && e.method != Iovec {
		free, _ := e.nic.Link().PostedWrite(pcie.Down, p.Now(), moved)
		p.SleepUntil(free)
	}
	res.Post = p.Now() - t0
	e.nic.MEAppend(e.dataPT, me, nic.Priority)
	res.Start = p.Now()
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{}, Target: src, PT: e.rtrPT, MatchBits: rtrBits})
	ev := e.waitPut(p, e.dataEQ)
	res.Arrived, res.Fail = p.Now(), ev.NIFail
	if e.method == HostUnpack {
		t := p.Now()
		if err := hostUnpack(e.nic.Memory(), plan, origin, bounce); err != nil {
			return res, err
		}
		p.Sleep(sim.Duration(plan.Regions)*e.env.Costs.HostRegion + e.env.Costs.HostCopyCold.TransferTime(unit.Bytes(plan.Size)))
		res.Unpack = p.Now() - t
	}
	res.End = p.Now()
	res.Break = bd
	if e.sp != nil {
		res.Stats = e.sp.Stats()
		res.Trace = e.sp.DMATrace()
	}
	if iov != nil {
		res.Fetches = iov.Fetches()
	}
	return res, nil
}

// rtrCancel in an RTR's header data tells the sender the receive failed.
const rtrCancel = 1

// Cancel tells the sender src that the receive will not happen (its plan
// failed), so it sends nothing.
func (e *Endpoint) Cancel(p *sim.Proc, src int) {
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{}, Target: src, PT: e.rtrPT, MatchBits: rtrBits, HdrData: rtrCancel})
}

// waitPut waits for the PUT event of the data message.
func (e *Endpoint) waitPut(p *sim.Proc, q *nic.EQ) nic.Event {
	for {
		ev := q.Wait(p)
		if ev.Type == nic.EventPut {
			return ev
		}
	}
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
// (the sender side of the benchmark protocol, datatypes.md §6). A cancelled
// receive sends nothing.
func (e *Endpoint) Send(p *sim.Proc, buf mem.Addr, m int, dst int) {
	e.nic.MEAppend(e.rtrPT, nic.ME{MatchID: dst, MatchBits: rtrBits, Options: nic.MEOpPut | nic.MEUseOnce}, nic.Priority)
	if ev := e.waitPut(p, e.rtrEQ); ev.HdrData == rtrCancel {
		return
	}
	e.nic.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: buf, Length: uint64(m)}, Length: uint64(m),
		Target: dst, PT: e.dataPT, MatchBits: dataBits})
}
