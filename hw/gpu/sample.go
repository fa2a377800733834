package gpu

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A poll's load without a sample event. A load that memory serves reads
// memory at its sample point (sampleAt) and returns the data
// gpu.mem_latency/2 later. A poll's load in APU mode (TryPollUntil, a
// fresh L1 copy filled at issue) does not run an event there: the engine
// keeps the sample point's key as a mark (sim.Mark), which also orders the
// load's end as if the sample point's event had scheduled it, and the
// load keeps the line as the last write before that key left it: its
// copy at issue, taken again at every write to the line before the key
// (memory's writes all reach Touch, where the GPU looks). The copy the
// load fills takes that data (settle) when it is first read at or after
// the key, by the load's end, by another work-group's load of the copy,
// or by a gather, exactly as the sample point's event would have given
// it: reads before the key see the copy as filled. Only writes that
// notify memory's watchers are seen, which is every write to a word
// that is polled (a poll waits for those notifications); so only polls
// take this path, and a load of a word written without them (bytes a
// reduction leaves through Bytes) keeps its sample event.

// sample is a deferred sample point of a work-group's poll load: its key
// and the line as memory held it when the last write before the key was
// done.
type sample struct {
	mark sim.Mark
	line mem.Addr
	data [mem.LineSize]byte
	idx  int // in GPU.samples while the key is ahead; −1 after
}

// deferSample makes cl, the fresh L1 copy of line l that the pending load
// reads, take memory's line at the load's sample point, s from now, when
// it is first read after it (settle).
func (w *WG) deferSample(cl *cline, l mem.Addr, s sim.Duration) {
	w.g.e.SetMark(&w.ph.smp.mark, w.Now()+s)
	w.keepSample(cl, l)
}

// keepSample makes cl take memory's line l as of the work-group's sample
// mark (set) when first read after it.
func (w *WG) keepSample(cl *cline, l mem.Addr) {
	g := w.g
	sm := &w.ph.smp
	sm.line, sm.data = l, cl.data // the fill read memory now
	sm.idx = len(g.samples)
	g.samples = append(g.samples, sampleRef{line: l, t: sm.mark.Time(), sm: sm})
	cl.pend = sm
	if !g.sampleHook {
		g.sampleHook = true
		g.mem.OnTouch(g.touched)
	}
}

// touched takes the lines of the deferred samples in [a, a+n) again when
// the write is before their keys; samples whose keys passed keep what
// they hold and leave the list.
func (g *GPU) touched(a mem.Addr, n int) {
	now := g.e.Now()
	for i := 0; i < len(g.samples); {
		r := &g.samples[i]
		if r.t < now {
			// Its key passed (the line and time are kept here): it leaves
			// without a read of the sample, a cache miss into another
			// work-group at a thousand nodes; its idx is left behind
			// (dropSample checks it).
			g.dropAt(i)
			continue
		}
		if r.line+mem.LineSize > a && r.line < a+mem.Addr(n) {
			sm := r.sm
			if !g.e.Ahead(&sm.mark) {
				g.dropSample(sm)
				continue
			}
			g.mem.Read(sm.line, sm.data[:])
		}
		i++
	}
}

// sampleRef is a deferred sample in GPU.samples, with its line and time
// beside it: a write (every packet landing) checks them without reading
// the sample itself, a cache miss each at a thousand nodes.
type sampleRef struct {
	line mem.Addr
	t    sim.Time
	sm   *sample
}

// dropSample takes sm out of the list of samples whose keys are ahead, if
// it is still there. Its idx is where keepSample put it; the list's
// removals (dropAt) move other entries without telling their samples, so
// the entry there is checked, and the list (a few entries per GPU)
// searched when it is another one.
func (g *GPU) dropSample(sm *sample) {
	i := sm.idx
	if i < 0 {
		return
	}
	sm.idx = -1
	if i >= len(g.samples) || g.samples[i].sm != sm {
		i = -1
		for j := range g.samples {
			if g.samples[j].sm == sm {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
	}
	g.dropAt(i)
}

// dropAt removes entry i of the list, the last entry taking its place.
func (g *GPU) dropAt(i int) {
	last := len(g.samples) - 1
	g.samples[i] = g.samples[last]
	g.samples[last] = sampleRef{}
	g.samples = g.samples[:last]
}

// settled returns cl with its deferred sample, if any, taken in when the
// sample's key has passed.
func (g *GPU) settled(cl *cline) *cline {
	if sm := cl.pend; sm != nil && !g.e.Ahead(&sm.mark) {
		merge(&cl.data, &sm.data, cl.stored)
		cl.pend = nil
		g.dropSample(sm)
	}
	return cl
}
