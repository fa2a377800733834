package shmem

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Op is the operation of a Request (the op code of a queue entry,
// the dissertation's ComP-Net chapter).
type Op uint16

// Operations.
const (
	OpPut      Op = iota + 1 // putmem: Len bytes from local Src to symmetric Dst on PE
	OpGet                    // getmem: Len bytes from symmetric Src on PE to local Dst
	OpP                      // p: Len ≤ 8 bytes of inline Value to symmetric Dst
	OpAdd                    // atomic add of Value (Len 4 or 8), no result
	OpFetchAdd               // atomic fetch-add; old value in Result
	OpSwap                   // atomic swap; old value in Result
	OpCSwap                  // atomic compare-swap: Dst := Value if Dst == Cond; old value in Result
	OpFence                  // order earlier puts before later ones to each PE
	OpQuiet                  // complete every earlier operation of the context
)

var opNames = [...]string{"?", "put", "get", "p", "atomic_add", "atomic_fetch_add", "atomic_swap", "atomic_compare_swap", "fence", "quiet"}

// String returns the printed name of an Op.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// fetches reports whether the op returns a value.
func (o Op) fetches() bool { return o == OpFetchAdd || o == OpSwap || o == OpCSwap }

// bounced reports whether the library passes the op's data (p's inline
// value, an atomic's operand) through a bounce word.
func (o Op) bounced() bool { return o == OpP || o.atomic() }

// atomic reports whether the op is an atomic memory operation.
func (o Op) atomic() bool { return o >= OpAdd && o <= OpCSwap }

// Request is one device call as the backend sees it: what the work-group
// leader writes into a queue entry (or, for a GPU-native backend, into a
// work request).
type Request struct {
	Op       Op
	Blocking bool     // the call returns only once it completed (its data is visible)
	PE       int      // target PE (fence, quiet: ignored)
	Len      uint64   // bytes: payload (put, get, p) or element width (atomics: 4 or 8)
	Dst      mem.Addr // put, p, atomics: symmetric target; get: local destination
	Src      mem.Addr // put: local source; get: symmetric source
	Value    uint64   // p: inline data; atomics: operand or new value
	Cond     uint64   // compare-swap: the compare value
	Result   uint64   // fetching atomics: the old value, set on completion
}

// Cmp is a wait_until comparison (OpenSHMEM SHMEM_CMP_*).
type Cmp uint8

// Comparisons.
const (
	CmpEQ Cmp = iota
	CmpNE
	CmpGT
	CmpGE
	CmpLT
	CmpLE
)

// holds reports whether v cmp want, on signed values of the given width.
func (c Cmp) holds(v, want uint64, width int) bool {
	a, b := signed(v, width), signed(want, width)
	switch c {
	case CmpEQ:
		return a == b
	case CmpNE:
		return a != b
	case CmpGT:
		return a > b
	case CmpGE:
		return a >= b
	case CmpLT:
		return a < b
	}
	return a <= b
}

func signed(v uint64, width int) int64 {
	switch width {
	case 1:
		return int64(int8(v))
	case 2:
		return int64(int16(v))
	case 4:
		return int64(int32(v))
	}
	return int64(v)
}

// Errors of device calls. A call's error wraps one of them and names the
// work-group.
var (
	ErrPE        = errors.New("PE out of range")
	ErrLength    = errors.New("bad length")
	ErrAlign     = errors.New("unaligned atomic")
	ErrSymmetric = errors.New("address not in the symmetric heap")
	ErrClosed    = errors.New("context destroyed")
	ErrNoQueue   = errors.New("no queue for this work-group")
	ErrFailed    = errors.New("network operation failed")
)

// Ctx is a work-group's OpenSHMEM context (cpnet_ctx_create): the API of
// the dissertation's ComP-Net chapter. Every call is a work-group collective: the
// leader work-item does the serial part through the backend's Channel and
// the call ends with a work-group barrier. A quiet waits only for this
// context's operations.
type Ctx struct {
	wg *gpu.WG
	// a call begun as steps by the caller's state machine (BeginPutmemNBI,
	// BeginWaitUntil, TryCall): 0 none, 1 a put, 2 a wait; the wait's
	// width and, once over, its value (beside wg: every step reads them)
	stepCall  uint8
	closed    bool
	stepWidth int
	stepGot   uint64
	dev       *Device
	ch        Channel
	scratch   mem.Addr // 8 B local landing word of g
	// the calls that run as steps (qsteps.go), kept for reuse
	wait  waitSteps
	steps submitSteps
	// GIO's non-blocking put as steps (giosteps.go), its request, and the
	// error of the last stepped call (CallErr)
	gio     gioPutSteps
	gioReq  Request
	putReq  Request // a stepped put's request (BeginPutmemNBI), reused
	stepErr error
	// blockingForm: calls from coroutine code run the channel's blocking
	// Submit, never its step form (tests compare the two)
	blockingForm bool
}

// WG returns the work-group that owns the context.
func (c *Ctx) WG() *gpu.WG { return c.wg }

// Stats returns the device's call statistics so far (all work-groups of
// the PE), for measuring a stretch of calls.
func (c *Ctx) Stats() Stats { return c.dev.Stats() }

// PE returns the calling PE.
func (c *Ctx) PE() int { return c.dev.pe }

// NPEs returns the number of PEs.
func (c *Ctx) NPEs() int { return c.dev.npes }

func (c *Ctx) fail(call string, err error, format string, args ...any) error {
	return fmt.Errorf("%s: shmem %s: %w: %s", c.wg.Name(), call, err, fmt.Sprintf(format, args...))
}

func (c *Ctx) checkPE(call string, pe int) error {
	if c.closed {
		return c.fail(call, ErrClosed, "call after ctx_destroy")
	}
	if pe < 0 || pe >= c.dev.npes {
		return c.fail(call, ErrPE, "PE %d not in [0, %d)", pe, c.dev.npes)
	}
	return nil
}

func (c *Ctx) checkSym(call string, a mem.Addr, n uint64) error {
	if _, _, ok := c.dev.heap.lookup(a, n); !ok {
		return c.fail(call, ErrSymmetric, "[%#x, +%d) is not inside one symmetric allocation", uint64(a), n)
	}
	return nil
}

func (c *Ctx) checkAtomic(call string, dst mem.Addr, width, pe int) error {
	if err := c.checkPE(call, pe); err != nil {
		return err
	}
	if width != 4 && width != 8 {
		return c.fail(call, ErrLength, "atomic width %d bytes: must be 4 or 8", width)
	}
	if uint64(dst)%uint64(width) != 0 {
		return c.fail(call, ErrAlign, "address %#x is not %d-byte aligned", uint64(dst), width)
	}
	return c.checkSym(call, dst, uint64(width))
}

// submit hands r to the backend and ends the call with the work-group
// barrier.
func (c *Ctx) submit(call string, r *Request) error {
	if !r.Blocking && !c.blockingForm && c.wg.Proc.CanRunSteps() {
		if q, p := c.stepQueue(); q != nil {
			c.steps = submitSteps{c: q, p: p, r: r}
			c.wg.Proc.RunSteps(&c.steps)
			c.steps.r = nil
			c.dev.stats.Calls++ // as timedChannel counts it
			return nil
		}
		if ch := c.gioSteps(); ch != nil && ch.stepPut(r) {
			c.gio.begin(ch, r)
			c.wg.Proc.RunSteps(&c.gio)
			c.gio.r = nil
			c.dev.stats.Calls++ // as timedChannel counts it
			if err := c.gio.err; err != nil {
				return fmt.Errorf("%s: shmem %s: %w", c.wg.Name(), call, err)
			}
			return nil
		}
	}
	err := c.ch.Submit(r)
	c.wg.Barrier()
	if err != nil {
		return fmt.Errorf("%s: shmem %s: %w", c.wg.Name(), call, err)
	}
	return nil
}

func (c *Ctx) put(call string, dst, src mem.Addr, n uint64, pe int, blocking bool) error {
	if err := c.checkPut(call, dst, n, pe); err != nil {
		return err
	}
	return c.submit(call, &Request{Op: OpPut, Blocking: blocking, PE: pe, Len: n, Dst: dst, Src: src})
}

// checkPut checks a put's arguments.
func (c *Ctx) checkPut(call string, dst mem.Addr, n uint64, pe int) error {
	if err := c.checkPE(call, pe); err != nil {
		return err
	}
	if n == 0 {
		return c.fail(call, ErrLength, "0 bytes")
	}
	return c.checkSym(call, dst, n)
}

// Step forms of the calls a work-group makes in a loop (the ring
// allreduce's puts and waits), for a body that lends its process to one
// state machine for the whole loop (sim.Proc.RunSteps) instead of once
// per call: Begin* checks the arguments and starts the call, TryCall
// advances it (sim.Stepper's contract: true once the call is over, with no
// wait pending; false after it waited, or, when p.Waited() is false, to
// be called again at once). The waits, their times and their order are
// those of the blocking calls.

// StepCalls reports whether BeginPutmemNBI is available on this context:
// a queue backend's channel whose producer has step forms, or a GIO
// channel on a QP set of its own.
func (c *Ctx) StepCalls() bool {
	q, _ := c.stepQueue()
	return q != nil || c.gioSteps() != nil
}

// BeginPutmemNBI starts PutmemNBI(dst, src, n, pe) as steps (StepCalls
// must hold).
func (c *Ctx) BeginPutmemNBI(dst, src mem.Addr, n uint64, pe int) error {
	if err := c.checkPut("putmem_nbi", dst, n, pe); err != nil {
		return err
	}
	q, p := c.stepQueue()
	if q == nil {
		ch := c.gioSteps()
		if ch == nil {
			panic("shmem: BeginPutmemNBI on a context without step calls (StepCalls)")
		}
		c.gioReq = Request{Op: OpPut, PE: pe, Len: n, Dst: dst, Src: src}
		c.gio.begin(ch, &c.gioReq)
		c.stepCall = 3
		return nil
	}
	c.putReq = Request{Op: OpPut, PE: pe, Len: n, Dst: dst, Src: src} // (the steps only encode it)
	c.steps = submitSteps{c: q, p: p, r: &c.putReq}
	c.stepCall = 1
	return nil
}

// BeginWaitUntil starts WaitUntil(addr, width, cmp, v) as steps;
// WaitedValue returns its value once TryCall reported true.
func (c *Ctx) BeginWaitUntil(addr mem.Addr, width int, cmp Cmp, v uint64) error {
	if err := c.checkWait(addr, width); err != nil {
		return err
	}
	c.wait = waitSteps{c: c, addr: addr, cmp: cmp, width: width, v: v}
	c.stepCall, c.stepWidth = 2, width
	return nil
}

// TryCall advances the call begun by BeginPutmemNBI or BeginWaitUntil;
// once it reports true, CallErr returns the call's error, if any.
func (c *Ctx) TryCall(p *sim.Proc) bool {
	switch c.stepCall {
	case 3:
		if !c.gio.Step(p) {
			return false
		}
		c.gio.r = nil
		c.dev.stats.Calls++ // as timedChannel counts it
		if err := c.gio.err; err != nil {
			c.stepErr = fmt.Errorf("%s: shmem putmem_nbi: %w", c.wg.Name(), err)
		}
	case 1:
		if !c.steps.Step(p) {
			return false
		}
		c.steps.r = nil
		c.dev.stats.Calls++ // as timedChannel counts it
	case 2:
		if !c.wait.Step(p) {
			return false
		}
		c.stepGot = c.wait.got & mask(c.stepWidth)
		c.wait = waitSteps{}
	}
	c.stepCall = 0
	return true
}

// CallErr returns the error of the last call TryCall finished (a
// network operation that failed), and forgets it.
func (c *Ctx) CallErr() error {
	err := c.stepErr
	c.stepErr = nil
	return err
}

// WaitedValue is the value the last stepped WaitUntil saw.
func (c *Ctx) WaitedValue() uint64 { return c.stepGot }

// Putmem copies n bytes from local src to symmetric dst on pe and returns
// once src may be reused and the data will reach pe (blocking put).
func (c *Ctx) Putmem(dst, src mem.Addr, n uint64, pe int) error {
	return c.put("putmem", dst, src, n, pe, true)
}

// PutmemNBI starts the copy and returns; Quiet completes it.
func (c *Ctx) PutmemNBI(dst, src mem.Addr, n uint64, pe int) error {
	return c.put("putmem_nbi", dst, src, n, pe, false)
}

func (c *Ctx) get(call string, dst, src mem.Addr, n uint64, pe int, blocking bool) error {
	if err := c.checkPE(call, pe); err != nil {
		return err
	}
	if n == 0 {
		return c.fail(call, ErrLength, "0 bytes")
	}
	if err := c.checkSym(call, src, n); err != nil {
		return err
	}
	return c.submit(call, &Request{Op: OpGet, Blocking: blocking, PE: pe, Len: n, Dst: dst, Src: src})
}

// Getmem copies n bytes from symmetric src on pe into local dst and returns
// once they are visible to the work-group.
func (c *Ctx) Getmem(dst, src mem.Addr, n uint64, pe int) error {
	return c.get("getmem", dst, src, n, pe, true)
}

// GetmemNBI starts the copy; Quiet completes it.
func (c *Ctx) GetmemNBI(dst, src mem.Addr, n uint64, pe int) error {
	return c.get("getmem_nbi", dst, src, n, pe, false)
}

// P stores the low size bytes of v (size 1, 2, 4 or 8: char, short, int,
// long) at symmetric dst on pe. The value travels inline in the queue
// entry (the dissertation's ComP-Net chapter).
func (c *Ctx) P(dst mem.Addr, v uint64, size, pe int) error {
	if err := c.checkPE("p", pe); err != nil {
		return err
	}
	if size != 1 && size != 2 && size != 4 && size != 8 {
		return c.fail("p", ErrLength, "element size %d: must be 1, 2, 4 or 8", size)
	}
	if err := c.checkSym("p", dst, uint64(size)); err != nil {
		return err
	}
	return c.submit("p", &Request{Op: OpP, Blocking: true, PE: pe, Len: uint64(size), Dst: dst, Value: v})
}

// G returns the size-byte element at symmetric src on pe.
func (c *Ctx) G(src mem.Addr, size, pe int) (uint64, error) {
	if size != 1 && size != 2 && size != 4 && size != 8 {
		if err := c.checkPE("g", pe); err != nil {
			return 0, err
		}
		return 0, c.fail("g", ErrLength, "element size %d: must be 1, 2, 4 or 8", size)
	}
	if err := c.get("g", c.scratch, src, uint64(size), pe, true); err != nil {
		return 0, err
	}
	return c.wg.AtomicLoad64(c.scratch) & mask(size), nil
}

func mask(size int) uint64 {
	if size >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*size) - 1
}

func (c *Ctx) amo(call string, op Op, dst mem.Addr, cond, v uint64, width, pe int) (uint64, error) {
	if err := c.checkAtomic(call, dst, width, pe); err != nil {
		return 0, err
	}
	r := &Request{Op: op, Blocking: op.fetches(), PE: pe, Len: uint64(width), Dst: dst, Value: v & mask(width), Cond: cond & mask(width)}
	if err := c.submit(call, r); err != nil {
		return 0, err
	}
	return r.Result & mask(width), nil
}

// AtomicAdd adds v to the width-byte (4 or 8) integer at symmetric dst on
// pe; it does not wait for the update (Quiet does).
func (c *Ctx) AtomicAdd(dst mem.Addr, v uint64, width, pe int) error {
	_, err := c.amo("atomic_add", OpAdd, dst, 0, v, width, pe)
	return err
}

// AtomicFetchAdd adds v and returns the old value.
func (c *Ctx) AtomicFetchAdd(dst mem.Addr, v uint64, width, pe int) (uint64, error) {
	return c.amo("atomic_fetch_add", OpFetchAdd, dst, 0, v, width, pe)
}

// AtomicSwap stores v and returns the old value.
func (c *Ctx) AtomicSwap(dst mem.Addr, v uint64, width, pe int) (uint64, error) {
	return c.amo("atomic_swap", OpSwap, dst, 0, v, width, pe)
}

// AtomicCompareSwap stores v if the target equals cond and returns the old
// value.
func (c *Ctx) AtomicCompareSwap(dst mem.Addr, cond, v uint64, width, pe int) (uint64, error) {
	return c.amo("atomic_compare_swap", OpCSwap, dst, cond, v, width, pe)
}

// Fence orders this context's earlier puts and atomics to each PE before
// its later ones. It is posted as a blocking entry (the dissertation
// §1.3 step 5).
func (c *Ctx) Fence() error {
	if c.closed {
		return c.fail("fence", ErrClosed, "call after ctx_destroy")
	}
	return c.submit("fence", &Request{Op: OpFence, Blocking: true})
}

// Quiet completes every earlier operation of this context (and only of
// this context): puts delivered, gets and atomics done.
func (c *Ctx) Quiet() error {
	if c.closed {
		return c.fail("quiet", ErrClosed, "call after ctx_destroy")
	}
	return c.submit("quiet", &Request{Op: OpQuiet, Blocking: true})
}

// WaitUntil polls the local symmetric word at addr (width 4 or 8) until
// value cmp v holds and returns it, with a system-scope acquire between
// polls (the dissertation's ComP-Net chapter).
func (c *Ctx) WaitUntil(addr mem.Addr, width int, cmp Cmp, v uint64) (uint64, error) {
	if err := c.checkWait(addr, width); err != nil {
		return 0, err
	}
	if c.wg.Proc.CanRunSteps() {
		c.wait = waitSteps{c: c, addr: addr, cmp: cmp, width: width, v: v}
		c.wg.Proc.RunSteps(&c.wait)
		got := c.wait.got
		c.wait = waitSteps{}
		return got & mask(width), nil
	}
	wg, m := c.wg, c.wg.Mem()
	ok := (&waitSteps{cmp: cmp, width: width, v: v}).ok
	var got uint64
	for {
		wg.Acquire(gpu.System)
		if got = wg.Load64(addr); ok(got) {
			break
		}
		// Every poll until the word changes in memory (where the NIC
		// writes it) would read the same value: sleep until then.
		for !ok(m.Load64(addr)) {
			wg.Wait(m.Watch(addr), fmt.Sprintf("wait_until %#x %v", uint64(addr), v))
		}
	}
	c.wg.Barrier()
	return got & mask(width), nil
}

// checkWait checks wait_until's arguments.
func (c *Ctx) checkWait(addr mem.Addr, width int) error {
	if width != 4 && width != 8 {
		return c.fail("wait_until", ErrLength, "width %d: must be 4 or 8", width)
	}
	if uint64(addr)%uint64(width) != 0 {
		return c.fail("wait_until", ErrAlign, "address %#x is not %d-byte aligned", uint64(addr), width)
	}
	return c.checkSym("wait_until", addr, uint64(width))
}

// Barrier synchronises this work-group with the work-group of the same
// index on every PE (shmem_barrier over the team of those work-groups):
// it completes the context's operations, adds one to the barrier word of
// every other PE, and waits until all of them arrived.
func (c *Ctx) Barrier() error {
	if err := c.Quiet(); err != nil {
		return err
	}
	word, err := c.dev.barrierWord(c.wg.ID)
	if err != nil {
		return c.fail("barrier", ErrNoQueue, "%v", err)
	}
	c.dev.epochs[c.wg.ID]++
	epoch := c.dev.epochs[c.wg.ID]
	for k := 1; k < c.dev.npes; k++ {
		if err := c.AtomicAdd(word, 1, 8, (c.dev.pe+k)%c.dev.npes); err != nil {
			return err
		}
	}
	if err := c.Quiet(); err != nil {
		return err
	}
	_, err = c.WaitUntil(word, 8, CmpGE, epoch*uint64(c.dev.npes-1))
	return err
}

// Destroy completes the context's operations (as shmem_ctx_destroy) and
// releases its channel.
func (c *Ctx) Destroy() error {
	if c.closed {
		return c.fail("ctx_destroy", ErrClosed, "destroyed twice")
	}
	err := c.Quiet()
	c.closed = true
	c.ch.Close()
	return err
}
