package gpu

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// WG is a running work-group: the context a kernel body declares its costs
// through. It embeds the work-group's process.
type WG struct {
	*sim.Proc
	g         *GPU
	cu        *computeUnit
	run       *Run
	ID        int // work-group id in the grid
	Size      int // work-items
	waves     int
	firstSIMD int
	storesAt  sim.Time // when this WG's last store reaches memory
	ph        wgPhases // progress through a multi-wait operation (steps.go)
	uc        ucSpans  // the uncached answers of the spans it reached last (uncached.go)
}

// GPU returns the device the work-group runs on.
func (w *WG) GPU() *GPU { return w.g }

// Mem returns the memory the work-group reaches.
func (w *WG) Mem() *mem.Memory { return w.g.mem }

// CU returns the compute unit index.
func (w *WG) CU() int { return w.cu.id }

// Waves returns the number of wavefronts of the work-group.
func (w *WG) Waves() int { return w.waves }

// VALU issues n vector instructions per wavefront. The waves are spread over
// the CU's SIMDs round-robin; each instruction occupies its SIMD for 4
// cycles (64 lanes over SIMD-16). The call returns when every wave is done.
func (w *WG) VALU(n int) {
	if n <= 0 {
		return
	}
	simds := w.cu.simdFree
	nS := len(simds)
	// Round-robin from firstSIMD: every SIMD gets waves/nS waves, and the
	// waves%nS SIMDs after firstSIMD one more.
	base, extra := w.waves/nS, w.waves%nS
	now := w.Now()
	end := now
	for j := range min(w.waves, nS) {
		s := (w.firstSIMD + j) % nS
		k := base
		if j < extra {
			k++
		}
		simds[s] = max(now, simds[s]) + w.g.cycles(4*n*k)
		end = max(end, simds[s])
	}
	w.SleepUntil(end)
}

// Scalar runs n serial scalar instructions (one work-item's control code).
func (w *WG) Scalar(n int) { w.Sleep(w.g.spec.Cycles(n * w.g.spec.ScalarCycles)) }

// Stream moves n bytes of bulk array traffic through the node's memory
// server (shared with the other CUs and, in APU mode, with the CPU), or,
// with the workloads' arrays in host memory beyond NVLink-C2C
// (UseHostArrays), across the link and through the host memory's server;
// and, where the GPU has one (gpu.lsu_bytes), through its CU's load/store
// path: every load and store a work-group issues passes its CU's
// load/store units, so one work-group cannot stream faster than they
// move bytes, and k work-groups on k CUs stream at min(k × that rate,
// the memory's).
func (w *WG) Stream(n uint64) {
	if n > 0 {
		w.SleepUntil(w.streamEnd(n))
	}
}

// streamEnd reserves the servers for a stream of n > 0 bytes issued now
// and returns when it ends (Stream).
func (w *WG) streamEnd(n uint64) sim.Time {
	now := w.Now()
	var done sim.Time
	if w.g.hostArrays {
		done = w.g.hostBulk(now, n)
	} else {
		done = w.g.dram.Reserve(now, n)
	}
	if l := w.cu.lsu; l != nil {
		done = max(done, l.Reserve(now, n))
	}
	// The first line arrives after the L2 lookup and the memory access
	// past it (Spec.MissLatency), as an addressed access's (StreamLines).
	return max(done, now+w.g.missLat)
}

// StreamOut is Stream of n bytes of which out are the work-group's writes
// (a copy's or a reduction's output). The work-group waits for the stream
// as Stream does, and its last write leaves when the stream ends (it
// carries the data the last read brought), but, a store being posted, the
// work-group does not wait for it: a system-scope release (WG.Release, the
// kernel's completion signal: GPU.execute's teardown, an AQL queue's
// packet processor) does, until the write is acknowledged (writeAck). With
// the arrays in host memory beyond NVLink-C2C the stream already waited
// for its writes' landing there (hostBulk).
func (w *WG) StreamOut(n, out uint64) {
	if n == 0 {
		return
	}
	end := w.streamEnd(n)
	if out > 0 && !w.g.hostArrays {
		w.storesAt = max(w.storesAt, end+w.g.writeAck())
	}
	w.SleepUntil(end)
}

// Barrier waits until all the work-group's waves have caught up.
func (w *WG) Barrier() {
	end := w.Now()
	simds := w.cu.simdFree
	for i := range min(w.waves, len(simds)) {
		end = max(end, simds[(w.firstSIMD+i)%len(simds)])
	}
	w.SleepUntil(end)
}

// Load64 is a plain (relaxed) load through the CU's L1 and, in dGPU mode,
// the L2. A hit returns the cached copy, however stale.
func (w *WG) Load64(a mem.Addr) uint64 {
	for {
		if v, ok := w.tryLoad64(a); ok {
			return v
		}
		w.mustHaveBlocked("Load64")
	}
}

// AtomicLoad64 is a system-scope atomic load: it bypasses the caches and
// reads memory, through the L2's lookup (Spec.MissLatency); behind a
// memory-side L2 the L2 serves a word of the GPU's own memory (an L2 hit
// when the tag model holds its line). It returns
// the word as memory held it at the load's sample point (GPU.LoadSample),
// not when the data is back.
func (w *WG) AtomicLoad64(a mem.Addr) uint64 {
	var v uint64
	w.AtomicLoad(a, func() { v = w.g.mem.Load64(a) })
	return v
}

// AtomicLoad is the timing of a system-scope load of the word (or line) at
// a, as AtomicLoad64: read runs at the load's sample point, when the
// request reaches memory, so it sees what memory holds then (a caller that
// reads several words of the line, or a structure the word stands for,
// reads them there); the call returns when the data is back in the core.
func (w *WG) AtomicLoad(a mem.Addr, read func()) {
	for !w.TryAtomicLoad(a, read) {
		w.mustHaveBlocked("AtomicLoad64")
	}
}

// Store64 writes v through the L1. In APU mode it goes on through the
// write-through L2 and is done (visible to every agent, counted by a
// system release) as a streamed write is (GPU.memAck): at the coherent
// directory's ack on a node behind one, else once it lands in memory; in
// dGPU mode it stays in a dirty L2 line until a system release. The
// work-group does not wait.
func (w *WG) Store64(a mem.Addr, v uint64) {
	for !w.TryStore64(a, v) {
		w.mustHaveBlocked("Store64")
	}
}

// storeL1 updates the work-group's L1 copy of a's line, if it holds one.
func (w *WG) storeL1(a mem.Addr, v uint64) {
	l := mem.Line(a)
	if cl := w.cu.l1.get(l); cl != nil {
		binary.LittleEndian.PutUint64(cl.data[a-l:], v)
		cl.stored |= 0xff << (a - l)
		if cl.skipper != nil {
			cl.skipper.Nudge()
		}
	}
}

// storeBeyondL1 writes v into a dirty L2 line (dGPU) or to memory through
// the write-through L2 (APU).
func (w *WG) storeBeyondL1(a mem.Addr, v uint64) {
	l := mem.Line(a)
	off := a - l
	if w.g.memSide(a) {
		// Behind a memory-side L2 the store is visible to all once it
		// reaches the L2 (write-allocate: its line is brought in).
		w.g.touch(l, CU)
		w.storeAt(a, v, w.g.e.Now()+w.g.hitLat)
		return
	}
	if w.g.l2 != nil {
		cl := w.g.l2.get(l)
		if cl == nil {
			cl = w.g.l2.fill(l, w.g.mem, w.g.mem)
		}
		binary.LittleEndian.PutUint64(cl.data[off:], v)
		w.g.l2.write(l, cl, off, 0xff)
		return
	}
	w.storeToMem(a, v)
}

// storeToMem sends a store past the L2 toward memory, where it is done at
// the directory's ack or its landing (GPU.farStore; a system release waits
// for it).
func (w *WG) storeToMem(a mem.Addr, v uint64) { w.storeAt(a, v, w.g.farStore(a, 8)) }

// storeAt sends a store that lands at at, where every agent sees it (a
// system release waits for it).
func (w *WG) storeAt(a mem.Addr, v uint64, at sim.Time) {
	w.storesAt = max(w.storesAt, at)
	w.g.landAt(a, v, at)
}

// landAt lands a store of v at a at time at, where every agent sees it
// (the event memStore; a work-group's or a CP's store past the L2).
func (g *GPU) landAt(a mem.Addr, v uint64, at sim.Time) {
	s, ok := g.stores.Get()
	if !ok {
		s = &memStore{g: g}
	}
	s.a, s.v = a, v
	g.e.AtH(at, s, 0)
}

// memStore is a store on its way to memory: the event that lands it. The
// GPU reuses them (GPU.stores), so a store allocates nothing.
type memStore struct {
	g *GPU
	a mem.Addr
	v uint64
}

// Handle lands the store.
func (s *memStore) Handle(uint64) {
	g, a, v := s.g, s.a, s.v
	g.stores.Put(s)
	g.mem.Store64(a, v)
}

// StoresAt returns when the last store the work-group has issued so far
// reaches memory (what a system release waits for): a posted write it
// issues now leaves the GPU behind those stores (model/verbs
// QP.BeginFlushPPB).
func (w *WG) StoresAt() sim.Time { return w.storesAt }

// Release makes the work-group's earlier stores visible at scope s.
func (w *WG) Release(s Scope) {
	for !w.TryRelease(s) {
		w.mustHaveBlocked("Release")
	}
}

// Acquire makes later loads observe values released at scope s: device and
// system scope invalidate the CU's L1; in dGPU mode system scope also
// invalidates the L2's copies (behind a memory-side L2, those of host
// memory only: the NIC's writes to the GPU's memory update the L2), so
// NIC-written data is seen.
func (w *WG) Acquire(s Scope) {
	for !w.tryAcquire(s) {
		w.mustHaveBlocked("Acquire")
	}
}

// PollUntil spins on the word at a until cond holds and returns its value.
// With acquire set, each poll is a system-scope acquire followed by a load
// (the correct pattern for NIC-written flags); without it, polls hit the L1
// and may never see the new value, exactly as on the hardware. Iterations
// that would see no change are not simulated one by one: the work-group
// sleeps until the line is written, then polls again.
func (w *WG) PollUntil(a mem.Addr, acquire bool, what string, cond func(uint64) bool) uint64 {
	if w.Proc.CanRunSteps() {
		// A coroutine body lends its process to the poll (sim.Proc.RunSteps):
		// one switch there and back instead of two per acquire, load and wait.
		st := pollSteps{w: w, a: a, acquire: acquire, what: what, cond: cond}
		w.Proc.RunSteps(&st)
		return st.v
	}
	for {
		if v, ok := w.TryPollUntil(a, acquire, what, cond); ok {
			return v
		}
		w.mustHaveBlocked("PollUntil")
	}
}

// pollSteps is PollUntil as a sim.Stepper (TryPollUntil until it holds).
type pollSteps struct {
	w       *WG
	a       mem.Addr
	acquire bool
	what    string
	cond    func(uint64) bool
	v       uint64
}

// Step implements sim.Stepper.
func (s *pollSteps) Step(*sim.Proc) bool {
	v, ok := s.w.TryPollUntil(s.a, s.acquire, s.what, s.cond)
	s.v = v
	return ok
}
