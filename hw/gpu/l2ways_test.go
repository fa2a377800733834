package gpu

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// refL2 is the tag array with every way of every set allocated: the form
// the L2 had before its blocks held only the ways in use, kept here as
// the reference the grown blocks must match way for way.
type refL2 struct {
	sets, ways int
	clock      uint64
	keys       [][]mem.Addr
	st         [][]uint64
}

func newRefL2(sets, ways int) *refL2 {
	r := &refL2{sets: sets, ways: ways, keys: make([][]mem.Addr, sets), st: make([][]uint64, sets)}
	for s := range sets {
		r.keys[s], r.st[s] = make([]mem.Addr, ways), make([]uint64, ways)
	}
	return r
}

func (r *refL2) set(l mem.Addr) int { return int(l/mem.LineSize) % r.sets }

func (r *refL2) find(l mem.Addr) int {
	s := r.set(l)
	for i, k := range r.keys[s] {
		if k == l {
			return i
		}
	}
	return -1
}

// touch is touchFound's fill rule over the whole set: the first invalid
// unflagged way, else the least recently used unflagged one, else bypass.
func (r *refL2) touch(l mem.Addr) (hit bool, evicted mem.Addr) {
	r.clock++
	s := r.set(l)
	if i := r.find(l); i >= 0 {
		r.st[s][i] = r.st[s][i]&l2Flags | r.clock
		return true, 0
	}
	victim := -1
	for i := range r.ways {
		if r.st[s][i]&l2Flags != 0 {
			continue
		}
		if r.keys[s][i] == 0 {
			victim = i
			break
		}
		if victim < 0 || r.st[s][i]&^l2Flags < r.st[s][victim]&^l2Flags {
			victim = i
		}
	}
	if victim < 0 {
		return false, 0
	}
	evicted = r.keys[s][victim]
	r.keys[s][victim], r.st[s][victim] = l, r.clock
	return false, evicted
}

// TestL2GrownBlocksMatchFullArray checks the tag array whose blocks hold
// only the ways in use (grown as fills need them) against the array with
// every way allocated, under random lookups and fills by both
// requesters, store_locked pins and their release, CP RMW locks held
// across later fills (which may grow the locked way's block) and their
// release by index, and system-acquire invalidations: every access hits
// or misses alike and every way holds the same line with the same state.
func TestL2GrownBlocksMatchFullArray(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ways := rapid.SampledFrom([]int{1, 2, 3, 4, 7, 16}).Draw(t, "ways")
		sets := rapid.SampledFrom([]int{1, 3, 64, 128, 200}).Draw(t, "sets")
		_, g := newGPU("dgpu")
		g.UseL2(L2Spec{Size: unit.Bytes(sets * ways * mem.LineSize), Ways: ways})
		tg, ref := g.tags, newRefL2(sets, ways)
		span := rapid.IntRange(1, sets*ways*3).Draw(t, "lines")
		var held []CPRMWLock
		for range rapid.IntRange(0, 800).Draw(t, "steps") {
			l := mem.Addr(rapid.IntRange(1, span).Draw(t, "line")) * mem.LineSize
			s := ref.set(l)
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); op {
			case 0, 1, 2, 3, 4:
				r := Requester(op % 2)
				wantHit, _ := ref.touch(l)
				if hit := g.touch(l, r); hit != wantHit {
					t.Fatalf("touch %#x: hit %v, want %v", l, hit, wantHit)
				}
			case 5: // a store_locked pin, and its release by a CP access
				lock := rapid.Bool().Draw(t, "lock")
				if i := ref.find(l); i >= 0 {
					if lock {
						ref.st[s][i] |= l2Locked
					} else {
						ref.st[s][i] &^= l2Locked
					}
				}
				if w := tg.find(l); w != nil {
					w.set(l2Locked, lock)
				}
			case 6, 7: // a CP RMW takes the line's way
				if i := ref.find(l); i >= 0 && ref.st[s][i]&l2RMW == 0 {
					ref.st[s][i] |= l2RMW
					j := tg.findWay(l)
					if j != s*ways+i {
						t.Fatalf("findWay %#x = %d, want %d", l, j, s*ways+i)
					}
					tg.way(j).set(l2RMW, true)
					if tg.rmwDone == nil {
						tg.rmwDone = map[mem.Addr]*sim.Signal{}
					}
					tg.rmwDone[l] = new(sim.Signal)
					held = append(held, CPRMWLock{way: j + 1, l: l})
				}
			case 8: // the oldest RMW releases its line
				if len(held) > 0 {
					lk := held[0]
					held = held[1:]
					i := ref.find(lk.l)
					ref.st[ref.set(lk.l)][i] &^= l2RMW
					g.CPRMWUnlock(lk)
				}
			case 9: // a system acquire invalidates an unflagged line
				if i := ref.find(l); i >= 0 && ref.st[s][i]&l2Flags == 0 {
					ref.keys[s][i] = 0
				}
				if i := tg.findWay(l); i >= 0 && tg.way(i).st&l2Flags == 0 {
					tg.invalidate(i)
				}
			}
			for w := range ways {
				i := s*ways + w
				if k := tg.key(i); k != ref.keys[s][w] {
					t.Fatalf("set %d way %d holds %#x, want %#x", s, w, k, ref.keys[s][w])
				}
				if ref.keys[s][w] != 0 && tg.way(i).st != ref.st[s][w] {
					t.Fatalf("set %d way %d state %#x, want %#x", s, w, tg.way(i).st, ref.st[s][w])
				}
			}
		}
	})
}

// TestL2TablesMadeAtFirstFill checks that a GPU whose L2 is only looked
// up, never filled, holds no tag tables (a 50 MiB L2's are 39 KB per GPU,
// 320 MB at 8,192 GPUs of h100-cx7 under strategies that never fill it),
// and that the first fill makes them.
func TestL2TablesMadeAtFirstFill(t *testing.T) {
	_, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 50 * unit.MiB, Ways: 16})
	const l = 7 * mem.LineSize
	if g.tags.find(l) != nil || g.tags.findWay(l) >= 0 || g.tags.key(0) != 0 {
		t.Fatal("an empty L2 found a line")
	}
	if g.tags.keys != nil || g.tags.lines != nil || g.tags.blockWays != nil {
		t.Fatal("lookups made the tag tables")
	}
	if g.touch(l, CU) || !g.touch(l, CU) {
		t.Fatal("want a miss, then a hit")
	}
	if n := len(g.tags.keys); n != g.tags.blocks || n != int(50*unit.MiB)/mem.LineSize/16/l2PageSets {
		t.Errorf("%d blocks in the table, want %d", n, g.tags.blocks)
	}
}
