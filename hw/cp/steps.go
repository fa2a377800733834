package cp

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
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
	stepNone stepOp = iota
	stepBusy        // Instr, Acquire: the core's time
	stepLoad        // Load64
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
	data  [mem.LineSize]byte  // the missed line, filled at the end
	val   uint64              // the loaded word, once Try reported true
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

// Loaded is the word the last stepped Load64 read.
func (t *Thread) Loaded() uint64 { return t.st.val }

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
			data, hit, lat, ok := t.cp.g.TryCPReadLine(t.Proc, st.line)
			if !ok {
				return false
			}
			t.count(hit)
			st.data = data
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
