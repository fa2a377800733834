package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"pgregory.net/rapid"
)

// refResidency is the residency as first written: one slice in age order,
// rebuilt by every cut. The indexed residency must keep exactly its ranges,
// in its order, and answer levels as it does.
type refResidency struct {
	l1, l2, llc uint64
	l2Cores     int
	limit       int
	spans       []refSpan
	bytes       uint64
	lo, hi      mem.Addr
}

type refSpan struct {
	lo, hi mem.Addr
	core   int
}

func (r *refResidency) group(k int) int {
	if k < 0 {
		return -1
	}
	return k / r.l2Cores
}

func (r *refResidency) invalidate(a mem.Addr, n int) {
	if n <= 0 || r.lo == r.hi || a >= r.hi || a+mem.Addr(n) <= r.lo {
		return
	}
	r.cut(mem.Line(a), mem.Line(a+mem.Addr(n)+mem.LineSize-1))
}

func (r *refResidency) cut(lo, hi mem.Addr) {
	var out []refSpan
	r.bytes, r.lo, r.hi = 0, 0, 0
	for _, s := range r.spans {
		if s.hi <= lo || s.lo >= hi {
			out = r.keep(out, s)
			continue
		}
		if s.lo < lo {
			out = r.keep(out, refSpan{s.lo, lo, s.core})
		}
		if s.hi > hi {
			out = r.keep(out, refSpan{hi, s.hi, s.core})
		}
	}
	r.spans = out
}

func (r *refResidency) keep(out []refSpan, s refSpan) []refSpan {
	if r.lo == r.hi {
		r.lo, r.hi = s.lo, s.hi
	} else {
		r.lo, r.hi = min(r.lo, s.lo), max(r.hi, s.hi)
	}
	r.bytes += uint64(s.hi - s.lo)
	return append(out, s)
}

func (r *refResidency) touch(core int, lo, hi mem.Addr) {
	lo, hi = mem.Line(lo), mem.Line(hi+mem.LineSize-1)
	if hi <= lo {
		return
	}
	r.cut(lo, hi)
	r.spans = r.keep(r.spans, refSpan{lo, hi, core})
	drop, total := 0, r.bytes
	for len(r.spans)-drop > 1 && (total > r.llc || len(r.spans)-drop > r.limit) {
		total -= uint64(r.spans[drop].hi - r.spans[drop].lo)
		drop++
	}
	if drop > 0 {
		kept := append([]refSpan(nil), r.spans[drop:]...)
		r.spans, r.bytes, r.lo, r.hi = nil, 0, 0, 0
		for _, s := range kept {
			r.spans = r.keep(r.spans, s)
		}
	}
}

func (r *refResidency) levels(core int, lo, hi mem.Addr, b *[nLevels]uint64) {
	if hi <= lo {
		return
	}
	found := uint64(0)
	if r.lo != r.hi && lo < r.hi && hi > r.lo {
		var own, grp, all uint64
		g := r.group(core)
		for i := len(r.spans) - 1; i >= 0; i-- {
			s := r.spans[i]
			n := uint64(s.hi - s.lo)
			if ov := min(s.hi, hi) - max(s.lo, lo); s.hi > lo && s.lo < hi && ov > 0 {
				lv := DRAM
				switch {
				case core >= 0 && s.core == core && own+n <= r.l1:
					lv = L1
				case g >= 0 && r.group(s.core) == g && grp+n <= r.l2:
					lv = L2
				case all+n <= r.llc:
					lv = L3
				}
				b[lv] += uint64(ov)
				found += uint64(ov)
			}
			all += n
			if s.core == core && core >= 0 {
				own += n
			}
			if g >= 0 && r.group(s.core) == g {
				grp += n
			}
		}
	}
	b[DRAM] += uint64(hi-lo) - found
}

// ages lists the indexed residency's ranges oldest first.
func (r *residency) ages() []refSpan {
	var out []refSpan
	for k := r.head; k >= 0; k = r.spans[k].next {
		out = append(out, refSpan{r.spans[k].lo, r.spans[k].hi, r.spans[k].core})
	}
	return out
}

// TestResidencyMatchesReference drives the indexed residency and the
// reference with the same random touches (by single cores and teams),
// writes by other agents and lookups, on capacities and a range limit small
// enough that the eviction rules act, and requires the same ranges in the
// same age order, the same byte count and bounds, and the same levels.
func TestResidencyMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l1 := uint64(rapid.IntRange(1, 64).Draw(t, "l1")) * mem.LineSize
		l2 := uint64(rapid.IntRange(1, 128).Draw(t, "l2")) * mem.LineSize
		llc := uint64(rapid.IntRange(1, 512).Draw(t, "llc")) * mem.LineSize
		l2Cores := rapid.IntRange(1, 4).Draw(t, "l2cores")
		limit := rapid.IntRange(1, 24).Draw(t, "limit")
		r := &residency{l1: l1, l2: l2, llc: llc, l2Cores: l2Cores, limit: limit, head: -1, tail: -1}
		oracle := &refResidency{l1: l1, l2: l2, llc: llc, l2Cores: l2Cores, limit: limit}
		addr := rapid.IntRange(0, 96*mem.LineSize)
		for i := range rapid.IntRange(1, 200).Draw(t, "ops") {
			a := mem.Addr(addr.Draw(t, "a"))
			n := rapid.IntRange(0, 24*mem.LineSize).Draw(t, "n")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				core := rapid.IntRange(-1, 7).Draw(t, "core")
				r.touch(core, a, a+mem.Addr(n))
				oracle.touch(core, a, a+mem.Addr(n))
			case 1:
				r.invalidate(a, n)
				oracle.invalidate(a, n)
			case 2:
				core := rapid.IntRange(-1, 7).Draw(t, "core")
				var got, want [nLevels]uint64
				r.levels(core, a, a+mem.Addr(n), &got)
				oracle.levels(core, a, a+mem.Addr(n), &want)
				if got != want {
					t.Fatalf("op %d: levels(%d, %#x, %d) = %v, reference %v", i, core, a, n, got, want)
				}
			}
			got, want := r.ages(), oracle.spans
			if len(got) != len(want) {
				t.Fatalf("op %d: %d ranges %v, reference %d %v", i, len(got), got, len(want), want)
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("op %d: range %d is %v, reference %v (all: %v vs %v)", i, k, got[k], want[k], got, want)
				}
			}
			if r.bytes != oracle.bytes || r.lo != oracle.lo || r.hi != oracle.hi {
				t.Fatalf("op %d: bytes %d bounds [%#x,%#x), reference %d [%#x,%#x)", i, r.bytes, r.lo, r.hi, oracle.bytes, oracle.lo, oracle.hi)
			}
			if len(r.byAddr) != len(got) {
				t.Fatalf("op %d: %d ranges by address, %d by age", i, len(r.byAddr), len(got))
			}
			for k := 1; k < len(r.byAddr); k++ {
				if r.spans[r.byAddr[k-1]].hi > r.spans[r.byAddr[k]].lo {
					t.Fatalf("op %d: address index out of order at %d", i, k)
				}
			}
		}
	})
}

// BenchmarkResidencyInvalidate is a NIC write landing on a host whose
// caches hold maxResident ranges (a 1,024-node ring allreduce's reductions
// leave one per chunk): the write falls between held ranges, as a packet
// into a receive slot does. The first residency rebuilt its whole list on
// every such write, and the 1,024-node CPU allreduce spent a quarter of
// its time there (docs/parallel.md); ns/op must not grow with the ranges.
func BenchmarkResidencyInvalidate(b *testing.B) {
	r := newResidency(pairSpec())
	const chunk = 8 << 10
	for i := range maxResident {
		lo := mem.Addr(i) * 2 * chunk // a gap after each range
		r.touch(i%4, lo, lo+chunk)
	}
	if len(r.byAddr) != maxResident {
		b.Fatalf("%d ranges held, want %d", len(r.byAddr), maxResident)
	}
	b.ResetTimer()
	for i := range b.N {
		lo := mem.Addr(i%maxResident)*2*chunk + chunk // in the gap
		r.invalidate(lo, 4096)
	}
}
