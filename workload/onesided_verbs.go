package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The device-verbs implementations of the target-applied operations
// (Reduce and Accumulate), written against the device-verbs capability
// (strategy.DeviceVerbs: GPUrdma's GPU-side GPI): GPU work-groups post RDMA
// writes themselves (WQE build, system fence, doorbell) into a GPI segment
// of the target, each write a slice followed by its 8-byte sequence word
// (the RC transport places a write's bytes in order, so the word lands
// last, as in the device-verbs ring allreduce); the target's work-groups
// poll the words with system-scope acquires (NIC writes may leave a stale
// L2 copy unless the L2 is memory-side, gpu.l2_memory_side) and apply the operation on the GPU. Work-group w of every node
// uses GPI queue w, so the slices travel on separate QPs.

// verbsGroups is the work-group count of a device-verbs Reduce or
// Accumulate over nb bytes on a GPU of cus compute units: one per 16 KiB,
// at most two per CU, at least one (shmemGroups' rule).
func verbsGroups(cus int, nb uint64) int {
	return max(1, min(int((nb+16<<10-1)/(16<<10)), 2*cus))
}

// verbsSlots is the segment layout of the device-verbs Reduce and
// Accumulate: slots of a vector of size bytes, each split into the groups
// work-groups' slices with a sequence word after each slice.
type verbsSlots struct {
	size   uint64
	groups int
}

// bytes is one slot's size: the vector plus a word per slice.
func (l verbsSlots) bytes() uint64 { return l.size + 8*uint64(l.groups) }

// slice returns the offset inside a slot of slice w and its data bytes
// (its word follows at off+n).
func (l verbsSlots) slice(w int) (off, n uint64) {
	lo, hi := slice(w, l.groups, l.size)
	return lo + 8*uint64(w), hi - lo
}

// markWords marks the slot at a's sequence words as control words (kept
// by payload-free memory, like every flag).
func (l verbsSlots) markWords(m *mem.Memory, a mem.Addr) {
	for w := range l.groups {
		off, n := l.slice(w)
		m.MarkControl(a+mem.Addr(off+n), 8)
	}
}

// fill writes the vector v(j) (float64 element j) into the slot at a,
// each slice followed by the word seq.
func (l verbsSlots) fill(m *mem.Memory, a mem.Addr, seq uint64, v func(j int) float64) {
	for w := range l.groups {
		lo, _ := slice(w, l.groups, l.size)
		off, n := l.slice(w)
		fillF64(m, a+mem.Addr(off), n, func(j int) float64 { return v(int(lo/8) + j) })
		m.Store64(a+mem.Addr(off+n), seq)
	}
}

// verbsWorld is the run-wide GPI world of the device-verbs Reduce and
// Accumulate: segment 0 of every rank is size bytes of GPU memory, and
// queue w (w < groups) connects every pair of ranks (gaspi_wait drains a
// queue to every peer; the operations run on a few nodes).
type verbsWorld struct{ sharedWorld }

func (v *verbsWorld) get(nd *strategy.Node, size uint64, groups int) (*gpi.World, error) {
	return v.world(nd, gpuSides(nd.Size), 1, func(w *gpi.World) error {
		for r := range nd.Size {
			w.SegmentCreate(0, r, size)
		}
		for q := range groups {
			if err := w.Connect(q); err != nil {
				return err
			}
		}
		return nil
	})
}

// verbs is the device-verbs Reduce. Every node's segment holds a slot per
// node, a ready word per work-group and a word holding 1. The root's
// work-group w writes 1 into each sender's ready word w (the zero-length
// resource-ready sync), then waits for each sender's slice w in order and
// adds it into the root's vector; a sender's vector is its own slot (each
// slice followed by the word 1): its work-group w polls ready word w and
// writes slice w with its word into its slot at the root. Time runs from
// the root kernel's start to its last addition; every work-group drains
// its queue (gaspi_wait) before the kernel ends.
func (rd Reduce) verbs(nd *strategy.Node, vw *verbsWorld, result *mem.Addr, start, end *sim.Time) error {
	l := verbsSlots{size: uint64(rd.Size), groups: verbsGroups(nd.GPU.CUs, uint64(rd.Size))}
	n := nd.Size
	slots := uint64(n) * l.bytes()
	ready := slots                    // word w: the root's slot is ready (senders)
	one := ready + 8*uint64(l.groups) // a word holding 1, the ready writes' source
	w, err := vw.get(nd, one+8, l.groups)
	if err != nil {
		return err
	}
	me := nd.Rank
	seg := w.SegmentAddr(0, me)
	slot := func(p int) uint64 { return uint64(p) * l.bytes() }
	for p := range n {
		l.markWords(nd.Mem, seg+mem.Addr(slot(p)))
	}
	nd.Mem.MarkControl(seg+mem.Addr(ready), 8*l.groups+8)
	nd.Mem.Store64(seg+mem.Addr(one), 1)
	var vec mem.Addr
	if me == 0 {
		vec = nd.Mem.Alloc(nd.Pool, l.size, "reduce.vector")
		fillF64(nd.Mem, vec, l.size, func(j int) float64 { return reduceInput(0, j) })
		*result = vec
	} else {
		l.fill(nd.Mem, seg+mem.Addr(slot(me)), 1, func(j int) float64 { return reduceInput(me, j) })
	}
	dev := w.Device(me)
	errs := make([]error, l.groups)
	k := gpu.Kernel{Name: "reduce", WGs: l.groups, WGSize: rd.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = rd.verbsWG(wg, dev, me, n, l, seg, vec, slot, ready, one, start, end)
	}}
	nd.Stream.Wait(nd.Stream.Launch(k))
	return firstErr(errs)
}

func (rd Reduce) verbsWG(wg *gpu.WG, dev *gpi.Device, me, n int, l verbsSlots, seg, vec mem.Addr, slot func(int) uint64, ready, one uint64, start, end *sim.Time) error {
	q := wg.ID
	off, nb := l.slice(q)
	is1 := func(v uint64) bool { return v == 1 }
	readyWord := ready + 8*uint64(q)
	if me != 0 {
		wg.PollUntil(seg+mem.Addr(readyWord), true, "the root's ready word", is1)
		if err := dev.Write(wg, 0, slot(me)+off, 0, 0, slot(me)+off, nb+8, q); err != nil {
			return err
		}
		return dev.Wait(wg, q)
	}
	if q == 0 {
		*start = wg.Now()
	}
	for p := 1; p < n; p++ {
		if err := dev.Write(wg, 0, one, p, 0, readyWord, 8, q); err != nil {
			return err
		}
	}
	lo, _ := slice(q, l.groups, l.size)
	for p := 1; p < n; p++ {
		at := seg + mem.Addr(slot(p)+off)
		wg.PollUntil(at+mem.Addr(nb), true, "reduce slot arrival", is1)
		addSlice(wg, vec+mem.Addr(lo), at, nb)
	}
	wg.Release(gpu.Device)
	*end = max(*end, wg.Now())
	return dev.Wait(wg, q)
}

// verbs is the device-verbs Accumulate. The target's segment holds a slot
// per accumulate of an epoch (each slice followed by its sequence word)
// and the initiator's an ack word per work-group, then the initiator's
// sources — one slot-shaped buffer per accumulate, its words holding the
// accumulate's number — and the target's ack sources (word i holds i+1).
// The initiator's work-group w writes slice w of each accumulate with its
// word into the epoch's slot and, at the end of an epoch (Win_unlock),
// polls its ack word for the epoch's last; the target's work-group w polls
// each slot's word, adds the slice into the window at the accumulate's
// displacement and writes its ack back. Time runs from the initiator
// kernel's start to its last epoch's acks.
func (a Accumulate) verbs(nd *strategy.Node, vw *verbsWorld, ops []accOp, win uint64, window *mem.Addr, start, end *sim.Time) error {
	l := verbsSlots{size: a.maxSize(), groups: verbsGroups(nd.GPU.CUs, a.maxSize())}
	slots := uint64(a.PerEpoch) * l.bytes()     // slot k (target)
	acks := slots                               // ack word w (initiator)
	srcs := acks + 8*uint64(l.groups)           // accumulate i's source (initiator)
	ackSrc := srcs + uint64(len(ops))*l.bytes() // word i holds i+1 (target)
	w, err := vw.get(nd, ackSrc+8*uint64(len(ops)), l.groups)
	if err != nil {
		return err
	}
	seg := w.SegmentAddr(0, nd.Rank)
	for i, op := range ops {
		ls := verbsSlots{size: op.size, groups: l.groups}
		ls.markWords(nd.Mem, seg+mem.Addr(uint64(op.k)*l.bytes()))
		ls.markWords(nd.Mem, seg+mem.Addr(srcs+uint64(i)*l.bytes()))
	}
	nd.Mem.MarkControl(seg+mem.Addr(acks), 8*l.groups)
	nd.Mem.MarkControl(seg+mem.Addr(ackSrc), 8*len(ops))
	var wnd mem.Addr
	if nd.Rank == 1 {
		wnd = nd.Mem.Alloc(nd.Pool, win, "window")
		fillF64(nd.Mem, wnd, win, func(j int) float64 { return winInit(j) })
		*window = wnd
		for i := range ops {
			nd.Mem.Store64(seg+mem.Addr(ackSrc+8*uint64(i)), uint64(i+1))
		}
	} else {
		for i, op := range ops {
			ls := verbsSlots{size: op.size, groups: l.groups}
			src := seg + mem.Addr(srcs+uint64(i)*l.bytes())
			ls.fill(nd.Mem, src, uint64(i+1), func(j int) float64 { return accValue(i, j) })
		}
	}
	dev := w.Device(nd.Rank)
	errs := make([]error, l.groups)
	k := gpu.Kernel{Name: "accumulate", WGs: l.groups, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = a.verbsWG(wg, dev, nd.Rank, ops, l, seg, wnd, acks, srcs, ackSrc, start, end)
	}}
	nd.Stream.Wait(nd.Stream.Launch(k))
	return firstErr(errs)
}

func (a Accumulate) verbsWG(wg *gpu.WG, dev *gpi.Device, me int, ops []accOp, l verbsSlots, seg, wnd mem.Addr, acks, srcs, ackSrc uint64, start, end *sim.Time) error {
	q := wg.ID
	slot := func(k int) uint64 { return uint64(k) * l.bytes() }
	ackWord := acks + 8*uint64(q)
	if me == 0 {
		if q == 0 {
			*start = wg.Now()
		}
		for i, op := range ops {
			ls := verbsSlots{size: op.size, groups: l.groups}
			off, nb := ls.slice(q)
			src := srcs + uint64(i)*l.bytes()
			if err := dev.Write(wg, 0, src+off, 1, 0, slot(op.k)+off, nb+8, q); err != nil {
				return err
			}
			if op.k == a.PerEpoch-1 { // Win_unlock: the epoch's acks
				want := uint64(i + 1)
				wg.PollUntil(seg+mem.Addr(ackWord), true, "the epoch's acks", func(v uint64) bool { return v >= want })
			}
		}
		*end = max(*end, wg.Now())
		return dev.Wait(wg, q)
	}
	for i, op := range ops {
		ls := verbsSlots{size: op.size, groups: l.groups}
		off, nb := ls.slice(q)
		lo, _ := slice(q, l.groups, op.size)
		at := seg + mem.Addr(slot(op.k)+off)
		want := uint64(i + 1)
		wg.PollUntil(at+mem.Addr(nb), true, "accumulate arrival", func(v uint64) bool { return v == want })
		addSlice(wg, wnd+mem.Addr(op.off+lo), at, nb)
		wg.Release(gpu.System)
		if err := dev.Write(wg, 0, ackSrc+8*uint64(i), 0, 0, ackWord, 8, q); err != nil {
			return err
		}
	}
	if err := dev.Wait(wg, q); err != nil {
		return fmt.Errorf("accumulate: target queue %d: %w", q, err)
	}
	return nil
}
