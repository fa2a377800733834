package gpu

import (
	"strconv"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Work-groups as callback events. A kernel with Steps instead of Body
// runs each work-group as a sim step process (sim.SpawnSteps): a small
// state machine the engine calls at the work-group's start and after each
// of its waits, instead of a coroutine. It schedules the same events at the
// same times as the equivalent Body, so results and event counts are
// identical; what changes is the cost of the simulator: no coroutine stack
// per resident work-group (a 16,384-node run holds hundreds of thousands)
// and a call instead of two coroutine switches per wake-up.
//
// Inside a step, the WG operations that wait at most once, at their end
// (VALU, Scalar, Stream, StreamLines, StreamRanges, LoadLanes, Barrier,
// Sleep, SleepUntil), are called as usual: the call records the wait and
// returns, and the step must return too. Operations with several waits
// or a result read after their wait have Try forms (TryStore64,
// TryRelease, TryPollUntil) that return false when they waited and must
// be called again, in the next step; true when they are finished (their
// last wait may still be pending, so the step returns after them too).
// The rule for a StepBody is therefore: at most one WG operation per call
// to Step, then return.

// StepBody is a work-group body as a state machine (Kernel.Steps).
type StepBody interface {
	// Step runs the body's next operation and reports whether the body
	// has finished. It returns after at most one WG operation; it is
	// called again once that operation's wait is over (at once when the
	// operation did not wait).
	Step(wg *WG) (done bool)
}

// kernelRun is one dispatch: its work-groups' shared state and the
// dispatcher. The CP hands the dispatch loop to a step process (Step: place
// a work-group, wait the dispatch cycles, spawn it; wait for a CU with room
// when none has) and waits once; the wake-ups it had while work-groups
// retired become callback events of kernelRun (Handle), the last of which
// resumes the CP in place. Same events at the same times as the CP doing
// it all as a coroutine, without a coroutine switch per work-group.
type kernelRun struct {
	g          *GPU
	k          *Kernel
	r          *Run
	waves      int
	dispatched int          // work-groups dispatched so far
	live       int          // work-groups dispatched and not yet retired
	cu         *computeUnit // the CU reserved for the next work-group
	wakeSet    bool         // a retirement wake-up (Handle) is scheduled
	fin        sim.Signal   // the CP waits on it for the last retirement
	proc       sim.Proc     // the dispatcher
	storesAt   sim.Time     // when the retired work-groups' last store lands
}

// Step implements sim.Stepper: the dispatch loop.
func (kr *kernelRun) Step(p *sim.Proc) bool {
	g, k := kr.g, kr.k
	if kr.cu == nil {
		if kr.cu = g.place(k, kr.waves); kr.cu == nil {
			p.Wait(&g.room, "a CU with room for "+k.Name)
			return false
		}
		p.Sleep(g.dispatchDelay)
		return false
	}
	cu := kr.cu
	kr.cu = nil
	i := kr.dispatched
	kr.dispatched++
	kr.live++
	w := WG{g: g, cu: cu, ID: i, Size: k.WGSize, waves: kr.waves, firstSIMD: cu.nextSIMD, run: kr.r}
	cu.nextSIMD = (cu.nextSIMD + kr.waves) % len(cu.simdFree)
	g.stats.WGs++
	name := g.wgName(i)
	// The work-group starts once its first instruction is fetched.
	at := g.e.Now() + g.fetchWait(k, cu)
	if k.Steps != nil {
		s := g.stepWG()
		s.kr, s.wg, s.phase = kr, w, 0
		s.wg.Proc = &s.proc
		s.body = k.Steps(&s.wg)
		g.e.SpawnStepsInAt(&s.proc, at, name, s)
	} else {
		wg := new(WG) // not &w: that would move w to the heap on the Steps path too
		*wg = w
		body := k.Body
		wg.Proc = g.e.SpawnAt(at, name, func(p *sim.Proc) {
			start := p.Now()
			body(wg)
			wg.Barrier()
			kr.retire(wg, start)
		})
	}
	return kr.dispatched == k.WGs
}

// wgName returns work-group i's process name.
func (g *GPU) wgName(i int) string {
	for len(g.wgNames) <= i {
		g.wgNames = append(g.wgNames, g.name+".wg["+strconv.Itoa(len(g.wgNames))+"]")
	}
	return g.wgNames[i]
}

// retire frees wg's CU resources and tells the dispatcher; its body and
// final barrier are done. Once every work-group is dispatched, the CP
// waits for them: a retirement wakes it (in Handle) unless a wake-up is
// already scheduled.
func (kr *kernelRun) retire(wg *WG, start sim.Time) {
	g := kr.g
	g.e.Span(wg.Name(), kr.k.Name, start, wg.Now())
	wg.cu.waves -= wg.waves
	wg.cu.lds -= kr.k.LDS
	kr.live--
	kr.storesAt = max(kr.storesAt, wg.storesAt)
	g.room.Notify()
	if kr.dispatched == kr.k.WGs && !kr.wakeSet {
		kr.wakeSet = true
		g.e.AtH(g.e.Now(), kr, 0)
	}
}

// Handle is the CP's wake-up at a retirement: it resumes the CP when the
// last work-group has retired, else the CP waits on.
func (kr *kernelRun) Handle(uint64) {
	kr.wakeSet = false
	if kr.live == 0 {
		kr.fin.Wake()
	}
}

// wgSteps runs a StepBody as the work-group's process, with the final
// barrier and the retirement a Body gets. It holds the work-group's WG
// and process, and goes back to its GPU's free list when the work-group
// retires: a reduction kernel per step makes hundreds of thousands of
// work-groups per run, and at most the resident ones live at a time.
type wgSteps struct {
	kr    *kernelRun
	wg    WG
	body  StepBody
	start sim.Time
	phase uint8 // 0 start, 1 body, 2 barrier, 3 retire
	proc  sim.Proc
}

// stepWG returns a retired work-group's wgSteps, or a new one.
func (g *GPU) stepWG() *wgSteps {
	if s, ok := g.freeWGs.Get(); ok {
		return s
	}
	return new(wgSteps)
}

// Step implements sim.Stepper.
func (s *wgSteps) Step(*sim.Proc) bool {
	wg := &s.wg
	switch s.phase {
	case 0:
		s.start = wg.Now()
		s.phase = 1
		fallthrough
	case 1:
		if s.body.Step(wg) {
			s.phase = 2
		}
		return false
	case 2:
		wg.Barrier()
		s.phase = 3
		return false
	default:
		s.kr.retire(wg, s.start)
		// Reused only from a later event, after the engine finished
		// the process (SpawnStepsIn checks); nothing is kept that a
		// retired work-group's holders could still reach.
		g := wg.g
		s.kr, s.body = nil, nil
		g.freeWGs.Put(s)
		return true
	}
}

// mustHaveBlocked panics when a blocking WG operation runs in a step
// body: its wait did not block, so its continuation (an effect or a
// result read after the wait) would run too early. Operations without
// a Try form (AtomicLoad64, AtomicAdd64, AtomicAddLanes, StoreLanes,
// LoadArgs) cannot be used in a step body.
func (w *WG) mustHaveBlocked(op string) {
	if w.Waited() {
		panic("gpu: " + op + " in a step body of work-group " + w.Name() + ": use its Try form")
	}
}

// wgPhases is where a work-group is inside its multi-wait operations
// (the Try forms); zero when it is in none.
type wgPhases struct {
	store, release, acquire, load, poll, args uint8
	atomic                                    uint8        // TryAtomicLoad's phase
	after                                     uint8        // TryStoreAfter's phase
	afterMark                                 sim.Mark     // the end of its time before an uncached store
	atRest                                    sim.Duration // its time from the sample point to its end
	acqLines                                  int          // L2 lines the acquire invalidated
	ldLine                                    *cline       // the L1 copy a pending load reads
	ldOff                                     mem.Addr     // the word's offset in ldLine
	ldAddr                                    mem.Addr     // a pending load's address
	ldRest                                    sim.Duration // a pending load's time from its sample point to its end
	ldVal                                     uint64       // a pending uncached load's word, read at its sample point
	// A poll's load in flight (TryPollUntil): its condition and what it
	// waits for, so the load may skip its end (skipLoadEnd), and whether
	// it did.
	until   func(uint64) bool
	what    string
	skipped bool
	smp     sample // a poll's deferred sample point (sample.go)
	// A poll's wait whose wake-up runs no event (armLateWake): armed, and
	// the mark the wake-up takes; resumeInPoll: the step body calls
	// TryPollUntil first when resumed (ResumesInPoll).
	armed        bool
	wake         sim.Mark
	resumeInPoll bool
	pollAcq      bool     // the poll in flight acquires before each load
	acq          sim.Mark // the end of an acquire that issued its load (acquireAndLoad)
	// The armed poll's condition and the work-group's wakeAndLoad.
	pollCond func(uint64) bool
	wakeOn   func(*sim.Mark) bool
	// eq: the poll in flight waits for the word to equal want
	// (TryPollEqual), and its until and pollCond are pollEqual, never
	// called: the comparison reads the work-group's own state, not a
	// caller's closure and the state it captures (two cache misses per
	// poll's wake-up at a thousand nodes).
	eq   bool
	want uint64
	// TryAcquireLoad64Until: the load the acquire under way issues at its
	// end (acqLoad, at acqAddr; acqEnd is that end's mark), the poll's
	// condition while its load is in flight, and whether the load's end
	// was skipped (a wait on the word's watch since the sample point).
	acqLoad bool
	acqAddr mem.Addr
	acqEnd  sim.Mark
	poller  Poller
	ucSkip  bool
}

// TryStore64 is Store64 in steps: the first call writes the L1 copy and
// waits for the L1 (false); the second sends the store beyond the L1
// (true).
func (w *WG) TryStore64(a mem.Addr, v uint64) bool {
	if w.uncached(a) {
		return w.tryUncachedStore(a, v)
	}
	if w.ph.store == 0 {
		w.storeL1(a, v)
		w.ph.store = 1
		w.Sleep(w.g.l1Lat)
		return false
	}
	w.ph.store = 0
	w.storeBeyondL1(a, v)
	return true
}

// tryUncachedStore is TryStore64 to an L2-uncacheable page: after the
// L1 cycles the store goes toward memory, where it is done at the
// directory's ack or its landing (GPU.farStore; a system release waits for
// it).
func (w *WG) tryUncachedStore(a mem.Addr, v uint64) bool {
	if w.ph.store == 0 {
		w.g.stats.Uncached++
		w.ph.store = 1
		w.Sleep(w.g.l1Lat)
		return false
	}
	w.ph.store = 0
	w.storeToMem(a, v)
	return true
}

// TryRelease is Release in steps. At system scope the first call waits
// for the work-group's stores to reach memory (false), the second writes
// the dirty L2 lines back (true; in dGPU mode it waits for that).
func (w *WG) TryRelease(s Scope) bool {
	switch s {
	case Device:
		w.Sleep(w.g.hitLat)
	case System:
		if w.ph.release == 0 {
			w.ph.release = 1
			w.SleepUntil(w.storesAt)
			return false
		}
		w.ph.release = 0
		w.g.writeBackAll(w.Proc)
	}
	return true
}

// TryStoreAfter is Sleep(d) followed by TryStore64(a, v): d of the
// work-group's time (an instruction's cost before the store) and the
// store. The first call waits (false); later ones advance the store until
// it reports true, as TryStore64's calls do. To an L2-uncacheable page
// the end of d runs no event: the store's issue there only counts it and
// waits out the L1 cycles, so the engine keeps that instant's key as a
// mark (sim.Mark) and the L1 wait's end is queued as the issue would have
// queued it (same times and order; one event fewer per store).
func (w *WG) TryStoreAfter(d sim.Duration, a mem.Addr, v uint64) bool {
	switch w.ph.after {
	case 0:
		g := w.g
		if w.ph.store == 0 && w.uncached(a) {
			g.stats.Uncached++
			w.ph.after = 2
			t := w.Now() + d
			g.e.SetMark(&w.ph.afterMark, t)
			w.Proc.SleepAtMark(&w.ph.afterMark, t+g.l1Lat)
			return false
		}
		w.ph.after = 1
		w.Sleep(d)
		return false
	case 1:
		if !w.TryStore64(a, v) {
			return false
		}
	default:
		w.storeToMem(a, v)
	}
	w.ph.after = 0
	return true
}

// StoreAfter is Sleep(d) followed by Store64(a, v) (TryStoreAfter).
func (w *WG) StoreAfter(d sim.Duration, a mem.Addr, v uint64) {
	for !w.TryStoreAfter(d, a, v) {
		w.mustHaveBlocked("StoreAfter")
	}
}

// TryAtomicLoad is AtomicLoad in steps: the first call sleeps until the
// load's sample point (false), the second runs read there and sleeps
// until the data is back (false), the third reports true with no wait
// pending. AtomicLoad is this in a loop, so the two take the same waits.
func (w *WG) TryAtomicLoad(a mem.Addr, read func()) bool {
	switch w.ph.atomic {
	case 0:
		d, s := w.g.wordLoad(a)
		w.ph.atomic, w.ph.atRest = 1, d-s
		w.Sleep(s)
		return false
	case 1:
		read()
		w.ph.atomic = 2
		w.Sleep(w.ph.atRest)
		return false
	}
	w.ph.atomic = 0
	return true
}

// TryAcquire is Acquire in steps: false when it waited (call it again
// after the wait), true once it is over with no wait pending.
func (w *WG) TryAcquire(s Scope) bool { return w.tryAcquire(s) }

// TryLoad64 is Load64 in steps: false when it waited for the access's
// latency (call it again after the wait); the word and true once it is
// over, with no wait pending.
func (w *WG) TryLoad64(a mem.Addr) (uint64, bool) { return w.tryLoad64(a) }

// tryAcquire is Acquire in steps: true when it is over, with no wait
// pending.
func (w *WG) tryAcquire(s Scope) bool {
	g := w.g
	switch w.ph.acquire {
	case 0:
		if s < Device {
			return true
		}
		w.cu.l1.clear()
		g.stats.L1Invalidates++
		w.ph.acquire = 1
		w.Sleep(g.l1InvLat)
		return false
	case 1:
		if s != System || g.l2 == nil {
			w.ph.acquire = 0
			return true
		}
		// Write back and invalidate in one step, before sleeping for
		// either: a store another work-group makes meanwhile must land
		// in a fresh line, not in one this invalidation then drops.
		wb := g.l2.writeBack(g.mem)
		g.stats.L2Writebks += uint64(wb)
		w.ph.acqLines = g.l2.lines.n
		g.l2.clear()
		w.ph.acquire = 2
		if wb > 0 {
			w.SleepUntil(g.dram.Reserve(w.Now(), uint64(wb)*mem.LineSize))
			return false
		}
		fallthrough
	case 2:
		d := g.spec.Cycles(g.spec.L2InvCycles + w.ph.acqLines)
		if w.ph.acqLoad && w.loadAtAcquireEnd(d) {
			w.ph.acquire = 0
			return false
		}
		w.ph.acquire = 3
		w.Sleep(d)
		return false
	default:
		w.ph.acquire = 0
		return true
	}
}

// readLater makes cl the copy the pending load reads at the end of its
// latency; cl stays out of the cache's reuse until then.
func (ph *wgPhases) readLater(cl *cline) {
	ph.ldLine = cl
	cl.loads++
}

// tryLoad64 is Load64 in steps: the first call looks the line up and
// waits for its latency (false); the second returns the word as the line
// copy (or memory) holds it then (true). A load that memory serves (an
// L1 miss in APU mode, an L2 miss in dGPU mode, an L2-uncacheable page)
// waits in two parts: to its sample point (GPU.sampleAt), where memory's
// data enters the copy it reads (resample), then for the data's way back.
func (w *WG) tryLoad64(a mem.Addr) (uint64, bool) {
	g := w.g
	switch w.ph.load {
	case 1:
		w.ph.load = 0
		if w.ph.ucSkip { // resumed from the wait that skipped the end
			w.ph.ucSkip = false
			w.Proc.WokeAtKey() // (either way, what the end would have returned)
		}
		if cl := w.ph.ldLine; cl != nil {
			w.ph.ldLine = nil
			cl.loads--
			return leUint64(g.settled(cl).data[w.ph.ldOff:]), true
		}
		return w.ph.ldVal, true
	case 2:
		// At the sample point: memory supplies the data now.
		w.ph.load = 1
		d := w.ph.ldRest
		cl := w.ph.ldLine
		if cl == nil {
			w.ph.ldVal = g.mem.Load64(w.ph.ldAddr)
			if w.ph.poller != nil && w.skipUncachedEnd(d) {
				return 0, false
			}
			w.Sleep(d)
			return 0, false
		}
		w.resample(mem.Line(w.ph.ldAddr), cl)
		if w.ph.until != nil && !g.l2Copy(w.ph.ldAddr) && w.skipLoadEnd(w.ph.ldAddr, cl, d) {
			return 0, false
		}
		w.Sleep(d)
		return 0, false
	}
	w.ph.load = 1
	w.ph.ldAddr = a
	if w.uncached(a) {
		g.stats.Uncached++
		w.sampleLater(g.farLoad(a, g.missLat)) // past the L2, through its lookup
		return 0, false
	}
	l := mem.Line(a)
	off := a - l
	w.ph.ldOff = off
	if cl := w.cu.l1.get(l); cl != nil {
		g.stats.L1Hits++
		w.ph.readLater(cl)
		w.Sleep(g.l1Lat)
		return 0, false
	}
	g.stats.L1Misses++
	// An L2 miss pays the lookup, then memory (Spec.MissLatency). In APU
	// mode the word path keeps no L2 copy (g.l2 is nil): every L1 miss is
	// charged as an L2 miss, which is what a poll of a line another agent
	// wrote (its probe invalidated the L2 copy) pays.
	if g.l2Copy(a) {
		if g.l2.get(l) == nil {
			g.l2.fill(l, g.mem, g.mem)
			cl := w.l1Fill().fill(l, g.mem, nil)
			cl.data = g.l2.get(l).data
			w.ph.readLater(cl)
			w.sampleLater(g.missLat)
			return 0, false
		}
		w.checkStale(l, g.l2.get(l), off)
		cl := w.l1Fill().fill(l, g.mem, nil)
		cl.data = g.l2.get(l).data
		w.ph.readLater(cl)
		w.Sleep(g.hitLat)
		return 0, false
	}
	cl := w.l1Fill().fill(l, g.mem, nil)
	w.ph.readLater(cl)
	d, s := g.wordLoad(a)
	if w.ph.until == nil || g.keepSamples {
		w.sampleAfter(d, s)
		return 0, false
	}
	// A poll: no event at the sample point (sample.go).
	w.deferSample(cl, l, s)
	if g.skipAtIssue(w, a, cl, d) {
		return 0, false
	}
	w.SleepAtMark(&w.ph.smp.mark, w.Now()+d)
	return 0, false
}

// sampleLater waits for the sample point of the pending load of
// w.ph.ldAddr, d long in all, and leaves the rest of d for its second
// part (tryLoad64's phase 2).
func (w *WG) sampleLater(d sim.Duration) { w.sampleAfter(d, w.g.sampleAt(w.ph.ldAddr, d)) }

// sampleAfter is sampleLater for a load whose sample point is s into it.
func (w *WG) sampleAfter(d, s sim.Duration) {
	w.ph.load, w.ph.ldRest = 2, d-s
	w.Sleep(s)
}

// resample puts memory's data of line l, read at the pending load's sample
// point, into the copies the load fills: the dGPU L2 copy (its bytes the
// GPU wrote since the fill kept) and cl, the L1 copy the load reads (its
// bytes the CU stored into since the fill kept). A line copy filled at
// the load's issue took memory's data as it was then; the access reads it
// later, when the request reaches memory.
func (w *WG) resample(l mem.Addr, cl *cline) {
	g := w.g
	var cur [mem.LineSize]byte
	g.mem.Read(l, cur[:])
	if g.l2 != nil {
		if c2 := g.l2.get(l); c2 != nil {
			merge(&c2.data, &cur, c2.dirty)
			cur = c2.data
		}
	}
	merge(&cl.data, &cur, cl.stored)
}

// merge copies the bytes of src into dst except those whose bit is set in
// keep.
func merge(dst, src *[mem.LineSize]byte, keep uint64) {
	if keep == 0 {
		*dst = *src
		return
	}
	for i := range dst {
		if keep&(1<<i) == 0 {
			dst[i] = src[i]
		}
	}
}

// skipLoadEnd is the end of a poll's load, d from now, skipped when its
// outcome is known (sim.Proc.WaitNotBefore): the word the load read from
// memory into its fresh L1 copy cl fails the poll's condition, so at its
// end the poll finds it failing, and unless the word's line is written
// meanwhile (a watch notification) or the copy is stored into (Nudge from
// storeL1), finds memory unchanged and waits for a write to the line. The
// work-group then waits for that write at once. Only when it waits alone
// on the line: with other waiters the skipped end's wait would have queued
// behind them. Called at the load's sample point (tryLoad64). Not when
// the CU stored into the copy since its fill: the copy's word may then
// differ from memory's, which the poll's end compares. It reports whether
// it skipped (the work-group waits).
func (w *WG) skipLoadEnd(a mem.Addr, cl *cline, d sim.Duration) bool {
	if cl.skipper != nil || cl.stored != 0 || w.g.keepLoadEnds || !w.Proc.Stepping() || w.ph.holds(w.ph.until, leUint64(cl.data[w.ph.ldOff:])) {
		return false
	}
	sig := w.g.mem.WatchOnce(a)
	if sig.Waiting() > 0 {
		return false
	}
	cl.skipper = w.Proc
	w.ph.skipped = true
	if w.g.skips != nil {
		*w.g.skips = append(*w.g.skips, w.Now()+d)
	}
	w.Proc.WaitNotBefore(sig, w.ph.what, w.Now()+d, w.g.e.ReserveSeq())
	return true
}

// skipAtIssue is skipLoadEnd for a poll's load whose sample point runs no
// event (deferSample), decided at the load's issue, d before its end: the
// word as the fill read it fails the condition, so unless the line is
// written before the sample point (a watch notification resumes the
// work-group at the end's key, where the end runs and reads the sampled
// word), the sample point finds it failing as well and skipLoadEnd skips
// the end there. The same conditions, as they stand at the sample point:
// a store into the copy before it nudges the work-group (the skip would
// not have been taken) and a second waiter on the line's signal ends the
// wait at the key (it would not have been taken either: skipLoadEnd
// finds a waiter). It reports whether it skipped (the work-group waits).
func (g *GPU) skipAtIssue(w *WG, a mem.Addr, cl *cline, d sim.Duration) bool {
	return g.skipAtIssueAt(w, a, cl, w.Now()+d)
}

// skipAtIssueAt is skipAtIssue for a load ending at end.
func (g *GPU) skipAtIssueAt(w *WG, a mem.Addr, cl *cline, end sim.Time) bool {
	if cl.skipper != nil || cl.stored != 0 || g.keepLoadEnds || !w.Proc.Stepping() || w.ph.holds(w.ph.until, leUint64(cl.data[w.ph.ldOff:])) {
		return false
	}
	sig := g.mem.WatchOnce(a)
	if sig.Waiting() > 0 {
		return false
	}
	cl.skipper = w.Proc
	w.ph.skipped = true
	if g.skips != nil {
		*g.skips = append(*g.skips, end)
	}
	w.Proc.WaitNotBeforeMark(sig, w.ph.what, end, &w.ph.smp.mark)
	if w.ph.pollAcq {
		w.ph.pollCond = w.ph.until
		w.armLateWake()
	}
	return true
}

// TryPollUntil is PollUntil in steps: false while it polls or waits for
// the line to be written; the word's value and true once cond holds
// (no wait pending).
func (w *WG) TryPollUntil(a mem.Addr, acquire bool, what string, cond func(uint64) bool) (uint64, bool) {
	w.ph.eq = false
	return w.tryPoll(a, acquire, what, cond)
}

// TryPollEqual is TryPollUntil with the condition that the word equals
// want: the same loads, waits and events, without a closure for the
// condition (a GPU-TN work-group's flag poll).
func (w *WG) TryPollEqual(a mem.Addr, acquire bool, what string, want uint64) (uint64, bool) {
	w.ph.eq, w.ph.want = true, want
	return w.tryPoll(a, acquire, what, pollEqual)
}

// pollEqual stands for TryPollEqual's condition where a poll keeps its
// condition (wgPhases.until, pollCond); wgPhases.holds evaluates it.
func pollEqual(uint64) bool { panic("gpu: pollEqual called") }

// holds reports whether v satisfies the condition cond of the poll in
// flight, which is pollEqual for TryPollEqual's.
func (ph *wgPhases) holds(cond func(uint64) bool, v uint64) bool {
	if ph.eq {
		return v == ph.want
	}
	return cond(v)
}

// tryPoll is TryPollUntil and TryPollEqual (w.ph.eq set by the caller).
func (w *WG) tryPoll(a mem.Addr, acquire bool, what string, cond func(uint64) bool) (uint64, bool) {
	if w.ph.armed {
		w.disarm()
	}
	for {
		if w.ph.skipped {
			// Resumed from a load whose end was skipped (skipLoadEnd).
			w.ph.skipped = false
			w.ph.ldLine.skipper = nil
			if !w.Proc.WokeAtKey() {
				// Woken by the write the skipped end would have waited
				// for: as after that wait, the load done.
				w.g.settled(w.ph.ldLine).loads--
				w.ph.ldLine, w.ph.load, w.ph.poll = nil, 0, 0
				continue
			}
			// At the skipped end's own time and place: it runs now.
		}
		if w.ph.poll == 0 {
			if acquire && w.acquireAndLoad(a, cond, what) {
				return 0, false
			}
			if acquire && !w.tryAcquire(System) {
				return 0, false
			}
			w.ph.poll = 1
		}
		w.ph.until, w.ph.what, w.ph.pollAcq = cond, what, acquire
		v, ok := w.tryLoad64(a)
		w.ph.until = nil
		if !ok {
			return 0, false
		}
		w.ph.poll = 0
		if w.ph.holds(cond, v) {
			return v, true
		}
		// The load took its value at its sample point; a write that
		// landed after it is seen by the next acquiring poll, not by
		// waiting for yet another write. (A poll without acquire keeps
		// hitting its stale L1 line, so it waits, as on the hardware.)
		if acquire && w.g.mem.Load64(a) != v {
			continue
		}
		w.Wait(w.g.mem.WatchOnce(a), what) // asked again before the next wait
		if acquire {
			w.ph.pollCond = cond
			w.armLateWake()
		}
		return 0, false
	}
}

// acquireAndLoad is a poll's system-scope acquire and the issue of its
// load in one step, for a work-group alone on its CU in APU mode: the
// acquire invalidates the L1 and waits gpu.l1_inv_cycles, and its end,
// an event that only issued the load, becomes a mark (sim.Mark) after
// which the load's sample point is chained (SetMarkAfter). The load's
// fill at the acquire's start instead of its end reads nothing anyone
// could change for it: the L1 is the work-group's alone and empty (no
// work-group can be placed on the CU before the acquire ends: the
// dispatch delay is longer), and memory's line is taken again up to the
// sample point anyway (deferSample); a write before the end notifies the
// skipped end's wait, which then runs at its key. It reports whether it
// did (the work-group waits for the load).
func (w *WG) acquireAndLoad(a mem.Addr, cond func(uint64) bool, what string) bool {
	g := w.g
	inv := g.l1InvLat
	if w.ph.acquire != 0 || g.l2 != nil || g.keepSamples || w.cu.waves != w.waves || g.dispatchDelay < inv ||
		!w.Proc.Stepping() || (g.uncached != nil && g.Uncached(a)) || (g.c2c != nil && g.mem.PoolOf(a) == mem.Host) {
		return false
	}
	// The acquire (tryAcquire's first part).
	w.cu.l1.clear()
	g.stats.L1Invalidates++
	t1 := w.Now() + inv
	g.e.SetMark(&w.ph.acq, t1)
	// The load issued at t1 (tryLoad64's miss in APU mode, a poll's).
	w.ph.poll, w.ph.load, w.ph.ldAddr = 1, 1, a
	w.ph.until, w.ph.what, w.ph.pollAcq = cond, what, true
	cl, d := w.missAfterAcquire(a, t1)
	if !g.skipAtIssueAt(w, a, cl, t1+d) {
		w.SleepAtMark(&w.ph.smp.mark, t1+d)
	}
	w.ph.until = nil
	return true
}

// ResumesInPoll declares that the work-group's step body, resumed after a
// wait of TryPollUntil, calls TryPollUntil again before anything else (a
// kernel polling its flags), so that wake-up may run no event of its own
// (armLateWake).
func (w *WG) ResumesInPoll() { w.ph.resumeInPoll = true }

// armLateWake makes the wake-up of a poll's wait (the line written) a mark
// instead of an event (sim.Proc.DeferWake) when all that event would do is
// start the next poll's system-scope acquire, in APU mode (the acquire is
// the L1 invalidation and its wait) on a CU the work-group has to itself:
// what the wake-up does then (forget the load it waited after, invalidate
// the L1) acts on the work-group's own state and its CU's L1, which
// nobody reads before the acquire ends, so it is done when the work-group
// resumes there (lateWake), in the same order. A work-group placed on the
// CU meanwhile (place) has it done first: the newcomer finds the L1 as
// the wake-up left it.
func (w *WG) armLateWake() {
	g := w.g
	if !w.ph.resumeInPoll || g.l2 != nil || w.cu.waves != w.waves || w.cu.armed != nil || !w.Proc.Stepping() {
		return
	}
	w.ph.armed, w.cu.armed = true, w
	if w.ph.wakeOn == nil {
		w.ph.wakeOn = w.wakeAndLoad // made once per work-group
	}
	w.Proc.DeferWake(&w.ph.wake, g.l1InvLat, w.ph.wakeOn)
}

// wakeAndLoad is the wake-up of an armed poll (armLateWake) when the
// line's write is notified, called then with the wake-up's mark m: when
// the word now satisfies the poll's condition, the next poll's load will
// not skip its end, so the wake-up's work, the acquire and the load's
// issue are done now (lateWake, then as acquireAndLoad with the acquire's
// end chained after m) and the work-group resumes at the load's end. Its
// L1 is its own and the dispatch delay keeps newcomers off the CU until
// the acquire is over; memory's line is taken again up to the sample
// point. Otherwise (false) it resumes at the acquire's end, as
// armLateWake does. The step body resumes in TryPollUntil with the same
// word and condition (ResumesInPoll).
func (w *WG) wakeAndLoad(m *sim.Mark) bool {
	g := w.g
	a := w.ph.ldAddr
	inv := g.l1InvLat
	if g.keepSamples || g.dispatchDelay < inv || (g.uncached != nil && g.Uncached(a)) ||
		(g.c2c != nil && g.mem.PoolOf(a) == mem.Host) || !w.ph.holds(w.ph.pollCond, g.mem.Load64(a)) {
		return false
	}
	w.ph.armed, w.cu.armed = false, nil
	w.Proc.WokeLate() // done here
	w.lateWake()
	t1 := w.Now() + inv
	g.e.SetMarkAfter(&w.ph.acq, m, t1)
	w.ph.acquire = 0
	w.ph.poll, w.ph.load, w.ph.ldAddr = 1, 1, a
	_, d := w.missAfterAcquire(a, t1)
	g.e.PushAtMark(&w.ph.smp.mark, t1+d, w.Proc)
	return true
}

// missAfterAcquire is the L1 miss of a poll's load of a issued at t1, the
// end of its acquire (the mark w.ph.acq), for acquireAndLoad and
// wakeAndLoad: the line's fill, its sample point's mark chained after the
// acquire's, the sample kept. It returns the line and the load's latency;
// the caller waits for the end (t1 plus the latency).
func (w *WG) missAfterAcquire(a mem.Addr, t1 sim.Time) (*cline, sim.Duration) {
	g := w.g
	l := mem.Line(a)
	w.ph.ldOff = a - l
	g.stats.L1Misses++
	cl := w.l1Fill().fill(l, g.mem, nil)
	w.ph.readLater(cl)
	d, s := g.wordLoad(a)
	sm := &w.ph.smp
	g.e.SetMarkAfter(&sm.mark, &w.ph.acq, t1+s)
	w.keepSample(cl, l)
	return cl, d
}

// disarm ends an armed wait (armLateWake): if its wake-up was a mark, what
// that wake-up did is done now (lateWake); a wake-up not yet come is an
// event again.
func (w *WG) disarm() {
	w.ph.armed, w.cu.armed = false, nil
	if w.Proc.WokeLate() {
		w.lateWake()
		return
	}
	w.Proc.CancelDeferWake()
}

// lateWake does what the wake-up event of a poll's wait did (TryPollUntil
// resumed by the write: the load it waited after is over) and the first
// part of the next poll's system-scope acquire (the L1 invalidation, whose
// wait the deferred wake-up already spent: the acquire resumes at its
// end).
func (w *WG) lateWake() {
	if w.ph.skipped {
		w.ph.skipped = false
		w.ph.ldLine.skipper = nil
		w.g.settled(w.ph.ldLine).loads--
		w.ph.ldLine, w.ph.load = nil, 0
	}
	w.ph.poll = 0
	w.cu.l1.clear()
	w.g.stats.L1Invalidates++
	w.ph.acquire = 1
}

func leUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// A Poller is what a poll waits for (TryAcquireLoad64Until).
type Poller interface {
	Holds(v uint64) bool // the word's value ends the poll
	What() string        // what the poll waits for (a blocked wait's reason)
}

// TryAcquireLoad64Until is TryAcquire(System) followed by TryLoad64(a),
// one poll of a word that the caller, when the value does not satisfy p,
// waits to see written (Memory.Watch) before polling again: false while
// it waits, the word and true once both are over (with no wait pending).
// The same waits at the same times as the two calls, with two events
// fewer when a is L2-uncacheable (GIO's flags) in dGPU mode:
//
//   - the acquire's last wait (the L2 invalidation) ends in an event that
//     would only issue the load, which past the caches takes the same
//     time whatever it reads: that end is a mark (sim.Mark), at whose
//     key the load's sample point is queued as the event would have
//     queued it (loadAtAcquireEnd);
//   - a load whose sample point read a value that fails p ends in an event
//     that returns the value, after which the caller finds memory
//     unchanged and waits for a write, or finds it written: the load's end
//     is skipped and the work-group waits on the word's watch at once,
//     not before the end's key (sim.Proc.WaitNotBefore): a write before
//     the key resumes it at exactly the key, as the end; one after it, as
//     the caller's wait (skipUncachedEnd).
func (w *WG) TryAcquireLoad64Until(a mem.Addr, p Poller) (uint64, bool) {
	if w.ph.load == 0 { // the acquire (its end may issue the load)
		w.ph.acqLoad, w.ph.acqAddr = true, a
		done := w.tryAcquire(System)
		w.ph.acqLoad = false
		if !done {
			return 0, false
		}
	}
	w.ph.poller = p
	v, ok := w.tryLoad64(a)
	w.ph.poller = nil
	return v, ok
}

// AtomicLoadAtMark is TryAtomicLoad's first step (the load's issue) run
// d from now, at the end of a wait whose event would do nothing else,
// with that end the mark m: the load's sample point is queued as that
// event would have queued it (sim.Mark), and the caller's next
// TryAtomicLoad(a, …) goes on from the sample point. False, with nothing
// done, where the load's latency could depend on when it issues (behind a
// memory-side L2, whose tags it touches; a far load over NVLink-C2C,
// which reserves its link), or the work-group is not stepping or is
// inside a load.
func (w *WG) AtomicLoadAtMark(m *sim.Mark, d sim.Duration, a mem.Addr) bool {
	g := w.g
	if g.keepSamples || !w.Proc.Stepping() || w.ph.atomic != 0 || g.memSide(a) ||
		g.c2c != nil && g.mem.PoolOf(a) == mem.Host {
		return false
	}
	t := w.Now() + d
	ld, s := g.wordLoad(a) // (farLoad's missLat and its sample point: the same at t)
	g.e.SetMark(m, t)
	w.ph.atomic, w.ph.atRest = 1, ld-s
	w.Proc.SleepAtMark(m, t+s)
	return true
}

// loadAtAcquireEnd issues the uncached load of w.ph.acqAddr at the end of
// the acquire's last wait, d from now, as tryLoad64 issues it there, with
// that end a mark; false, with nothing done, where the load is not one
// that memory serves past the caches in a time that does not depend on
// when it issues (a far load over NVLink-C2C reserves its link), or the
// work-group is not stepping.
func (w *WG) loadAtAcquireEnd(d sim.Duration) bool {
	g, a := w.g, w.ph.acqAddr
	if g.keepSamples || !w.Proc.Stepping() || !w.uncached(a) || g.c2c != nil && g.mem.PoolOf(a) == mem.Host {
		return false
	}
	t := w.Now() + d
	g.e.SetMark(&w.ph.acqEnd, t)
	// tryLoad64's uncached issue at t.
	g.stats.Uncached++
	w.ph.ldAddr = a
	ld := g.farLoad(a, g.missLat)
	s := g.sampleAt(a, ld)
	w.ph.load, w.ph.ldRest = 2, ld-s
	w.Proc.SleepAtMark(&w.ph.acqEnd, t+s)
	return true
}

// skipUncachedEnd is the skip of an uncached poll load's end, d after its
// sample point, when the value it read fails the poll's condition
// (TryAcquireLoad64Until); false where it does not apply (the word's watch
// has waiters, whose queue the caller's wait would have joined behind).
func (w *WG) skipUncachedEnd(d sim.Duration) bool {
	g := w.g
	if g.keepLoadEnds || !w.Proc.Stepping() || w.ph.poller.Holds(w.ph.ldVal) {
		return false
	}
	// Asked once: the work-group asks again before it waits again (its
	// poller re-reads the word after each wake-up), so the memory need not
	// keep a watch per flag polled for the rest of the run, and the
	// signal, reused, keeps its waiter slice (no allocation per poll).
	sig := g.mem.WatchOnce(w.ph.ldAddr)
	if sig.Waiting() > 0 {
		return false
	}
	w.ph.ucSkip = true
	w.Proc.WaitNotBeforeFor(sig, w.ph.poller, w.Now()+d, g.e.ReserveSeq()) // (its reason formatted only if read)
	return true
}
