package gpu

import "github.com/gpunetsim/gpunetsim/sim"

// codeKey names one kernel's code in one instruction cache.
type codeKey struct {
	kernel string
	group  int // the CU's id / Spec.ICacheCUs
}

// fetchWait returns how long a work-group of kernel k dispatched now on cu
// waits for its first instruction line (Spec.ICacheCUs; zero when
// instruction fetch is not modelled). A hit in the CU group's instruction
// cache costs its latency (Spec.ICacheCycles); a line another work-group of
// the group is already fetching is waited for (the cache merges the miss);
// the group's first fetch of a kernel misses and goes on to the L2, which
// holds the line when another group fetched it before (nothing writes
// code), else to memory (MissLatency: the L2 lookup, the directory on a
// node behind one, memory). Kernels are told apart by their code
// (Kernel.Code, else their name).
func (g *GPU) fetchWait(k *Kernel, cu *computeUnit) sim.Duration {
	n := g.spec.ICacheCUs
	if n <= 0 {
		return 0
	}
	now := g.e.Now()
	hit := g.spec.Cycles(g.spec.ICacheCycles)
	code := k.Code
	if code == "" {
		code = k.Name
	}
	key := codeKey{code, cu.id / n}
	if ready, ok := g.code[key]; ok {
		if ready > now {
			return ready - now
		}
		return hit
	}
	if g.code == nil {
		g.code, g.codeL2 = map[codeKey]sim.Time{}, map[string]sim.Time{}
	}
	// A miss costs what a data load's L1 miss does (wordLoad, tryLoad64):
	// the L2's lookup, and past it the directory and memory; the missing
	// cache's own lookup is not charged on top, as the vector L1's is not.
	ready := now + g.missLat
	if inL2, ok := g.codeL2[code]; ok {
		// An L2 hit, or the other group's miss bringing the line in.
		ready = max(now+g.hitLat, inL2)
	} else {
		g.codeL2[code] = ready
	}
	g.code[key] = ready
	g.stats.ICacheMisses++
	return ready - now
}
