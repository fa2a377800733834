package shmem

import (
	"strconv"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A work-group's hot device calls as steps. A non-blocking put through a
// queue (the producer protocol: reserve, fill, release, post, release,
// the call's barrier) is a dozen waits and a wait_until three to five;
// as coroutine code each wait is two switches. The work-group's coroutine
// lends its process to a state machine for the call (sim.Proc.RunSteps),
// which does what the blocking code does, one wait per step: the same
// events at the same times in the same order. Blocking calls (quiet,
// fetching atomics, blocking puts) stay coroutine code.

// stepProducer is a producer with step forms of its operations. ph is the
// caller's phase word for the operation, 0 at its start; an operation
// that reports true has reset it to 0, and its last wait may still be
// pending (as for the gpu.WG Try forms): the caller moves on after it.
type stepProducer interface {
	tryStore(wg *gpu.WG, a mem.Addr, v uint64, ph *uint8) bool
	tryFill(wg *gpu.WG, slot mem.Addr, w *[7]uint64, ph *uint8) bool
	tryRelease(wg *gpu.WG, ph *uint8) bool
	tryAcquire(wg *gpu.WG, ph *uint8) bool
	tryLoad(wg *gpu.WG, a mem.Addr, ph *uint8) (uint64, bool)
}

func (p gpuProducer) tryStore(wg *gpu.WG, a mem.Addr, v uint64, _ *uint8) bool {
	return wg.TryStoreTracked(a, v, p.locked)
}

func (p gpuProducer) tryFill(wg *gpu.WG, slot mem.Addr, w *[7]uint64, ph *uint8) bool {
	for i := 1 + int(*ph); i < len(w); i++ {
		if !wg.TryStoreTracked(slot+mem.Addr(8*i), w[i], p.locked) {
			return false
		}
		*ph++
	}
	*ph = 0
	return true
}

func (p gpuProducer) tryRelease(wg *gpu.WG, _ *uint8) bool { return wg.TryRelease(p.scope) }
func (p gpuProducer) tryAcquire(wg *gpu.WG, _ *uint8) bool { return wg.TryAcquire(p.scope) }

func (p gpuProducer) tryLoad(wg *gpu.WG, a mem.Addr, _ *uint8) (uint64, bool) {
	return wg.TryLoad64(a)
}

// tryWrite is write in steps: the posted write, then its issue time.
func (p *hostqProducer) tryWrite(wg *gpu.WG, a mem.Addr, b []byte, ph *uint8) bool {
	if *ph == 0 {
		*ph = 1
		p.write(wg, a, b)
		if wg.Waited() {
			return false
		}
	}
	*ph = 0
	return true
}

func (p *hostqProducer) tryStore(wg *gpu.WG, a mem.Addr, v uint64, ph *uint8) bool {
	var b [8]byte
	putLE(b[:], v)
	return p.tryWrite(wg, a, b[:], ph)
}

func (p *hostqProducer) tryFill(wg *gpu.WG, slot mem.Addr, w *[7]uint64, ph *uint8) bool {
	var b [48]byte
	for i := 1; i < len(w); i++ {
		putLE(b[8*(i-1):], w[i])
	}
	return p.tryWrite(wg, slot+8, b[:], ph)
}

func (p *hostqProducer) tryRelease(wg *gpu.WG, ph *uint8) bool {
	switch *ph {
	case 0:
		if !wg.TryRelease(gpu.System) {
			return false
		}
		*ph = 1
		if wg.Waited() { // TryRelease's write-back may still be in progress
			return false
		}
		fallthrough
	case 1:
		*ph = 2
		wg.SleepUntil(p.visible)
		if wg.Waited() {
			return false
		}
	}
	*ph = 0
	return true
}

func (p *hostqProducer) tryAcquire(wg *gpu.WG, _ *uint8) bool { return wg.TryAcquire(gpu.System) }

func (p *hostqProducer) tryLoad(wg *gpu.WG, a mem.Addr, ph *uint8) (uint64, bool) {
	if *ph == 0 {
		*ph = 1
		_, done := wg.HostLoad(p.link, wg.Now(), 8)
		wg.SleepUntil(done)
		if wg.Waited() {
			return 0, false
		}
	}
	*ph = 0
	return p.m.Load64(a), true
}

func (p splitProducer) tryStore(wg *gpu.WG, a mem.Addr, v uint64, ph *uint8) bool {
	if p.inGPU(a) {
		return p.dev.tryStore(wg, a, v, ph)
	}
	return p.host.tryStore(wg, a, v, ph)
}

func (p splitProducer) tryFill(wg *gpu.WG, slot mem.Addr, w *[7]uint64, ph *uint8) bool {
	return p.host.tryFill(wg, slot, w, ph)
}

func (p splitProducer) tryRelease(wg *gpu.WG, ph *uint8) bool { return p.host.tryRelease(wg, ph) }
func (p splitProducer) tryAcquire(wg *gpu.WG, ph *uint8) bool { return p.dev.tryAcquire(wg, ph) }

func (p splitProducer) tryLoad(wg *gpu.WG, a mem.Addr, ph *uint8) (uint64, bool) {
	if p.inGPU(a) {
		return p.dev.tryLoad(wg, a, ph)
	}
	return p.host.tryLoad(wg, a, ph)
}

func putLE(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// putPC is where a stepped non-blocking submit stands.
type putPC uint8

const (
	putScalar   putPC = iota // the leader's queue-management instructions
	putFull                  // 1: does the ring look full?
	putReadIdx               // 1b: refresh the read index
	putRingWait              // wait for the read index to move
	putRingAcq               // acquire after it moved
	putSlot                  // is the slot free (not POSTED from the last lap)?
	putSlotLoad              // load the slot's status
	putSlotWait              // wait for the slot to complete
	putSlotAcq               // acquire after it completed
	putStatus                // reset a GPU-memory status word to POSTED
	putFill                  // 2: fill words 1..6
	putRelease1              // release at the publish scope
	putPost                  // 3: post word 0
	putRelease2              // release
	putPosted                // 4: the entry is posted
	putBarrier               // the call's work-group barrier
	putDone
)

// submitSteps is qchan.Submit of a non-blocking request followed by the
// call's work-group barrier (Ctx.submit), as steps.
type submitSteps struct {
	c     *qchan
	p     stepProducer
	r     *Request
	pc    putPC
	ph    uint8
	lr    uint64
	words [7]uint64
}

// Step implements sim.Stepper.
func (st *submitSteps) Step(sp *sim.Proc) bool {
	c := st.c
	q, wg := c.q, c.wg
	for !sp.Waited() {
		switch st.pc {
		case putScalar:
			wg.Scalar(c.b.spec.ProducerInstr)
			st.pc = putFull
		case putFull:
			st.pc = putSlot
			if q.w-q.lr >= q.q {
				st.pc = putReadIdx
			}
		case putReadIdx:
			v, ok := st.p.tryLoad(wg, q.readIdx, &st.ph)
			if !ok {
				continue
			}
			q.lr = v
			st.pc = putSlot
			if q.w-q.lr >= q.q {
				c.b.dev.stats.RingFull++
				st.lr = q.lr
				st.pc = putRingWait
			}
		case putRingWait:
			if c.b.prod.peek(q.readIdx) == st.lr {
				wg.Wait(wg.Mem().Watch(q.readIdx), "a free slot (ring full)")
				continue
			}
			st.pc = putRingAcq
		case putRingAcq:
			if st.p.tryAcquire(wg, &st.ph) {
				st.pc = putFull
			}
		case putSlot:
			st.pc = putSlotLoad
			if q.w < q.q || q.done[q.w%q.q] {
				q.claimFirst(wg.Mem())
				st.pc = putStatus
			}
		case putSlotLoad:
			v, ok := st.p.tryLoad(wg, q.stat(q.w), &st.ph)
			if !ok {
				continue
			}
			st.pc = putSlotWait
			if uint32(v) != statusPosted {
				q.done[q.w%q.q] = true
				st.pc = putStatus
			}
		case putSlotWait:
			if a := q.stat(q.w); posted(c.b.prod.peek(a)) {
				wg.Wait(wg.Mem().Watch(a), "a slot still POSTED from the previous lap")
				continue
			}
			st.pc = putSlotAcq
		case putSlotAcq:
			if st.p.tryAcquire(wg, &st.ph) {
				st.pc = putFull
			}
		case putStatus:
			st.words = encode(st.r, q.idx, q.w)
			if q.status != 0 && !st.p.tryStore(wg, q.stat(q.w), statusPosted, &st.ph) {
				continue
			}
			st.pc = putFill
		case putFill:
			if st.p.tryFill(wg, q.slot(q.w), &st.words, &st.ph) {
				st.pc = putRelease1
			}
		case putRelease1:
			if st.p.tryRelease(wg, &st.ph) {
				st.pc = putPost
			}
		case putPost:
			if st.p.tryStore(wg, q.slot(q.w), st.words[0], &st.ph) {
				st.pc = putRelease2
			}
		case putRelease2:
			if st.p.tryRelease(wg, &st.ph) {
				st.pc = putPosted // after the release's last wait, if any
			}
		case putPosted:
			q.done[q.w%q.q] = false
			if q.owner != nil {
				q.owner.nudge()
			}
			q.w++ // 4
			st.pc = putBarrier
		case putBarrier:
			wg.Barrier()
			st.pc = putDone
		case putDone:
			return true
		}
	}
	return false
}

// waitSteps is Ctx.WaitUntil's polling and its barrier as steps.
type waitSteps struct {
	c      *Ctx
	addr   mem.Addr
	cmp    Cmp // the wait ends when the word cmp v holds (ok)
	width  int
	v      uint64
	pc     uint8 // 0 acquire and load, 2 wait for a change, 3 barrier, 4 done
	got    uint64
	reason string
}

// ok reports whether the word's value x ends the wait (a method, not a
// closure made per call: a work-group waits once per ring step).
func (st *waitSteps) ok(x uint64) bool {
	return st.cmp.holds(x&mask(st.width), st.v&mask(st.width), st.width)
}

// Holds and What make the wait a gpu.Poller of its word.
func (st *waitSteps) Holds(x uint64) bool { return st.ok(x) }

// What implements gpu.Poller.
func (st *waitSteps) What() string {
	if st.reason == "" {
		// As fmt.Sprintf("wait_until %#x %v", addr, v) writes it, in one
		// allocation instead of three (a work-group waits per ring step).
		b := make([]byte, 0, 48)
		b = append(b, "wait_until 0x"...)
		b = strconv.AppendUint(b, uint64(st.addr), 16)
		b = append(b, ' ')
		b = strconv.AppendUint(b, st.v, 10)
		st.reason = string(b)
	}
	return st.reason
}

// Step implements sim.Stepper.
func (st *waitSteps) Step(sp *sim.Proc) bool {
	wg := st.c.wg
	for !sp.Waited() {
		switch st.pc {
		case 0, 1: // acquire, load (one call: gpu.WG.TryAcquireLoad64Until)
			got, ok := wg.TryAcquireLoad64Until(st.addr, st)
			if !ok {
				continue
			}
			st.got = got
			st.pc = 2
			if st.ok(got) {
				st.pc = 3
			}
		case 2:
			// Every poll until the word changes in memory (where the NIC
			// writes it) would read the same value: sleep until then. The
			// watch is asked for again after each wake-up (WatchOnce): a
			// work-group waits on another word at each ring step.
			m := wg.Mem()
			if !st.ok(m.Load64(st.addr)) {
				wg.WaitFor(m.WatchOnce(st.addr), st) // st.What() only if read
				continue
			}
			st.pc = 0
		case 3:
			wg.Barrier()
			st.pc = 4
		default:
			return true
		}
	}
	return false
}

// stepQueue returns the work-group's queue channel when its calls can run
// as steps: a queue backend's channel (not through the peer path) whose
// producer has step forms.
func (c *Ctx) stepQueue() (*qchan, stepProducer) {
	t, ok := c.ch.(*timedChannel)
	if !ok {
		return nil, nil
	}
	q, ok := t.ch.(*qchan)
	if !ok {
		return nil, nil
	}
	p, ok := q.b.prod.(stepProducer)
	if !ok {
		return nil, nil
	}
	return q, p
}
