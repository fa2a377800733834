package workload

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// jacobiShmemInit brings the node's device runtime up with one queue per
// work-group of the persistent kernel and allocates the node's region and
// the halo edge counters in the symmetric heap.
func (jn *jacobiNode) jacobiShmemInit() (*shmem.Device, mem.Addr, error) {
	rt, ok := strategy.Get[*shmem.Runtime](jn.nd)
	if !ok {
		return nil, 0, fmt.Errorf("%s provides no device shmem runtime", jn.nd.Strategy)
	}
	dev, err := rt.Init(jn.persistentWGs())
	if err != nil {
		return nil, 0, err
	}
	base, err := dev.MallocPayload(jn.l.total) // the layout marks its control words
	if err == nil {
		jn.counters, err = dev.Malloc(uint64(jn.j.Iters) * 4 * mem.LineSize)
	}
	if err != nil {
		dev.Finalize()
	}
	return dev, base, err
}

// deviceShmem is the intra-kernel implementation (the dissertation's ComP-Net chapter): one
// persistent kernel; each work-group owns a tile. Before iteration t it
// waits (wait_until) for the global residual of t−1 — which every
// work-group contributed to, so it is also the grid barrier — and for
// the halos its tile touches; after its tile it packs its part of the
// edges and counts itself on each edge with a device-scope atomic; the
// edge's last work-group puts the whole halo slot (values, then the
// sequence word) into the neighbour's receive slot. The work-group that
// folds the last partial residual into the accumulator is elected: it
// runs the dissemination max over puts and wait_until and publishes the
// global residual. Edge work-groups communicate while interior ones
// compute: the overlap is automatic.
func (jn *jacobiNode) deviceShmem(dev *shmem.Device) error {
	defer dev.Finalize()
	l := jn.l
	ts := tiles(l.ly, l.lx, jn.persistentWGs())
	var edgeWGs [4]uint64
	for _, r := range ts {
		for d := range 4 {
			if _, _, ok := l.edgeRange(r, d); ok {
				edgeWGs[d]++
			}
		}
	}
	errs := make([]error, len(ts))
	k := gpu.Kernel{Name: "jacobi", WGs: len(ts), WGSize: jn.j.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = jn.shmemTile(wg, dev, ts, edgeWGs)
	}}
	if err := dev.Cooperative(k); err != nil {
		return err
	}
	jn.nd.Stream.Wait(jn.nd.Stream.Launch(k))
	jn.readGlobals()
	return errors.Join(errs...)
}

// tileComm is what the persistent kernel needs from a device-side
// communication library: a non-blocking put of local bytes to an offset of
// a peer's region (on one of the library's queues: halo direction d uses
// queue d, residual round k queue 4+k), a wait until a local word compares
// to a value, and the work-group's end of use.
type tileComm interface {
	put(wg *gpu.WG, queue int, remote uint64, src mem.Addr, n uint64, pe int) error
	waitUntil(wg *gpu.WG, a mem.Addr, cmp shmem.Cmp, v uint64) error
	done(wg *gpu.WG) error
}

// shmemComm is tileComm over an OpenSHMEM context (symmetric heap: the
// region sits at the same address on every node).
type shmemComm struct {
	ctx  *shmem.Ctx
	base mem.Addr
}

func (c shmemComm) put(_ *gpu.WG, _ int, remote uint64, src mem.Addr, n uint64, pe int) error {
	return c.ctx.PutmemNBI(c.base+mem.Addr(remote), src, n, pe)
}

func (c shmemComm) waitUntil(_ *gpu.WG, a mem.Addr, cmp shmem.Cmp, v uint64) error {
	_, err := c.ctx.WaitUntil(a, 8, cmp, v)
	return err
}

func (c shmemComm) done(*gpu.WG) error { return c.ctx.Destroy() }

// shmemTile is one work-group's whole run over the device OpenSHMEM API.
func (jn *jacobiNode) shmemTile(wg *gpu.WG, dev *shmem.Device, ts []rect, edgeWGs [4]uint64) error {
	ctx, err := dev.CtxCreate(wg)
	if err != nil {
		return err
	}
	return jn.persistentTile(wg, shmemComm{ctx, jn.base}, ts, edgeWGs)
}

// persistentTile is one work-group's whole run of the intra-kernel
// implementations (see deviceShmem).
func (jn *jacobiNode) persistentTile(wg *gpu.WG, c tileComm, ts []rect, edgeWGs [4]uint64) error {
	l := jn.l
	r := ts[wg.ID]
	for t := range jn.j.Iters {
		if t > 0 {
			if err := c.waitUntil(wg, l.ctrlAddr(jn.base, t-1, globalLine)+8, shmem.CmpNE, 0); err != nil {
				return err
			}
			for d := range 4 {
				if _, _, ok := l.edgeRange(r, d); ok && l.neighbour(d) >= 0 {
					if err := c.waitUntil(wg, jn.seqAddr(l.recv[t%2][d], d), shmem.CmpEQ, uint64(t+1)); err != nil {
						return err
					}
				}
			}
		}
		count := jn.sweepTile(wg, t, r)
		for d := range 4 {
			if _, _, ok := l.edgeRange(r, d); !ok || l.neighbour(d) < 0 {
				continue
			}
			if atomicInc(wg, jn.counters+mem.Addr((t*4+d)*mem.LineSize)) == edgeWGs[d] {
				p := jn.haloPut(t+1, d)
				if err := c.put(wg, d, p.RemoteOffset, p.Src, p.Length, p.Target); err != nil {
					return err
				}
			}
		}
		if count == uint64(len(ts)) {
			if err := jn.shmemResidual(wg, c, t); err != nil {
				return err
			}
		}
	}
	return c.done(wg)
}

// atomicInc is a device-scope atomic increment of the word at a (one L2
// round trip); it returns the new value.
func atomicInc(wg *gpu.WG, a mem.Addr) uint64 {
	spec := wg.GPU().Spec()
	wg.Sleep(spec.Cycles(spec.L2Cycles))
	m := wg.Mem()
	v := m.Load64(a) + 1
	m.Store64(a, v)
	return v
}

// shmemResidual is the elected work-group's dissemination max of
// iteration t (round k: put the value so far to rank+2^k, wait until the
// value of rank−2^k arrived) and the publication of the result.
func (jn *jacobiNode) shmemResidual(wg *gpu.WG, c tileComm, t int) error {
	l, m := jn.l, wg.Mem()
	wg.Sleep(wg.GPU().Spec().Cycles(wg.GPU().Spec().L2Cycles)) // read the final accumulator
	v := bitsf32(m.Load64(l.ctrlAddr(jn.base, t, accLine)))
	for k := range l.rounds {
		out, in := l.outSlot(jn.base, t, k), l.inSlot(jn.base, t, k)
		wg.Store64(out, f32bits(v))
		wg.Store64(out+8, 1)
		if err := c.put(wg, 4+k, jn.slotOffset(in), out, 16, mod(l.rankOf()+(1<<k), l.n)); err != nil {
			return err
		}
		if err := c.waitUntil(wg, in+8, shmem.CmpNE, 0); err != nil {
			return err
		}
		v = max(v, bitsf32(m.Load64(in)))
	}
	jn.publish(wg, t, v)
	return nil
}
