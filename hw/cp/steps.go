package cp

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A CP thread's polling operations as steps, for a service loop that runs
// its polls as a state machine (sim.Proc.RunSteps) instead of coroutine
// code: a poll of a ComP-Net service thread is an acquire marker, a load
// and its instructions, three waits, each two coroutine switches in the
// blocking forms and a call here. Begin* starts an operation and Try
// advances it: true once it is over (no wait pending), false when it
// waited and must be called again after the wait. Each call waits at most
// once, where the blocking form waits, so both schedule the same events
// at the same times.

// stepOp is the operation Try advances.
type stepOp uint8

const (
	stepNone    stepOp = iota
	stepBusy           // Instr, Acquire: the core's time
	stepLoad           // Load64, LoadLine
	stepStore          // Store64
	stepRMW            // RMW
	stepRelease        // ReleaseSystem
)

// opPhase is where a stepped Store64, RMW or ReleaseSystem stands.
type opPhase uint8

const (
	storeCheck     opPhase = iota // a free store-buffer entry? (stall for the oldest store while none)
	storeStallBusy                // stalled for the oldest store
	storeL2                       // no store buffer: the store at the L2 (a CP RMW may hold the line)
	storeL2Busy                   // its latency on the core
	rmwDrain                      // the store buffer drained (drain's stalls)
	rmwLock                       // the read half at the L2 (another RMW may hold the line)
	rmwWrite                      // after the read's latency: the write half
	rmwUnlock                     // after the write's latency: the line released
	relDrain                      // the store buffer drained
	relDone                       // the GPU's system release (its write-back) over
)

// loadPhase is where a stepped Load64 stands.
type loadPhase uint8

const (
	loadHit       loadPhase = iota // an L1 hit: the L1 cycles on the core
	loadDrain                      // a miss: waiting for buffered stores to the line
	loadDrainBusy                  // stalled for such a store
	loadRead                       // reading the line at the L2 (a CP RMW may hold it)
	loadMiss                       // the L2 or memory latency on the core
)

// stepState is the operation begun as steps.
type stepState struct {
	op    stepOp
	phase loadPhase
	line  mem.Addr
	off   mem.Addr
	l1    *[mem.LineSize]byte // the hit copy (no fill comes before its read)
	data  [mem.LineSize]byte  // the line read (LoadLine), once Try reported true
	val   uint64              // the loaded word (or an RMW's old value), once Try reported true
	// Store64, RMW, ReleaseSystem
	ph       opPhase
	a        mem.Addr
	v        uint64
	f        func(uint64) uint64
	lk       gpu.CPRMWLock
	draining bool // a drain's stall is in progress
}

// BeginInstr starts Instr(n) as steps.
func (t *Thread) BeginInstr(n int) {
	t.st.op = stepNone
	if n <= 0 {
		return
	}
	t.n.Instr += uint64(n)
	t.slot.BeginBusy(t.cp.spec.Freq.Cycles(float64(n) / t.cp.ipc))
	t.st.op = stepBusy
}

// BeginAcquire starts Acquire as steps (the L1 is invalidated now).
func (t *Thread) BeginAcquire() {
	t.st.op = stepNone
	if t.cp.spec.CoherentL1 {
		return
	}
	t.invalidateL1()
	if c := t.cp.g.Spec().L1InvCycles; c > 0 {
		t.slot.BeginBusy(t.cp.g.Spec().Cycles(c))
		t.st.op = stepBusy
	}
}

// BeginLoad64 starts Load64(a) as steps; Loaded returns the word once Try
// reported true.
func (t *Thread) BeginLoad64(a mem.Addr) {
	l := mem.Line(a)
	t.st.op, t.st.line, t.st.off = stepLoad, l, a-l
	t.n.L1++
	if b := t.cached(l); b != nil && (!t.cp.spec.CoherentL1 || *b == t.cp.g.CoherentLine(l)) {
		t.st.l1, t.st.phase = b, loadHit
		t.slot.BeginBusy(t.cp.spec.Freq.Cycles(float64(t.cp.spec.L1Cycles)))
		return
	}
	t.st.l1, t.st.phase = nil, loadDrain
}

// Loaded is the word the last stepped Load64 read, or the old value the
// last stepped RMW read.
func (t *Thread) Loaded() uint64 { return t.st.val }

// BeginLoadLine starts LoadLine(l) as steps; LoadedLine returns the line
// once Try reported true.
func (t *Thread) BeginLoadLine(l mem.Addr) { t.BeginLoad64(l) }

// LoadedLine is the line the last stepped LoadLine read.
func (t *Thread) LoadedLine() [mem.LineSize]byte { return t.st.data }

// BeginStore64 starts Store64(a, v) as steps.
func (t *Thread) BeginStore64(a mem.Addr, v uint64) {
	l := mem.Line(a)
	t.n.L1++
	if b := t.cached(l); b != nil {
		binary.LittleEndian.PutUint64(b[a-l:], v)
	}
	t.st.op, t.st.a, t.st.v = stepStore, a, v
	if t.cp.spec.StoreBuffer == 0 {
		t.st.ph = storeL2
		return
	}
	t.retire()
	t.st.ph = storeCheck
}

// BeginRMW starts RMW(a, f) as steps; Loaded returns the old value once
// Try reported true.
func (t *Thread) BeginRMW(a mem.Addr, f func(old uint64) uint64) {
	t.st.op, t.st.a, t.st.f, t.st.ph, t.st.draining = stepRMW, a, f, rmwDrain, false
}

// BeginReleaseSystem starts ReleaseSystem as steps.
func (t *Thread) BeginReleaseSystem() {
	t.st.op, t.st.ph, t.st.draining = stepRelease, relDrain, false
}

// Try advances the operation begun by a Begin* call: true once it is over
// (and for no operation), false when it waited.
func (t *Thread) Try() bool {
	switch t.st.op {
	case stepBusy:
		if !t.slot.TryBusy() {
			return false
		}
	case stepLoad:
		if !t.tryLoad() {
			return false
		}
	case stepStore:
		if !t.tryStore() {
			return false
		}
	case stepRMW:
		if !t.tryRMW() {
			return false
		}
	case stepRelease:
		if !t.tryRelease() {
			return false
		}
	}
	t.st.op = stepNone
	return true
}

// tryLoad is LoadLine's course as steps.
func (t *Thread) tryLoad() bool {
	st := &t.st
	for {
		switch st.phase {
		case loadHit:
			if !t.slot.TryBusy() {
				return false
			}
			st.data = *st.l1
			st.val = binary.LittleEndian.Uint64(st.l1[st.off:])
			st.l1 = nil
			return true
		case loadDrain: // drain(line, false)
			t.retire()
			var last = t.Now()
			pending := false
			for _, s := range t.sb {
				if s.line == st.line {
					last, pending = max(last, s.done), true
				}
			}
			if !pending {
				st.phase = loadRead
				continue
			}
			if last > t.Now() {
				t.slot.BeginBusy(last - t.Now())
			} else {
				t.slot.BeginBusy(t.cp.g.Spec().Cycles(1)) // its arrival runs at this instant, after us
			}
			st.phase = loadDrainBusy
		case loadDrainBusy:
			if !t.slot.TryBusy() {
				return false
			}
			st.phase = loadDrain
		case loadRead:
			hit, lat, ok := t.cp.g.TryCPReadLineInto(t.Proc, st.line, &st.data)
			if !ok {
				return false
			}
			t.count(hit)
			t.slot.BeginBusy(lat)
			st.phase = loadMiss
		case loadMiss:
			if !t.slot.TryBusy() {
				return false
			}
			t.fill(st.line, st.data)
			st.val = binary.LittleEndian.Uint64(st.data[st.off:])
			return true
		}
	}
}

// tryStore is Store64's course as steps (after its L1 update).
func (t *Thread) tryStore() bool {
	st := &t.st
	for {
		switch st.ph {
		case storeCheck:
			if len(t.sb) < t.cp.spec.StoreBuffer {
				t.push(st.a, st.v)
				return true
			}
			if d := t.sb[0].done - t.Now(); d > 0 { // stallFor
				t.slot.BeginBusy(d)
			} else {
				t.slot.BeginBusy(t.cp.g.Spec().Cycles(1))
			}
			st.ph = storeStallBusy
		case storeStallBusy:
			if !t.slot.TryBusy() {
				return false
			}
			t.retire()
			st.ph = storeCheck
		case storeL2:
			hit, lat, ok := t.cp.g.TryCPStore64(t.Proc, st.a, st.v)
			if !ok {
				return false
			}
			t.count(hit)
			t.slot.BeginBusy(lat)
			st.ph = storeL2Busy
		case storeL2Busy:
			return t.slot.TryBusy()
		}
	}
}

// tryDrain is drain(line, all) as steps: true once no buffered store (to
// line, or at all) is left, false when it waited.
func (t *Thread) tryDrain(line mem.Addr, all bool) bool {
	st := &t.st
	for {
		if st.draining {
			if !t.slot.TryBusy() {
				return false
			}
			st.draining = false
		}
		t.retire()
		var last sim.Time
		pending := false
		for _, s := range t.sb {
			if all || s.line == line {
				last, pending = max(last, s.done), true
			}
		}
		if !pending {
			return true
		}
		if last > t.Now() {
			t.slot.BeginBusy(last - t.Now())
		} else {
			t.slot.BeginBusy(t.cp.g.Spec().Cycles(1)) // its arrival runs at this instant, after us
		}
		st.draining = true
	}
}

// tryRMW is RMW's course as steps.
func (t *Thread) tryRMW() bool {
	st := &t.st
	p := t.Proc
	for {
		switch st.ph {
		case rmwDrain:
			if !t.tryDrain(0, true) {
				return false
			}
			t.n.L2 += 2
			st.ph = rmwLock
		case rmwLock:
			lk, lat, ok := t.cp.g.TryCPRMW(p, st.a)
			if !ok {
				return false
			}
			st.lk = lk
			st.ph = rmwWrite
			p.Sleep(lat)
			return false
		case rmwWrite:
			old, lat := t.cp.g.CPRMWWrite(st.a, st.f)
			st.val = old
			st.ph = rmwUnlock
			p.Sleep(lat)
			return false
		case rmwUnlock:
			t.cp.g.CPRMWUnlock(st.lk)
			st.lk, st.f = gpu.CPRMWLock{}, nil
			t.dropLine(mem.Line(st.a))
			return true
		}
	}
}

// tryRelease is ReleaseSystem's course as steps.
func (t *Thread) tryRelease() bool {
	st := &t.st
	switch st.ph {
	case relDrain:
		if !t.tryDrain(0, true) {
			return false
		}
		st.ph = relDone
		t.cp.g.SystemRelease(t.Proc) // its write-back's wait, if any, ends it
		return !t.Proc.Waited()
	}
	return true
}

// Relayed polls (sim.Proc.ThenSleep): a service thread whose poll of an
// empty slot has read the line at the L2 knows what its next two events
// do — the load's latency ends (the line fills the L1, the word is
// loaded), the poll's instructions run, then the next poll's acquire
// marker invalidates the L1 — none of which another agent reads while it
// sleeps. Its process relays those wake-ups and the thread catches up
// here when its body runs again.

// Relayable reports whether the thread's polls can be relayed: an L1 the
// acquire marker invalidates, an invalidation that takes time, and a core
// of its own (no time-slicing decides anything on the way).
func (t *Thread) Relayable() bool {
	return !t.cp.spec.CoherentL1 && t.cp.g.Spec().L1InvCycles > 0 && t.slot.Alone()
}

// PendingLoad returns the word the stepped load in progress returns and
// the time its latency ends, when it has read its line at the L2 and
// sleeps through that latency (ok); else ok is false.
func (t *Thread) PendingLoad() (v uint64, end sim.Time, ok bool) {
	d, slept := t.slot.Sleeping()
	if t.st.op != stepLoad || t.st.phase != loadMiss || !slept {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(t.st.data[t.st.off:]), t.Now() + d, true
}

// FinishLoadRelayed ends the pending load as its relayed wake-up would
// have (Try), without filling the L1 when fill is false: the acquire
// marker that follows invalidates it anyway.
func (t *Thread) FinishLoadRelayed(fill bool) {
	if fill {
		if !t.Try() {
			panic("cp: a relayed load did not end")
		}
		return
	}
	if !t.slot.TryBusy() {
		panic("cp: a relayed load did not end")
	}
	t.st.val = binary.LittleEndian.Uint64(t.st.data[t.st.off:])
	t.st.op = stepNone
}

// InstrTime is the time n instructions hold the core (BeginInstr).
func (t *Thread) InstrTime(n int) sim.Duration {
	return t.cp.spec.Freq.Cycles(float64(n) / t.cp.ipc)
}

// AcquireTime is the time the acquire marker's L1 invalidation holds the
// core (BeginAcquire).
func (t *Thread) AcquireTime() sim.Duration { return t.cp.g.Spec().Cycles(t.cp.g.Spec().L1InvCycles) }

// BeginInstrRelayed is BeginInstr(n) whose sleep the process already
// relays: d is InstrTime(n), positive.
func (t *Thread) BeginInstrRelayed(n int, d sim.Duration) {
	t.n.Instr += uint64(n)
	t.slot.RelayedBusy(d)
	t.st.op = stepBusy
}

// BeginAcquireRelayed is BeginAcquire whose sleep the process already
// relays (Relayable): d is AcquireTime().
func (t *Thread) BeginAcquireRelayed(d sim.Duration) {
	t.invalidateL1()
	t.slot.RelayedBusy(d)
	t.st.op = stepBusy
}
