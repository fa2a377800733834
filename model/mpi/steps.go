package mpi

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// MPI calls as steps. A nonblocking collective's progress loop (model/nbc)
// makes a score of short waits per round on the rank's thread: instructions,
// polls, the wait on the event queue, the poll that misses, the doorbell.
// Run as coroutine code each is two coroutine switches; run as a state
// machine in the thread's process (sim.Proc.RunSteps) each is a call. The
// Begin* forms start a call and Try advances it (cpu.Thread's Begin/Try
// operations underneath); they do what Isend, Irecv, Block and
// ScheduleStep do, in the same order, so they schedule the same events at
// the same times. The blocking forms stay as they are: the reference the
// step forms are tested against (TestStepCallsMatchBlocking), and the API
// of callers that are coroutine code.

// callKind is the MPI call Try advances.
type callKind uint8

const (
	callNone     callKind = iota
	callIsend             // Isend
	callIrecv             // Irecv
	callProgress          // Block: progressOne in an "MPI progress" span
	callStep              // ScheduleStep
)

// Stages of a call.
const (
	stBegin   = iota // nothing done yet
	stInstr1         // Isend, Irecv: the matching instructions
	stInstr2         // Isend, Irecv: the Portals post
	stBell           // Isend: the doorbell's posted write
	stPoll           // progress: the poll's instructions
	stWaitEQ         // progress: the wait for an event
	stMiss           // progress: the poll that sees the event misses
	stHandle         // progress: the event's dispatch instructions
	stRndv           // progress: a rendezvous Get's Portals post
	stGetBell        // progress: the Get's doorbell
	stCopy           // progress: copying an unexpected eager message
	stSHMIn          // Isend: the copy into the shared-memory cell (shm.go)
	stSHMCopy        // progress: the single copy of a shared-memory rendezvous
	stEnd            // the call's span, then done
)

// call is where the step-form call in progress stands.
type call struct {
	kind  callKind
	stage uint8
	start sim.Time
	req   *Request
	cmd   nic.Command
	me    nic.ME
	ev    nic.Event
	tag   int
	src   int
	shm   *ipcSend // stSHMCopy: the send copied from
}

// Proc returns the process of the rank's thread, which runs the steps.
func (c *Comm) Proc() *sim.Proc { return c.t.Proc }

// BeginIsend starts Isend as steps; the request is complete only once a
// later Block completes it, as for Isend. Errors are Isend's, before any
// time passes.
func (c *Comm) BeginIsend(buf mem.Addr, n uint64, dst, tag int) (*Request, error) {
	if err := c.checkSend(dst, tag); err != nil {
		return nil, err
	}
	r := &Request{send: true, buf: buf, length: n}
	c.call = call{kind: callIsend, req: r, tag: tag, src: dst}
	return r, nil
}

// BeginIrecv starts Irecv as steps.
func (c *Comm) BeginIrecv(buf mem.Addr, n uint64, src, tag int) (*Request, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return nil, err
	}
	r := &Request{buf: buf, length: n}
	c.call = call{kind: callIrecv, req: r, tag: tag, src: src}
	return r, nil
}

// BeginBlock starts Block as steps.
func (c *Comm) BeginBlock() { c.call = call{kind: callProgress} }

// BeginScheduleStep starts ScheduleStep as steps.
func (c *Comm) BeginScheduleStep() { c.call = call{kind: callStep} }

// Try advances the call begun by a Begin* form and reports true once it is
// over, false when the thread waited (or Try must be called again at
// once), like a sim.Stepper's Step.
func (c *Comm) Try() bool {
	var done bool
	switch c.call.kind {
	case callNone:
		return true
	case callIsend:
		done = c.tryPost(true)
	case callIrecv:
		done = c.tryPost(false)
	case callProgress:
		done = c.tryProgress()
	case callStep:
		if c.call.stage == stBegin {
			c.call.stage = stEnd
			c.t.BeginInstr(c.sw.NBCStep)
		}
		done = c.t.Try()
	}
	if done {
		c.call = call{}
	}
	return done
}

// tryPost is Isend (send) or Irecv from its first instruction on: the
// matching instructions, the call's Portals object (the send's put, the
// receive's match entry), the post's instructions, then the doorbell
// (send) or the append (receive), and the call's span.
func (c *Comm) tryPost(send bool) bool {
	k, t, r := &c.call, c.t, c.call.req
	switch k.stage {
	case stBegin:
		k.start = t.Now()
		t.BeginInstr(c.sw.MPIMatch)
		k.stage = stInstr1
		fallthrough
	case stInstr1:
		if !t.Try() {
			return false
		}
		if send {
			k.cmd = c.sendCommand(r, k.src, k.tag)
		} else {
			k.me = c.recvME(r, k.src, k.tag)
		}
		t.BeginInstr(c.sw.PortalsPost)
		k.stage = stInstr2
		fallthrough
	case stInstr2:
		if !t.Try() {
			return false
		}
		k.stage = stBell
		if !send {
			r.entry = c.nic.MEAppend(c.ptMPI, k.me, nic.Priority)
		} else if c.shmReaches(k.src) {
			k.stage = stSHMIn
			if k.cmd.Length > 0 {
				t.BeginComputeOn(1, c.shmCopyIn(r, k.cmd.Length)...)
			}
			return c.tryPost(send)
		} else if c.nic.Doorbell(t.Proc, k.cmd); t.Waited() {
			return false
		}
		fallthrough
	case stSHMIn, stBell:
		if k.stage == stSHMIn {
			if !t.Try() {
				return false
			}
			c.shmDeliver(r, k.cmd, k.src)
			k.stage = stBell
		}
		if send {
			t.Span("MPI_Isend", k.start)
		} else {
			t.Span("MPI_Irecv", k.start)
		}
	}
	return true
}

// tryProgress is Block: progressOne, its polls and waits and the handling
// of the event, in an "MPI progress" span.
func (c *Comm) tryProgress() bool {
	k, t := &c.call, c.t
	for {
		switch k.stage {
		case stBegin:
			k.start = t.Now()
			if ev, ok := c.eq.Get(); ok {
				c.beginHandle(ev)
			} else if c.takeFinished() {
				k.stage = stEnd
			} else {
				c.beginPoll()
			}
		case stPoll:
			if !t.Try() {
				return false
			}
			switch {
			case c.eq.Len() > 0 || c.finished > 0: // the event landed (or a copy completed) while the poll ran (progressOne)
				c.beginMiss()
				continue
			case c.sw.MPIWait == cost.WaitBlock:
				t.BeginBlock(c.eq.Signal(), c.eqWaitLabel())
			default:
				t.BeginWait(c.eq.Signal(), c.eqWaitLabel())
			}
			k.stage = stWaitEQ
		case stWaitEQ:
			if !t.Try() {
				return false
			}
			c.beginMiss()
		case stMiss:
			if !t.Try() {
				return false
			}
			if ev, ok := c.eq.Get(); ok {
				c.beginHandle(ev)
			} else if c.takeFinished() {
				k.stage = stEnd
			} else {
				c.beginPoll()
			}
		case stHandle:
			if !t.Try() {
				return false
			}
			c.dispatch()
		case stRndv:
			if !t.Try() {
				return false
			}
			k.stage = stGetBell
			if c.copyIPC(k.req, k.ev) {
				continue
			}
			if sh := c.shmSource(k.ev); sh != nil {
				c.shmCopy(k.req, sh)
				t.BeginComputeOn(1, c.shmCopyAccess(k.req)...)
				k.shm, k.stage = sh, stSHMCopy
				continue
			}
			c.nic.Doorbell(t.Proc, c.getCommand(k.req, k.ev))
			if t.Waited() {
				return false
			}
		case stGetBell:
			k.stage = stEnd
		case stCopy:
			if !t.Try() {
				return false
			}
			k.req.done = true
			k.stage = stEnd
		case stSHMCopy:
			if !t.Try() {
				return false
			}
			c.shmDone(k.req, k.shm)
			k.stage = stEnd
		case stEnd:
			t.Span("MPI progress", k.start)
			return true
		}
	}
}

func (c *Comm) beginPoll() {
	c.stats.Polls++
	c.t.BeginInstr(c.sw.MPIPoll)
	c.call.stage = stPoll
}

func (c *Comm) beginMiss() {
	c.t.BeginSleep(c.t.CPU().Spec().MissLatency())
	c.call.stage = stMiss
}

func (c *Comm) beginHandle(ev nic.Event) {
	c.stats.Events++
	c.t.BeginInstr(c.sw.EventDispatch)
	c.call.ev = ev
	c.call.stage = stHandle
}

// dispatch is handle after its instructions: it completes the request the
// event is about, or starts what completes it (matched).
func (c *Comm) dispatch() {
	k := &c.call
	ev := k.ev
	k.stage = stEnd
	r, _ := ev.UserPtr.(*Request)
	switch ev.Type {
	case nic.EventSend, nic.EventGet:
		if r != nil && r.send {
			r.done = true
		}
	case nic.EventAck:
		if r != nil && r.send {
			c.acked(r, ev)
		}
	case nic.EventReply:
		if r != nil {
			r.done = true
		}
	case nic.EventPut, nic.EventPutOverflow:
		if r != nil {
			c.beginMatched(r, ev, ev.Type == nic.EventPutOverflow)
		}
	case nic.EventAutoUnlink:
		if _, ok := ev.UserPtr.(overflowTag); ok {
			c.overflow--
			c.appendOverflow()
		}
	}
}

// beginMatched is matched up to its first wait.
func (c *Comm) beginMatched(r *Request, ev nic.Event, unexpected bool) {
	k := &c.call
	if c.matchHeader(r, ev, unexpected) {
		k.req = r
		c.t.BeginInstr(c.sw.PortalsPost)
		k.stage = stRndv
		return
	}
	if unexpected && ev.MLength > 0 && ev.HdrData&longFlag == 0 {
		c.copyUnexpected(r, ev)
		k.req = r
		c.t.BeginComputeOn(1, c.copyAccess(r, ev)...)
		k.stage = stCopy
		return
	}
	if ev.MLength > 0 && c.local(ev) {
		k.req = r
		c.t.BeginComputeOn(1, c.copyOutAccess(r, ev.MLength)...)
		k.stage = stCopy
		return
	}
	r.done = true
}
