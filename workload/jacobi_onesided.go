package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
)

// haloPut is the one-sided put of state s's edge on side d into the
// neighbour's receive slot (values and sequence word; in-order delivery
// writes the word last).
func (jn *jacobiNode) haloPut(s, d int) rdma.Put {
	l := jn.l
	p := s % 2
	return rdma.Put{Src: jn.base + mem.Addr(l.send[p][d]), Length: l.slotBytes(d), Target: l.neighbour(d),
		RemoteOffset: l.recv[p][opposite(d)]}
}

// slotOffset is the offset of a residual line inside the exposed region.
func (jn *jacobiNode) slotOffset(a mem.Addr) uint64 { return uint64(a - jn.base) }

// gds is the stream-triggered implementation: the host pre-posts every
// put of an iteration (halos, and the residual to every peer: a static
// all-to-all, since the CP cannot combine values between rounds) and
// enqueues, per iteration, waits on the arrival words of the previous
// state's halos and residuals, the kernel, and the NIC triggers the CP
// rings after it (to a GPU of the same node, a peer copy instead). Work-group 0 of kernel t reduces iteration t−1's
// residual from the N arrived values; a last one-work-group kernel
// reduces the final iteration's. The host runs ahead: iteration t's posts
// and enqueues overlap earlier iterations on the GPU.
func (jn *jacobiNode) gds() error {
	l, st := jn.l, jn.nd.Stream
	jn.nd.RDMA.Expose(jn.base, l.total)
	me := l.rankOf()
	for t := range jn.j.Iters {
		var puts []rdma.Put
		for d := range 4 {
			if l.neighbour(d) >= 0 {
				puts = append(puts, jn.haloPut(t+1, d))
			}
		}
		acc := l.ctrlAddr(jn.base, t, accLine)
		for p := range l.n {
			if p != me {
				puts = append(puts, rdma.Put{Src: acc, Length: 16, Target: p,
					RemoteOffset: jn.slotOffset(l.inSlot(jn.base, t, me))})
			}
		}
		// Sends to GPUs of this node go by the copy engines over the
		// node's GPU fabric, after the NIC triggers.
		ids, copies := gdsSplit(jn.nd, jn.bases, puts)
		var then func(wg *gpu.WG)
		if t > 0 {
			jn.gdsWaitArrivals(t)
			then = func(wg *gpu.WG) { jn.reduceAllToAll(wg, t-1) }
		}
		st.Launch(jn.sweepKernelThen("jacobi", t, []rect{{0, l.ly, 0, l.lx}}, then))
		gdsSend(jn.nd, ids, copies)
	}
	last := jn.j.Iters - 1
	jn.gdsWaitResiduals(last)
	st.Launch(gpu.Kernel{Name: "residual", WGs: 1, WGSize: jn.j.WGSize, Body: func(wg *gpu.WG) { jn.reduceAllToAll(wg, last) }})
	st.Synchronize()
	jn.readGlobals()
	return nil
}

// gdsWaitArrivals enqueues the CP waits for state t's halos and iteration
// t−1's residuals.
func (jn *jacobiNode) gdsWaitArrivals(t int) {
	l := jn.l
	for d := range 4 {
		if l.neighbour(d) < 0 {
			continue
		}
		want := uint64(t + 1)
		jn.nd.Stream.WaitValue(jn.seqAddr(l.recv[t%2][d], d), fmt.Sprintf("halo %d of state %d", d, t),
			func(v uint64) bool { return v == want })
	}
	jn.gdsWaitResiduals(t - 1)
}

func (jn *jacobiNode) gdsWaitResiduals(t int) {
	l := jn.l
	for p := range l.n {
		if p != l.rankOf() {
			jn.nd.Stream.WaitValue(l.inSlot(jn.base, t, p)+8, fmt.Sprintf("residual of node %d, iteration %d", p, t),
				func(v uint64) bool { return v != 0 })
		}
	}
}

// reduceAllToAll is one work-group taking the max of the node's own and
// the N−1 arrived residuals of iteration t (one wavefront loads them in
// parallel: one memory latency) and publishing it in the global line.
func (jn *jacobiNode) reduceAllToAll(wg *gpu.WG, t int) {
	l, m := jn.l, wg.Mem()
	wg.Sleep(wg.GPU().MissLatency())
	v := bitsf32(m.Load64(l.ctrlAddr(jn.base, t, accLine)))
	for p := range l.n {
		if p != l.rankOf() {
			v = max(v, bitsf32(m.Load64(l.inSlot(jn.base, t, p))))
		}
	}
	wg.VALU(l.n)
	jn.publish(wg, t, v)
}

// publish writes iteration t's global residual and its set flag, released
// at system scope so pollers and the host see it.
func (jn *jacobiNode) publish(wg *gpu.WG, t int, v float32) {
	g := jn.l.ctrlAddr(jn.base, t, globalLine)
	wg.Store64(g, f32bits(v))
	wg.Store64(g+8, 1)
	wg.Release(gpu.System)
}

// readGlobals records each iteration's published global residual for the
// result (bookkeeping after the timed run, not simulated).
func (jn *jacobiNode) readGlobals() {
	for t := range jn.j.Iters {
		jn.res[t] = bitsf32(jn.m().Load64(jn.l.ctrlAddr(jn.base, t, globalLine)))
	}
}

// Tags of the triggered implementation: per iteration four halo tags and
// one per residual round.
func (jn *jacobiNode) haloTag(t, d int) uint64 { return uint64(1 + t*(4+jn.l.rounds) + d) }
func (jn *jacobiNode) roundTag(t, k int) uint64 {
	return uint64(1 + t*(4+jn.l.rounds) + 4 + k)
}

// gputn is the triggered implementation: one persistent kernel for the
// whole run. Each work-group owns a tile; before iteration t it polls the
// halo words of the sides its tile touches and the global residual of t−1
// (which every work-group contributed to, so it is also the grid barrier);
// after its tile it releases at system scope and triggers the puts of the
// edges it packed (a halo put fires when every work-group on that edge has
// triggered: threshold = their number), then folds its residual into the
// accumulator. The last work-group to do so is elected: it runs the
// dissemination max over triggered puts (store value, release, trigger,
// poll the peer's) and publishes the global residual. The host registers
// every put while the kernel runs (relaxed synchronization).
func (jn *jacobiNode) gputn() error {
	l := jn.l
	jn.nd.RDMA.Expose(jn.base, l.total)
	trig := jn.nd.TN.TriggerAddr()
	ts := tiles(l.ly, l.lx, jn.persistentWGs())
	edgeWGs := [4]uint64{}
	for _, r := range ts {
		for d := range 4 {
			if _, _, ok := l.edgeRange(r, d); ok {
				edgeWGs[d]++
			}
		}
	}
	run := jn.nd.Stream.Launch(gpu.Kernel{Name: "jacobi", WGs: len(ts), WGSize: jn.j.WGSize, Body: func(wg *gpu.WG) {
		for t := range jn.j.Iters {
			jn.tileIteration(wg, trig, ts, t)
		}
	}})
	for t := range jn.j.Iters {
		for d := range 4 {
			if l.neighbour(d) >= 0 {
				p := jn.haloPut(t+1, d)
				jn.nd.TN.TrigPut(jn.haloTag(t, d), gputn.Put{Src: p.Src, Length: p.Length, Target: p.Target,
					PT: jn.nd.RDMA.PT(), RemoteOffset: p.RemoteOffset}, edgeWGs[d])
			}
		}
		for k := range l.rounds {
			jn.nd.TN.TrigPut(jn.roundTag(t, k), gputn.Put{Src: l.outSlot(jn.base, t, k), Length: 16,
				Target: mod(l.rankOf()+(1<<k), l.n), PT: jn.nd.RDMA.PT(),
				RemoteOffset: jn.slotOffset(l.inSlot(jn.base, t, k))}, 1)
		}
	}
	jn.nd.Stream.Wait(run)
	jn.readGlobals()
	return nil
}

// persistentWGs is the persistent kernel's work-group count: one per
// WGSize points up to MaxWGs (0: two per CU), and never more than fit
// resident at once (they wait on each other every iteration).
func (jn *jacobiNode) persistentWGs() int {
	w := jn.wgCount(jn.l.ly * jn.l.lx)
	k := gpu.Kernel{Name: "jacobi", WGs: 1, WGSize: jn.j.WGSize}
	return max(1, min(w, jn.nd.Stream.GPU().MaxResident(k)))
}

// tileIteration is one work-group's iteration t of the persistent kernel.
func (jn *jacobiNode) tileIteration(wg *gpu.WG, trig gputn.TrigAddr, ts []rect, t int) {
	l := jn.l
	r := ts[wg.ID]
	if t > 0 {
		g := l.ctrlAddr(jn.base, t-1, globalLine)
		wg.PollUntil(g+8, true, fmt.Sprintf("global residual of iteration %d", t-1), func(v uint64) bool { return v != 0 })
		for d := range 4 {
			if _, _, ok := l.edgeRange(r, d); ok && l.neighbour(d) >= 0 {
				want := uint64(t + 1)
				wg.PollUntil(jn.seqAddr(l.recv[t%2][d], d), true, fmt.Sprintf("halo %d of state %d", d, t),
					func(v uint64) bool { return v == want })
			}
		}
	}
	local := l.sweep(wg.Mem(), jn.base, t, r)
	wg.VALU(stencilVALU * ((r.cells() + wg.Size - 1) / wg.Size))
	wg.StreamOut(uint64(stencilBytes*r.cells()), uint64(4*r.cells())) // the new values written
	for d := range 4 {
		lo, hi, ok := l.edgeRange(r, d)
		if !ok || l.neighbour(d) < 0 {
			continue
		}
		l.pack(wg.Mem(), jn.base, t+1, d, lo, hi)
		wg.StreamOut(uint64(packBytes*(hi-lo)), uint64(4*(hi-lo))) // half of it written
		wg.Store64(jn.seqAddr(l.send[(t+1)%2][d], d), uint64(t+2))
		gputn.TriggerWorkGroup(wg, trig, jn.haloTag(t, d))
	}
	if atomicMaxCount(wg, l.ctrlAddr(jn.base, t, accLine), local) == uint64(len(ts)) {
		jn.electedAllreduce(wg, trig, t)
	}
}

// electedAllreduce is the dissemination max of iteration t over triggered
// puts, by the elected work-group, then the publication of the result.
func (jn *jacobiNode) electedAllreduce(wg *gpu.WG, trig gputn.TrigAddr, t int) {
	l, m := jn.l, wg.Mem()
	wg.Sleep(wg.GPU().Spec().Cycles(wg.GPU().Spec().L2Cycles)) // read the final accumulator
	v := bitsf32(m.Load64(l.ctrlAddr(jn.base, t, accLine)))
	for k := range l.rounds {
		out, in := l.outSlot(jn.base, t, k), l.inSlot(jn.base, t, k)
		wg.Store64(out, f32bits(v))
		wg.Store64(out+8, 1)
		wg.Release(gpu.System)
		gputn.Trigger(wg, trig, jn.roundTag(t, k))
		wg.PollUntil(in+8, true, fmt.Sprintf("residual round %d of iteration %d", k, t), func(x uint64) bool { return x != 0 })
		v = max(v, bitsf32(wg.Load64(in)))
	}
	jn.publish(wg, t, v)
}
