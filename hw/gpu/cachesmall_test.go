package gpu

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestSmallCacheMatchesMapCache checks an L1's few-lines mode (cache.small)
// against the same cache without it under random fills, lookups, writes,
// write-backs and clears, with capacities below, at and above the few
// lines it keeps inline: the same copies' bytes, the same lines present,
// the same evictions (FIFO), the same lines written back in the same
// order, and the same copies recycled.
func TestSmallCacheMatchesMapCache(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		span := rapid.IntRange(1, 12).Draw(t, "lines")
		m := mem.New("m", true)
		a := m.Alloc(mem.Host, uint64(span+1)*mem.LineSize, "lines")
		line := func(i int) mem.Addr { return a + mem.Addr(i)*mem.LineSize }
		for i := range span {
			m.Store64(line(i), uint64(100+i))
		}
		capacity := rapid.IntRange(1, 8).Draw(t, "cap")
		small, plain := newCache(capacity), newCache(capacity)
		small.small = true
		wbS, wbP := mem.New("s", true), mem.New("p", true)
		wbS.AllocDataAt(a, mem.Host, uint64(span+1)*mem.LineSize, "lines")
		wbP.AllocDataAt(a, mem.Host, uint64(span+1)*mem.LineSize, "lines")
		same := func(x, y *cline) {
			if (x == nil) != (y == nil) {
				t.Fatalf("present %v in the small cache, %v in the other", x != nil, y != nil)
			}
			if x != nil && (x.data != y.data || x.dirty != y.dirty || x.seq != y.seq) {
				t.Fatalf("copies differ: %v/%x/%d against %v/%x/%d", x.data[:8], x.dirty, x.seq, y.data[:8], y.dirty, y.seq)
			}
		}
		for range rapid.IntRange(0, 200).Draw(t, "steps") {
			l := line(rapid.IntRange(0, span-1).Draw(t, "line"))
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3: // a fill after a miss, as every caller does
				if small.get(l) == nil {
					same(small.fill(l, m, wbS), plain.fill(l, m, wbP))
				}
			case 4, 5: // a store into a present copy
				x, y := small.get(l), plain.get(l)
				same(x, y)
				if x != nil {
					v := byte(rapid.IntRange(1, 255).Draw(t, "v"))
					off := mem.Addr(rapid.IntRange(0, mem.LineSize-1).Draw(t, "off"))
					x.data[off], y.data[off] = v, v
					small.write(l, x, off, 1)
					plain.write(l, y, off, 1)
				}
			case 6:
				if small.writeBack(wbS) != plain.writeBack(wbP) {
					t.Fatal("write-backs differ")
				}
			case 7:
				small.clear()
				plain.clear()
				if small.free.Len() != plain.free.Len() {
					t.Fatalf("%d copies free, want %d", small.free.Len(), plain.free.Len())
				}
			default:
				same(small.get(l), plain.get(l))
			}
			for i := range span {
				same(small.get(line(i)), plain.get(line(i)))
			}
			var bs, bp [mem.LineSize]byte
			for i := range span {
				wbS.Read(line(i), bs[:])
				wbP.Read(line(i), bp[:])
				if bs != bp {
					t.Fatalf("line %d written back differently", i)
				}
			}
		}
	})
}
