package net

import (
	"math"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"pgregory.net/rapid"
)

// scanFill is the water-filling by a scan of every port per step (the
// form the heap replaced), ties to the smallest id: the reference the heap
// must match bit for bit.
func scanFill(fs *flowState) {
	for _, pt := range fs.ports {
		pt.capLeft = fs.cap
		if pt.capacity > 0 {
			pt.capLeft = pt.capacity
		}
		pt.unfrozen = len(pt.flows)
	}
	left := len(fs.flows)
	for left > 0 {
		var best *port
		share := math.Inf(1)
		for _, pt := range fs.ports {
			if pt.unfrozen > 0 {
				if s := pt.capLeft / float64(pt.unfrozen); s < share || s == share && pt.id < best.id {
					best, share = pt, s
				}
			}
		}
		for _, fl := range best.flows {
			if fl.frozen {
				continue
			}
			fl.frozen, fl.rate = true, share
			left--
			for h := range fl.hops {
				pt := fl.path[h]
				pt.capLeft -= share
				pt.unfrozen--
			}
		}
	}
}

// The heap's water-filling gives every flow exactly the rate of the scan
// (same ports chosen in the same order, ties to the smallest id), on random
// components with shared links and ports of their own capacity.
func TestWaterFillMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		np := rapid.IntRange(1, 30).Draw(t, "ports")
		ports := make([]*port, np)
		for i := range ports {
			ports[i] = &port{}
			if rapid.IntRange(0, 3).Draw(t, "own") == 0 {
				ports[i].capacity = float64(rapid.IntRange(1, 4).Draw(t, "capacity")) / 3
			}
		}
		nf := rapid.IntRange(1, 60).Draw(t, "flows")
		flows := make([]*flow, nf)
		for i := range flows {
			fl := &flow{}
			fl.hops = int32(rapid.IntRange(1, maxHops).Draw(t, "hops"))
			for h := range fl.hops {
				pt := ports[rapid.IntRange(0, np-1).Draw(t, "port")]
				fl.path[h] = pt
				pt.flows = append(pt.flows, fl)
			}
			flows[i] = fl
		}
		ids := rapid.Permutation(func() []int32 {
			v := make([]int32, np)
			for i := range v {
				v[i] = int32(i + 1)
			}
			return v
		}()).Draw(t, "ids")
		var used []*port
		for i, pt := range ports {
			pt.id = ids[i]
			if len(pt.flows) > 0 {
				used = append(used, pt)
			}
		}
		fs := &flowState{ports: used, flows: flows, cap: 1.0 / 7}
		fab := &Fabric{fl: fs}
		for _, pt := range used {
			fab.settle(pt)
		}
		fab.waterFill()
		got := make([]float64, nf)
		for i, fl := range flows {
			got[i], fl.frozen, fl.rate = fl.rate, false, 0
		}
		scanFill(fs)
		for i, fl := range flows {
			if math.Float64bits(fl.rate) != math.Float64bits(got[i]) {
				t.Fatalf("flow %d: heap rate %v, scan rate %v", i, got[i], fl.rate)
			}
		}
	})
}

// fullRates water-fills every active flow of the fabric at once, over
// every port that carries one (the whole machine, the form the incremental
// reallocation replaced), and returns each flow's rate; the flows keep
// the rates they had. The oracle of TestIncrementalMatchesFull.
func fullRates(fs *flowState) map[*flow]float64 {
	fs.epoch++
	fs.ports, fs.flows = fs.ports[:0], fs.flows[:0]
	for _, pt := range fs.all {
		if len(pt.flows) == 0 {
			continue
		}
		pt.mark = fs.epoch
		fs.ports = append(fs.ports, pt)
		for _, fl := range pt.flows {
			if fl.mark != fs.epoch {
				fl.mark = fs.epoch
				fs.flows = append(fs.flows, fl)
			}
		}
	}
	kept := make([]float64, len(fs.flows))
	at := make([]*port, len(fs.flows))
	for i, fl := range fs.flows {
		kept[i], at[i], fl.frozen = fl.rate, fl.at, false
	}
	floor := fs.floor
	fs.floor = 0 // every flow filled: no port keeps any
	for _, pt := range fs.ports {
		fs.f.settle(pt)
	}
	fs.floor = floor
	necks := make([]bool, len(fs.ports))
	for i, pt := range fs.ports {
		necks[i] = pt.neck
	}
	defer func() {
		for i, pt := range fs.ports {
			pt.neck = necks[i]
		}
	}()
	fs.f.waterFill()
	full := make(map[*flow]float64, len(fs.flows))
	for i, fl := range fs.flows {
		full[fl], fl.rate, fl.at = fl.rate, kept[i], at[i]
	}
	return full
}

// drawFlowFabric makes a flow-mode fabric of n endpoints (100 Gb/s links,
// 100 ns switches) on a topology drawn from topos, with the NVSwitch node
// fabric drawn too where the topology allows one.
func drawFlowFabric(t *rapid.T, topos []TopologySpec, n int) (*sim.Engine, *Fabric) {
	topo := topos[rapid.IntRange(0, len(topos)-1).Draw(t, "topology")]
	e := sim.New(1)
	f, err := New(e, n, LinkSpec{Bandwidth: unit.Rate(100e9 / 8), Payload: 2048, Header: 64},
		SwitchSpec{Latency: 100 * sim.Nanosecond}, topo)
	if err != nil {
		t.Fatal(err)
	}
	if topo.Kind != "railfattree" && rapid.Bool().Draw(t, "node fabric") {
		if err := f.UseNodeFabric(nvswitch); err != nil {
			t.Fatal(err)
		}
	}
	f.UseFlows()
	return e, f
}

// After every reallocation, each active flow's rate is bit for bit the one
// a water-filling over the whole machine gives, on random traffic or an
// all-to-all (many messages starting at the same instants, pairs queueing
// behind each other) through every topology, with and without a node fabric of its
// own capacity; and the engine's queue never holds more than one
// completion per active flow (cancelled ones leave it). Both ways of
// reallocating are drawn: the settled fill (settled.go), which keeps every
// flow whose bottleneck no change reaches at its rate and takes it at its
// own step, and the floor's fill alone, which keeps the flows below the
// floor (floorOf); each keeps some flows, and the settled fill is given up
// only now and then.
func TestIncrementalMatchesFull(t *testing.T) {
	topos := []TopologySpec{
		{Kind: "star", LeafSize: 16, InOrder: true},
		{Kind: "fattree", LeafSize: 2, InOrder: true},
		{Kind: "fattree", LeafSize: 4},
		railSplit,
		dfSplit,
	}
	kept := 0        // flows a reallocation kept at their rates below its floor
	settledKept := 0 // kept flows the settled fill took at their own steps
	settled, gaveUp := 0, 0
	nearCrossed := 0 // ports the floor fill's search crossed near their capacity, no bottleneck
	rapid.Check(t, func(t *rapid.T) {
		const n = 8
		e, f := drawFlowFabric(t, topos, n)
		f.fl.noSettled = rapid.Bool().Draw(t, "floor only")
		// Fewer refills than the default make the settled fill give up
		// after it has filled and grown its set: its flows, also those
		// that joined last, must get their rates back.
		f.fl.settledRounds = rapid.IntRange(0, maxSettledRounds).Draw(t, "settled rounds")
		// Smaller sets than the default pass the small-set bound and
		// refill within the work budget (settledDone), or give up on it.
		f.fl.settledSmall = rapid.IntRange(0, settledSmall).Draw(t, "small set")
		// The floor fill's search crosses the ports near their capacity
		// too (crossSlack), or leaves them to widen.
		f.fl.crossNear = rapid.Bool().Draw(t, "cross near-full ports")
		r := &recorder{e: e, at: map[int]sim.Time{}}
		for i := range n {
			f.Attach(i, r)
		}
		type send struct {
			src, dst int
		}
		var sends []send
		if rapid.Bool().Draw(t, "all-to-all") {
			// MoE's dispatch: every node to every other, one or two messages
			// per pair (the second queued behind the first).
			for src := range n {
				for off := 1; off < n; off++ {
					for range rapid.IntRange(1, 2).Draw(t, "per pair") {
						sends = append(sends, send{src, (src + off) % n})
					}
				}
			}
		} else {
			for range rapid.IntRange(1, 40).Draw(t, "messages") {
				src := rapid.IntRange(0, n-1).Draw(t, "src")
				sends = append(sends, send{src, (src + rapid.IntRange(1, n-1).Draw(t, "offset")) % n})
			}
		}
		nm := len(sends)
		checks := 0
		f.fl.afterRealloc = func() {
			checks++
			for fl, want := range fullRates(f.fl) {
				if math.Float64bits(fl.rate) != math.Float64bits(want) {
					t.Fatalf("at %v: flow %v incremental rate %v, whole machine %v", e.Now(), fl.p, fl.rate, want)
				}
			}
			// Each port's running load is its flows' rates added up, but
			// for rounding.
			for _, pt := range f.fl.all {
				sum := 0.0
				for _, g := range pt.flows {
					sum += g.rate
				}
				if math.Abs(pt.load-sum) > 1e-12*f.fl.cap {
					t.Fatalf("at %v: port %s load %v, its flows' rates add up to %v", e.Now(), pt.name, pt.load, sum)
				}
			}
			// Sends not yet made, deliveries, one completion per flow, this event.
			if q := e.Pending(); q > 2*nm+f.fl.active+1 {
				t.Fatalf("at %v: %d events pending for %d active flows", e.Now(), q, f.fl.active)
			}
		}
		for i, sd := range sends {
			src, dst := sd.src, sd.dst
			size := unit.Bytes(rapid.IntRange(1, 256<<10).Draw(t, "bytes"))
			at := sim.Time(rapid.IntRange(0, 20).Draw(t, "instant")) * 500 * sim.Nanosecond
			e.At(at, func() { f.Send(testMsg{src, dst, size, i}) })
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		nearCrossed += f.fl.nearCrossed
		if f.fl.noSettled {
			kept += f.fl.keptSeen
		} else {
			settledKept += f.fl.settledKept
			if f.fl.settledRounds == maxSettledRounds {
				settled += checks - f.fl.replacements
				gaveUp += f.fl.settledGaveUp
			}
		}
		if len(r.at) != nm || checks == 0 || f.ActiveFlows() != 0 {
			t.Fatalf("%d of %d messages delivered, %d reallocations, %d flows left", len(r.at), nm, checks, f.ActiveFlows())
		}
	})
	if kept == 0 {
		t.Fatal("no reallocation kept a flow below its floor: the test does not reach floorOf's path")
	}
	if nearCrossed == 0 {
		t.Fatal("no floor fill crossed a port near its capacity that was no bottleneck: the test does not reach crossSlack's path")
	}
	if settledKept == 0 {
		t.Fatal("no settled fill kept a flow at its own step: the test does not reach settled.go's path")
	}
	if gaveUp*4 > settled {
		t.Fatalf("the settled fill gave up %d of %d reallocations", gaveUp, settled)
	}
}
