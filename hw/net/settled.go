package net

import (
	"cmp"
	"math"
	"slices"
)

// The settled fill: a reallocation that re-divides only the flows whose
// bottleneck a change can reach, and lets every other flow keep its rate
// and its place in the water-filling's order.
//
// Why: in the weak 26-neighbour halo exchange at 8,192 GPUs the small edge
// messages end at the global and local links' low shares, so the floor
// (floorOf) is low, and the flows above it joined through bottleneck
// ports were thousands per reallocation (4,500 on average in the second
// exchange) while 20 changed rate; the reallocation was 79 % of a 408
// CPU-s run.
//
// What makes it exact. A water-filling over every flow (the oracle) gives
// each flow its rate at one step, that of its bottleneck port (flow.at),
// taking the step's share from every port the flow crosses. A flow keeps
// its rate and its step when the port of that step is in the state it was
// (the same flows frozen before it, at the same rates, in the same order):
// then the step comes at the same (share, id) and freezes the same flows.
// So the set the fill re-divides starts with the flows whose bottleneck a
// change touches (a started flow and every port it crosses; of an ended
// flow, each bottleneck port it crossed: those it was frozen at or taken
// from before their step), adds a port's frozen flows whenever a flow of
// the set whose rate changed crosses it and it was a bottleneck, or the
// new rates fill it (settledWiden), and fills again until nothing joins.
// Every other flow crossing a port of the set keeps its rate; it is taken
// from the port's capacity at its own step (its rate and its bottleneck's
// id), merged with the set's steps in the oracle's order, so each port of
// the set sees the subtractions of the oracle, in its order, bit for bit.
// Where that merge could differ from the oracle's order by rounding (two
// different rates within floorSlack taken from one port, or a kept flow's
// step and a step of the set) or a kept flow would be frozen by a step of
// the set before its own (its rate would change), the kept flow joins the
// set with its bottleneck port (in the set its step comes from the set's
// heap, in the oracle's order) and the set is filled again; past the
// refill bounds (settledDone) the fill gives up, and the reallocation
// fills as before (floorOf, fill).
// TestIncrementalMatchesFull compares every rate with the oracle after
// every reallocation, with the settled fill and without it.

// maxSettledRounds bounds the settled fill's refills before it gives the
// reallocation to the floor's fill. Why so few: a halo exchange's set
// settles in one or two; an all-to-all's (MoE), where a fifth of the flows
// change rate at each reallocation, grows over many, each a filling of
// the whole set again (at EP 64 with 32 rounds the run took 1.8 times as
// long as with the floor's fill alone).
const maxSettledRounds = 2

// settledSmall and maxSmallRounds: a set of at most settledSmall flows may
// be filled again up to maxSmallRounds times. Why: in the weak
// 26-neighbour halo exchange at 4,096 GPUs the sets that outgrew two
// refills were small, and each give-up's floor fill re-divided about 1,450
// flows (at 8,192 GPUs the floor's fills were 56 % of a profile); with
// these bounds the floor's fills re-divide 2.9 M flows instead of 7.8 M
// over the run, and an all-to-all's sets (MoE), which pass settledSmall
// within a few rounds, give up as before.
const (
	settledSmall   = 64
	maxSmallRounds = 16
)

// settledBudgetDiv: past the bounds above, a settled fill may still fill
// its set again while the flows it has filled so far (summed over its
// fillings) stay below 1/settledBudgetDiv of the flows the floor's fills
// re-divide (a moving average): giving up would cost a floor's fill.
const settledBudgetDiv = 2

// maxSettledBackoff bounds the reallocations that fill with the floor
// after settled fills given up in a row (reallocate).
const maxSettledBackoff = 63

// settledFill re-divides the flows the changes of this instant can reach
// (see above) and reports true, or reports false with every rate, port
// load and bottleneck mark as it was.
func (f *Fabric) settledFill() bool {
	fs := f.fl
	fs.epoch++
	fs.settledWork = 0
	fs.ports, fs.flows = fs.ports[:0], fs.flows[:0]
	for _, fl := range fs.started {
		f.settledAdd(fl)
		for _, pt := range fl.path[:fl.hops] {
			f.settledPort(pt)
		}
	}
	for _, fl := range fs.ended {
		for _, pt := range fl.path[:fl.hops] {
			if pt.neck {
				f.settledPort(pt)
			}
		}
	}
	for round := 0; ; round++ {
		for _, fl := range fs.flows {
			fl.frozen = false
			fl.filled = fl.rate
		}
		ok, join := f.settledWaterFill()
		if !ok {
			for _, fl := range fs.flows {
				fl.rate = fl.filled
			}
			if join == nil || join.at == nil || f.settledDone(round) {
				fs.settledGrew = join != nil && join.at != nil
				f.settledAbandon()
				return false
			}
			f.settledAdd(join)
			f.settledPort(join.at)
			continue
		}
		fs.loadRateChanges()
		if !f.settledWiden() {
			return true
		}
		if f.settledDone(round) {
			fs.settledGrew = true
			f.settledAbandon()
			return false
		}
	}
}

// settledDone reports whether the settled fill has refilled its set as
// often as it may (round refills so far): settledRounds times, or
// maxSmallRounds while the set holds at most settledSmall flows, or past
// those while its fillings have filled fewer flows than half a floor's
// fill (settledBudgetDiv). Either way the rates are exact; the bound only
// chooses between another refill and the floor's fill.
func (f *Fabric) settledDone(round int) bool {
	fs := f.fl
	fs.settledWork += len(fs.flows)
	if round < fs.settledRounds || fs.settledRounds < maxSettledRounds {
		return round >= fs.settledRounds
	}
	if round < maxSmallRounds && len(fs.flows) <= fs.settledSmall {
		return false
	}
	return float64(fs.settledWork) >= fs.floorFlows/settledBudgetDiv
}

// settledAbandon gives every flow of the set its rate before the
// reallocation and every port of the set its bottleneck mark.
func (f *Fabric) settledAbandon() {
	fs := f.fl
	f.unfill(fs.flows)
	for _, fl := range fs.flows {
		fl.at, fl.atWas = fl.atWas, nil
	}
	for _, pt := range fs.ports {
		pt.neck = pt.neckWas
	}
	fs.settledGaveUp++
}

// settledAdd puts flow fl in the set.
func (f *Fabric) settledAdd(fl *flow) {
	fs := f.fl
	if fl.mark == fs.epoch {
		return
	}
	fl.mark = fs.epoch
	// Its rate and bottleneck before the reallocation, kept from the
	// moment it joins (settledAbandon gives them back, also to a flow
	// that joined after the last filling).
	fl.oldRate, fl.atWas = fl.rate, fl.at
	fs.flows = append(fs.flows, fl)
}

// settledPort puts port pt in the set with the flows frozen at it (and
// any not filled yet); its other flows keep their rates.
func (f *Fabric) settledPort(pt *port) {
	fs := f.fl
	if pt.mark == fs.epoch {
		return
	}
	pt.mark = fs.epoch
	pt.neckWas = pt.neck
	fs.ports = append(fs.ports, pt)
	for _, fl := range pt.flows {
		if fl.at == pt || fl.at == nil || fl.version == 0 {
			f.settledAdd(fl)
		}
	}
}

// settledBefore reports whether the step of kept flow k (its rate at its
// bottleneck) comes before the step of port pt in the water-filling's
// order (share, then id).
func settledBefore(k *flow, pt *port) bool {
	return k.rate < pt.share || k.rate == pt.share && k.at.id < pt.id
}

// settledTake takes rate r (kept flow k's, nil for a step of the set)
// from port pt's capacity left. When pt's previous subtraction was a
// different rate within floorSlack of r and one of the two a kept flow's,
// whose order against the other the rounding of the shares could have
// swapped in a filling over every flow, it returns that kept flow (k
// when k is one): in the set, its step comes from the set's heap in the
// filling's order. (Two steps of the set come in the filling's order,
// whatever their rates: the set's ports see the same shares in the same
// heap.) Else nil.
func settledTake(pt *port, r float64, k *flow) *flow {
	if l := pt.lastSub; (k != nil || pt.lastK != nil) && l != 0 && l != r && math.Abs(r-l) <= r*floorSlack {
		if k != nil {
			return k
		}
		return pt.lastK
	}
	pt.lastSub, pt.lastK = r, k
	pt.capLeft -= r
	pt.unfrozen--
	return nil
}

// settledNear reports whether rates a and b differ but by less than
// floorSlack (relative).
func settledNear(a, b float64) bool {
	return a != 0 && b != 0 && a != b && math.Abs(a-b) <= max(a, b)*floorSlack
}

// settledWaterFill water-fills the set over its ports, taking each kept
// flow crossing them at its own step. It reports false, with the kept
// flow that must join the set, when a step of the set would freeze a kept
// flow before its own step, or when the order of a kept flow's step
// against another step is unsure (settledNear, settledTake); with nil
// when a flow of the set has no port or a kept flow no bottleneck.
func (f *Fabric) settledWaterFill() (bool, *flow) {
	fs := f.fl
	fs.check++
	pass := fs.check
	ev := fs.kept[:0]
	h := fs.heap[:0]
	for _, pt := range fs.ports {
		pt.capLeft = fs.cap
		if pt.capacity > 0 {
			pt.capLeft = pt.capacity
		}
		pt.unfrozen = len(pt.flows)
		pt.heapAt = -1
		pt.neck = false
		pt.lastSub, pt.lastK = 0, nil
		for _, fl := range pt.flows {
			if fl.mark != fs.epoch && fl.ev != pass {
				if fl.at == nil {
					return false, nil
				}
				fl.ev, fl.frozen = pass, false
				ev = append(ev, fl)
			}
		}
		if pt.unfrozen > 0 {
			pt.share = pt.capLeft / float64(pt.unfrozen)
			pt.heapAt = int32(len(h))
			h = append(h, pt)
		}
	}
	slices.SortFunc(ev, func(a, b *flow) int {
		if c := cmp.Compare(a.rate, b.rate); c != 0 {
			return c
		}
		return cmp.Compare(a.at.id, b.at.id)
	})
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	ok, join := true, (*flow)(nil)
	left, ei := len(fs.flows), 0
	lastEv, lastPop := 0.0, 0.0
	var lastK *flow // the kept flow of the last kept step (lastEv its rate)
	// After the set's last step the loop goes on while ports remain in
	// the heap: one whose step comes before its kept flows' own would
	// freeze them (join).
	for ok && (left > 0 || len(h) > 0) {
		var moved []*port
		if ei < len(ev) && (len(h) == 0 || settledBefore(ev[ei], h[0])) {
			k := ev[ei]
			ei++
			// A kept flow's step and a step of the set whose shares
			// differ but by rounding: the filling over every flow may
			// have taken them in the other order.
			if settledNear(k.rate, lastPop) {
				ok = false
				join = cmp.Or(join, k)
			}
			lastEv, lastK = k.rate, k
			k.frozen = true
			fs.step++
			moved = fs.moved[:0]
			for _, pt := range k.path[:k.hops] {
				if pt.mark != fs.epoch {
					continue
				}
				if c := settledTake(pt, k.rate, k); c != nil {
					ok = false
					join = cmp.Or(join, c)
				}
				if pt.touched != fs.step {
					pt.touched = fs.step
					moved = append(moved, pt)
				}
			}
		} else {
			if len(h) == 0 {
				ok = false // a flow of the set without a port: cannot be
				break
			}
			best := h[0]
			for _, fl := range best.flows {
				if !fl.frozen && fl.mark != fs.epoch {
					ok, join = false, fl // frozen here before its own step
					break
				}
			}
			if !ok {
				break
			}
			share := best.share
			if settledNear(share, lastEv) {
				ok, join = false, lastK
				break
			}
			lastPop = share
			best.neck = true
			h = removeAt(h, 0)
			fs.step++
			moved = fs.moved[:0]
			for _, fl := range best.flows {
				if fl.frozen {
					continue
				}
				fl.frozen, fl.rate, fl.at = true, share, best
				left--
				for _, pt := range fl.path[:fl.hops] {
					if pt.mark != fs.epoch {
						continue
					}
					if c := settledTake(pt, share, nil); c != nil {
						ok = false
						join = cmp.Or(join, c)
					}
					if pt.touched != fs.step {
						pt.touched = fs.step
						moved = append(moved, pt)
					}
				}
			}
		}
		h = rekey(h, moved)
		fs.moved = moved[:0]
	}
	for _, pt := range h {
		pt.heapAt = -1
	}
	clear(h)
	fs.heap = h[:0]
	if ok {
		// The kept flows after the set's last step: the ports' capacity
		// left at the end, for their bottleneck marks.
		for _, k := range ev[ei:] {
			for _, pt := range k.path[:k.hops] {
				if pt.mark == fs.epoch {
					pt.capLeft -= k.rate
				}
			}
		}
		for _, pt := range fs.ports {
			if c := fs.cap; !pt.neck {
				if pt.capacity > 0 {
					c = pt.capacity
				}
				pt.neck = pt.capLeft <= c*slackRel
			}
		}
		fs.settledKept += len(ev)
	}
	clear(ev)
	fs.kept = ev[:0]
	return ok, join
}

// settledWiden adds to the set each port outside it that a flow of the set
// whose rate changed crosses and that was a bottleneck (its steps see
// another rate now), and each port outside it that the set's new rates
// fill to within slackRel of its capacity (it may be a bottleneck now;
// see widen). It reports whether the set grew.
func (f *Fabric) settledWiden() bool {
	fs := f.fl
	fs.check++
	n, np := len(fs.flows), len(fs.ports)
	for _, fl := range fs.flows[:n] {
		changed := fl.rate != fl.oldRate
		for _, pt := range fl.path[:fl.hops] {
			if pt.mark == fs.epoch {
				continue
			}
			if changed && pt.neck {
				f.settledPort(pt)
				continue
			}
			if pt.checked == fs.check {
				continue
			}
			pt.checked = fs.check
			c := fs.cap
			if pt.capacity > 0 {
				c = pt.capacity
			}
			if pt.load < c*(1-loadSlack) {
				continue
			}
			sum := 0.0
			for _, g := range pt.flows {
				sum += g.rate
			}
			pt.load = sum
			if sum >= c*(1-slackRel) {
				f.settledPort(pt)
			}
		}
	}
	return len(fs.ports) > np
}
