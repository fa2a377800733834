package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// shmemChunk is the largest single put of the multi-ring allreduce
// ([DEFAULT] allreduce.chunk = 64 KiB, the dissertation's ComP-Net chapter): a step's slice
// goes as several non-blocking puts, the last carrying the sequence word.
const shmemChunk = 64 << 10

// Rings returns the number of rings (work-groups) of the ComP-Net
// multi-ring allreduce on n nodes (the dissertation's ComP-Net chapter): WGs when set, else
// [DEFAULT] min(2 × CUs, ceil(size / (n × 16 KiB))), at least 1.
func (a Allreduce) Rings(n, cus int) int {
	if a.WGs > 0 {
		return a.WGs
	}
	per := int64(n) * 16 * 1024
	w := int((int64(a.Size) + per - 1) / per)
	return max(1, min(w, 2*cus))
}

// shmemInit brings the node's device runtime up with one queue per ring
// and allocates the vector in the symmetric heap.
func (a Allreduce) shmemInit(nd *strategy.Node, l *ringLayout) (*shmem.Device, mem.Addr, error) {
	rt, ok := strategy.Get[*shmem.Runtime](nd)
	if !ok {
		return nil, 0, fmt.Errorf("%s provides no device shmem runtime", nd.Strategy)
	}
	dev, err := rt.Init(l.w)
	if err != nil {
		return nil, 0, err
	}
	base, err := dev.MallocPayload(l.totalSize)
	if err != nil {
		dev.Finalize()
	}
	return dev, base, err
}

// multiRing is the ComP-Net multi-ring intra-kernel allreduce (the dissertation
// §4.4): one kernel of W work-groups; work-group w runs the ring of §4.1
// over slice w of every chunk with work-group w of the neighbours. Per
// step it puts its slice (with the trailing sequence word) to the right
// through the device API, waits with wait_until for the left neighbour's
// slice, and reduces it (reduce-scatter) or keeps it (allgather).
func (a Allreduce) multiRing(nd *strategy.Node, dev *shmem.Device, l *ringLayout, base mem.Addr) (shmem.Report, error) {
	steps := 2 * (l.n - 1)
	i := nd.Rank
	errs := make([]error, l.w)
	k := gpu.Kernel{Name: "allreduce", WGs: l.w, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = a.ringWG(wg, dev, l, base, i, steps)
	}}
	if err := dev.Cooperative(k); err != nil {
		dev.Finalize()
		return shmem.Report{}, err
	}
	nd.Stream.Wait(nd.Stream.Launch(k))
	rep := dev.Finalize()
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (a Allreduce) ringWG(wg *gpu.WG, dev *shmem.Device, l *ringLayout, base mem.Addr, i, steps int) error {
	s := wg.ID
	ctx, err := dev.CtxCreate(wg)
	if err != nil {
		return err
	}
	send := func(st int) error {
		p := l.put(base, i, st, s)
		dst := base + mem.Addr(p.RemoteOffset)
		for off := uint64(0); off < p.Length; off += shmemChunk {
			n := min(shmemChunk, p.Length-off)
			if err := ctx.PutmemNBI(dst+mem.Addr(off), p.Src+mem.Addr(off), n, p.Target); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(0); err != nil {
		return err
	}
	for st := range steps {
		if _, err := ctx.WaitUntil(l.flagAddr(base, i, st, s), 8, shmem.CmpEQ, l.expect(st)); err != nil {
			return err
		}
		l.stepWork(wg, base, i, st, s, a.WGSize)
		if st+1 < steps {
			if err := send(st + 1); err != nil {
				return err
			}
		}
	}
	return ctx.Destroy()
}
