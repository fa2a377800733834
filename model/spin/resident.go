package spin

import (
	"errors"
	"fmt"
	"slices"

	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/unit"
)

// NIC-memory policies when a receive's structures do not fit the free NIC
// memory (the SC'19 paper step 2, Costs.NICPolicy).
const (
	// PolicyEvict frees NIC memory held by earlier offloaded types that no
	// receive is using: lowest user priority first, least recently used
	// among equals; when that is not enough, the receive falls back.
	PolicyEvict = "evict"
	// PolicyFallback never evicts: the receive falls back to host unpack.
	PolicyFallback = "fallback"
)

// errNoRoom: the structures fit the NIC memory but not what is free of it
// now; the receive falls back to host unpack.
var errNoRoom = errors.New("no room in NIC memory")

// ResidencyStats count the management of NIC-resident datatype structures
// (the SC'19 paper): structures are built once per (datatype, count),
// copied to the NIC on first use and kept there for later receives.
type ResidencyStats struct {
	Hits      int        // receives that found their structures resident (no copy)
	Misses    int        // receives that copied them to the NIC
	Evictions int        // resident structures freed to make room
	Fallbacks int        // receives that found no room and unpacked on the host
	Resident  unit.Bytes // NIC memory held by resident structures now
	Entries   int        // structures resident now
}

// resident is one plan's structures in NIC memory.
type resident struct {
	plan   *Plan
	region *hwspin.Region
	last   uint64 // use stamp (LRU)
	busy   int    // receives using it now
}

// residency is the NIC-resident structure cache of one endpoint.
type residency struct {
	sp    *hwspin.NIC
	list  []*resident
	clock uint64
	stats ResidencyStats
}

// acquire makes plan p's structures resident for a receive: a hit when
// they already are; otherwise it allocates NIC memory, evicting under
// PolicyEvict. It returns errNoRoom when the receive must fall back.
func (r *residency) acquire(p *Plan, policy string) (ent *resident, hit bool, evicted int, err error) {
	r.clock++
	for _, x := range r.list {
		if x.plan == p {
			x.busy++
			x.last = r.clock
			r.stats.Hits++
			return x, true, 0, nil
		}
	}
	need := p.Mem.Total()
	if total := r.sp.Spec().MemSize; need > total {
		return nil, false, 0, fmt.Errorf("%w: %d × %v under %s needs %v, spin.mem_size = %v", ErrNICMemory, p.Count, p.C.Type(), p.Method, need, total)
	}
	if need > r.sp.MemFree() && policy == PolicyEvict {
		evicted = r.evict(need)
	}
	if need > r.sp.MemFree() {
		r.stats.Fallbacks++
		return nil, false, evicted, errNoRoom
	}
	reg, err := r.sp.AllocRegion(need)
	if err != nil {
		return nil, false, evicted, err
	}
	ent = &resident{plan: p, region: reg, last: r.clock, busy: 1}
	r.list = append(r.list, ent)
	r.stats.Misses++
	return ent, false, evicted, nil
}

// evict frees idle entries, lowest priority and least recently used
// first, until need bytes are free or no idle entry is left.
func (r *residency) evict(need unit.Bytes) int {
	idle := slices.DeleteFunc(slices.Clone(r.list), func(x *resident) bool { return x.busy > 0 })
	slices.SortFunc(idle, func(a, b *resident) int {
		if a.plan.Priority != b.plan.Priority {
			return a.plan.Priority - b.plan.Priority
		}
		return int(a.last) - int(b.last)
	})
	n := 0
	for _, x := range idle {
		if r.sp.MemFree() >= need {
			break
		}
		r.sp.FreeRegion(x.region)
		r.list = slices.DeleteFunc(r.list, func(y *resident) bool { return y == x })
		n++
	}
	r.stats.Evictions += n
	return n
}

// release ends a receive's use of its entry; the structures stay resident.
func (r *residency) release(x *resident) { x.busy-- }

// Stats returns the counters with the current occupancy.
func (r *residency) Stats() ResidencyStats {
	st := r.stats
	for _, x := range r.list {
		st.Resident += x.region.Size
	}
	st.Entries = len(r.list)
	return st
}
