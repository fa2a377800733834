package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The device-shmem implementations of the target-applied operations
// (Reduce and Accumulate): one-sided puts from inside a kernel into a
// staging area of the target's symmetric heap, each followed (after a
// fence) by a sequence word the target's work-groups wait_until on; the
// target's work-groups then apply the operation on the GPU. They are
// written against the device OpenSHMEM API (strategy.DeviceShmem), so every
// backend (GHN, ComP-Net, GIO) runs them.

// shmemGroups is the number of work-groups (and device queues) of a
// one-sided kernel over nb bytes: one per 16 KiB, at most two per CU, at
// least one (the multi-ring allreduce's rule).
func shmemGroups(nd *strategy.Node, nb uint64) int {
	return max(1, min(int((nb+16<<10-1)/(16<<10)), 2*nd.GPU.CUs))
}

// slice is work-group w's share [lo, hi) of the float64 elements of nb
// bytes split over groups.
func slice(w, groups int, nb uint64) (lo, hi uint64) {
	e := nb / 8
	return 8 * (uint64(w) * e / uint64(groups)), 8 * (uint64(w+1) * e / uint64(groups))
}

// addSlice adds nb bytes of float64 at src into dst on work-group wg: 4
// vector instructions per element per work-item and 24 bytes of traffic
// per element (accRange's costs).
func addSlice(wg *gpu.WG, dst, src mem.Addr, nb uint64) {
	if nb == 0 {
		return
	}
	elems := int(nb / 8)
	addF64(wg.Mem(), dst, src, nb)
	wg.VALU(4 * ((elems + wg.Size - 1) / wg.Size))
	wg.StreamOut(uint64(24*elems), uint64(8*elems)) // two reads and a write per element
}

// shmemDevice brings the node's device runtime up with groups queues.
func shmemDevice(nd *strategy.Node, groups int) (*shmem.Device, error) {
	rt, ok := strategy.Get[*shmem.Runtime](nd)
	if !ok {
		return nil, fmt.Errorf("%s provides no device shmem runtime", nd.Strategy)
	}
	return rt.Init(groups)
}

// runShmemKernel launches k cooperatively, waits for it and finalizes the
// device; the first work-group error wins.
func runShmemKernel(nd *strategy.Node, dev *shmem.Device, k gpu.Kernel, errs []error) error {
	if err := dev.Cooperative(k); err != nil {
		dev.Finalize()
		return err
	}
	nd.Stream.Wait(nd.Stream.Launch(k))
	dev.Finalize()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// shmem is the device-shmem Reduce: every node's vector lives in the
// symmetric heap. One kernel per node of W work-groups; work-group w of
// every node first meets the others in a barrier. The root's work-group w
// then tells each sender its staging slot is ready (the zero-length
// resource-ready sync as a put of a sequence word), waits for each
// sender's slice w in the order they arrive and adds it into its vector;
// a sender's work-group w waits for the ready word, puts slice w of its
// vector into its slot at the root, fences and puts the slot's arrival
// word. Time runs from the root's barrier exit to its last addition.
func (rd Reduce) shmem(nd *strategy.Node, result *mem.Addr, start, end *sim.Time) error {
	size := uint64(rd.Size)
	w := shmemGroups(nd, size)
	dev, err := shmemDevice(nd, w)
	if err != nil {
		return err
	}
	heap := func(n uint64) (mem.Addr, error) { return dev.Malloc(n) }
	vec, err := heap(size)
	if err != nil {
		dev.Finalize()
		return err
	}
	stage, err1 := heap(uint64(nd.Size) * size)  // slot p: sender p's vector (root)
	arrived, err2 := heap(uint64(nd.Size*w) * 8) // word (p, w): slice w of sender p landed (root)
	ready, err3 := heap(uint64(w) * 8)           // word w: the root's slot is ready (senders)
	if err := firstErr([]error{err1, err2, err3}); err != nil {
		dev.Finalize()
		return err
	}
	fillF64(nd.Mem, vec, size, func(j int) float64 { return reduceInput(nd.Rank, j) })
	if nd.Rank == 0 {
		*result = vec
	}
	errs := make([]error, w)
	k := gpu.Kernel{Name: "reduce", WGs: w, WGSize: rd.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = rd.shmemWG(wg, dev, vec, stage, arrived, ready, start, end)
	}}
	return runShmemKernel(nd, dev, k, errs)
}

func (rd Reduce) shmemWG(wg *gpu.WG, dev *shmem.Device, vec, stage, arrived, ready mem.Addr, start, end *sim.Time) error {
	ctx, err := dev.CtxCreate(wg)
	if err != nil {
		return err
	}
	size := uint64(rd.Size)
	w, groups, n, me := wg.ID, wg.Groups(), dev.NPEs(), dev.PE()
	lo, hi := slice(w, groups, size)
	if err := ctx.Barrier(); err != nil {
		return err
	}
	if me != 0 {
		if _, err := ctx.WaitUntil(ready+mem.Addr(8*w), 8, shmem.CmpEQ, 1); err != nil {
			return err
		}
		slot := stage + mem.Addr(uint64(me)*size)
		if hi > lo {
			if err := ctx.PutmemNBI(slot+mem.Addr(lo), vec+mem.Addr(lo), hi-lo, 0); err != nil {
				return err
			}
		}
		if err := ctx.Fence(); err != nil {
			return err
		}
		if err := ctx.P(arrived+mem.Addr(8*(me*groups+w)), 1, 8, 0); err != nil {
			return err
		}
		return ctx.Destroy()
	}
	if w == 0 {
		*start = wg.Now()
	}
	for p := 1; p < n; p++ {
		if err := ctx.P(ready+mem.Addr(8*w), 1, 8, p); err != nil {
			return err
		}
	}
	for p := 1; p < n; p++ {
		if _, err := ctx.WaitUntil(arrived+mem.Addr(8*(p*groups+w)), 8, shmem.CmpEQ, 1); err != nil {
			return err
		}
		slot := stage + mem.Addr(uint64(p)*size)
		addSlice(wg, vec+mem.Addr(lo), slot+mem.Addr(lo), hi-lo)
	}
	wg.Release(gpu.Device)
	*end = max(*end, wg.Now())
	return ctx.Destroy()
}

// shmem is the device-shmem Accumulate: the window and the staging slots
// live in the target's symmetric heap. Work-group w of the initiator puts
// slice w of each accumulate into the epoch's slot for it, fences, and
// puts the slot's sequence word; at the end of an epoch (Win_unlock) it
// waits for the epoch's acks. Work-group w of the target waits for each
// slot's word, adds slice w into the window at the accumulate's
// displacement and puts its ack (the sequence number) back. Time runs from
// the initiator's barrier exit to its last epoch's acks.
func (a Accumulate) shmem(nd *strategy.Node, ops []accOp, win uint64, window *mem.Addr, start, end *sim.Time) error {
	maxSize := a.maxSize()
	w := shmemGroups(nd, maxSize)
	dev, err := shmemDevice(nd, w)
	if err != nil {
		return err
	}
	heap := func(n uint64) (mem.Addr, error) { return dev.Malloc(n) }
	wnd, err0 := heap(win)
	stage, err1 := heap(uint64(a.PerEpoch) * maxSize) // slot k: the epoch's k-th accumulate (target)
	seq, err2 := heap(uint64(a.PerEpoch*w) * 8)       // word (k, w): slice w of slot k holds accumulate seq-1 (target)
	ack, err3 := heap(uint64(w) * 8)                  // word w: accumulates applied on slice w (initiator)
	srcs, err4 := heap(uint64(len(ops)) * maxSize)    // the initiator's data, one buffer per accumulate
	if err := firstErr([]error{err0, err1, err2, err3, err4}); err != nil {
		dev.Finalize()
		return err
	}
	if nd.Rank == 1 {
		fillF64(nd.Mem, wnd, win, func(j int) float64 { return winInit(j) })
		*window = wnd
	} else {
		for i, op := range ops {
			fillF64(nd.Mem, srcs+mem.Addr(uint64(i)*maxSize), op.size, func(j int) float64 { return accValue(i, j) })
		}
	}
	errs := make([]error, w)
	k := gpu.Kernel{Name: "accumulate", WGs: w, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = a.shmemWG(wg, dev, ops, maxSize, wnd, stage, seq, ack, srcs, start, end)
	}}
	return runShmemKernel(nd, dev, k, errs)
}

func (a Accumulate) shmemWG(wg *gpu.WG, dev *shmem.Device, ops []accOp, maxSize uint64, wnd, stage, seq, ack, srcs mem.Addr, start, end *sim.Time) error {
	ctx, err := dev.CtxCreate(wg)
	if err != nil {
		return err
	}
	w, groups := wg.ID, wg.Groups()
	if err := ctx.Barrier(); err != nil {
		return err
	}
	word := func(k int) mem.Addr { return seq + mem.Addr(8*(k*groups+w)) }
	if dev.PE() == 0 {
		if w == 0 {
			*start = wg.Now()
		}
		for i, op := range ops {
			lo, hi := slice(w, groups, op.size)
			slot := stage + mem.Addr(uint64(op.k)*maxSize)
			if hi > lo {
				if err := ctx.PutmemNBI(slot+mem.Addr(lo), srcs+mem.Addr(uint64(i)*maxSize+lo), hi-lo, 1); err != nil {
					return err
				}
			}
			if err := ctx.Fence(); err != nil {
				return err
			}
			if err := ctx.P(word(op.k), uint64(i+1), 8, 1); err != nil {
				return err
			}
			if op.k == a.PerEpoch-1 { // Win_unlock: the epoch's acks
				if _, err := ctx.WaitUntil(ack+mem.Addr(8*w), 8, shmem.CmpGE, uint64(i+1)); err != nil {
					return err
				}
			}
		}
		*end = max(*end, wg.Now())
		return ctx.Destroy()
	}
	for i, op := range ops {
		if _, err := ctx.WaitUntil(word(op.k), 8, shmem.CmpEQ, uint64(i+1)); err != nil {
			return err
		}
		lo, hi := slice(w, groups, op.size)
		slot := stage + mem.Addr(uint64(op.k)*maxSize)
		addSlice(wg, wnd+mem.Addr(op.off+lo), slot+mem.Addr(lo), hi-lo)
		wg.Release(gpu.System)
		if err := ctx.P(ack+mem.Addr(8*w), uint64(i+1), 8, 0); err != nil {
			return err
		}
	}
	return ctx.Destroy()
}
