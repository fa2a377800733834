package net

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// scanFill is the water-filling by a scan of every port per step (the
// form the heap replaced): the reference the heap must match bit for bit.
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
				if s := pt.capLeft / float64(pt.unfrozen); s < share {
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
// (same ports chosen in the same order, ties to the first port), on random
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
			fl.hops = rapid.IntRange(1, maxHops).Draw(t, "hops")
			for h := range fl.hops {
				pt := ports[rapid.IntRange(0, np-1).Draw(t, "port")]
				fl.path[h] = pt
				pt.flows = append(pt.flows, fl)
			}
			flows[i] = fl
		}
		var used []*port
		for _, pt := range ports {
			if len(pt.flows) > 0 {
				pt.idx = len(used)
				used = append(used, pt)
			}
		}
		fs := &flowState{ports: used, flows: flows, cap: 1.0 / 7}
		(&Fabric{fl: fs}).waterFill()
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
