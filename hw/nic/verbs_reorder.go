package nic

import (
	"math/rand/v2"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Reorder is the peer-to-peer write-reordering hazard of the GPUrdma paper:
// while a kernel runs, NIC writes into GPU memory get no ordering
// guarantee, so under load a later write (a notification flag) can become
// visible before an earlier one (its payload). Each verbs write into GPU
// memory lands after an extra delay drawn from an exponential distribution
// whose mean is Mean when the inbound link utilisation over the last
// Window is at least Threshold, and 0 below it. All data lands eventually;
// reads are unaffected.
type Reorder struct {
	Mean      sim.Duration
	Threshold float64 // fraction of the link's time spent receiving
	Window    sim.Duration
	rng       *rand.Rand
	recent    []rxMark
	busy      sim.Duration // serialisation time of recent
}

type rxMark struct {
	at  sim.Time
	ser sim.Duration
}

// SetReorder switches the hazard on (r non-nil) for this NIC's verbs
// writes, drawing delays from the engine's named random stream.
func (n *NIC) SetReorder(r *Reorder) {
	if r != nil {
		r.rng = n.e.Stream(n.name + ".p2p-reorder")
	}
	n.vs().reorder = r
}

// noteRx records an inbound packet's wire time for the utilisation.
func (r *Reorder) noteRx(now sim.Time, ser sim.Duration) {
	r.recent = append(r.recent, rxMark{now, ser})
	r.busy += ser
	for len(r.recent) > 0 && r.recent[0].at < now-r.Window {
		r.busy -= r.recent[0].ser
		r.recent = r.recent[1:]
	}
}

// reorderDelay returns the extra landing delay of a verbs write to a.
func (n *NIC) reorderDelay(a mem.Addr) sim.Duration {
	r := n.vs().reorder
	if r == nil || n.mem.PoolOf(a) != mem.GPU || r.Window <= 0 {
		return 0
	}
	if float64(r.busy)/float64(r.Window) < r.Threshold {
		return 0
	}
	n.vs().stats.Reordered++
	return sim.Duration(r.rng.ExpFloat64() * float64(r.Mean))
}
