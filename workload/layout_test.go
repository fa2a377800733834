package workload

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestPatternMatchesInputValue checks the periodic pattern against the
// element-wise definition across several periods and start phases.
func TestPatternMatchesInputValue(t *testing.T) {
	for _, r := range []int{0, 3, 63} {
		p := newPattern(func(j int) float32 { return inputValue(r, j) })
		for _, first := range []int{0, 1, 100, 101, 12345} {
			n := 4 * (inputPeriod*patternReps*2 + 7) // longer than one chunk
			b := make([]byte, n)
			p.copyTo(b, first)
			for i, v := range f32(b) {
				if want := inputValue(r, first+i); v != want {
					t.Fatalf("r=%d first=%d: element %d = %v, want %v", r, first, i, v, want)
				}
			}
			if j, ok := p.equal(b, first); !ok {
				t.Fatalf("equal reports element %d of a correct copy", j)
			}
			f32(b)[len(b)/4-3] += 1
			if j, ok := p.equal(b, first); ok || j != first+len(b)/4-3 {
				t.Fatalf("corrupted element %d: equal = %d, %v", first+len(b)/4-3, j, ok)
			}
		}
	}
}

// TestVerifyCatchesOneWrongElement fills a layout with the reference sum
// and checks verify accepts it and rejects a single changed float.
func TestVerifyCatchesOneWrongElement(t *testing.T) {
	l := newRingLayout(10007, 5, 3)
	m := mem.New("m", true)
	base := m.Alloc(mem.GPU, l.totalSize, "buf")
	ref := l.reference()
	for k := range l.n {
		for s := range l.w {
			off, nb := l.sub(k, s)
			elemOff, _ := l.slice(k, s)
			ref.copyTo(m.Bytes(base+mem.Addr(off), int(nb)), l.chunkOff[k]+elemOff)
		}
	}
	if err := l.verify(m, base, ref); err != nil {
		t.Fatal(err)
	}
	off, _ := l.sub(4, 2)
	f32(m.Bytes(base+mem.Addr(off), 4))[0] += 0.125
	if err := l.verify(m, base, ref); err == nil {
		t.Fatal("a wrong element passed verification")
	}
	var sum float32
	for r := range 5 {
		sum += inputValue(r, 7)
	}
	if ref.at(7) != sum {
		t.Fatalf("reference(7) = %v, want %v", ref.at(7), sum)
	}
}

// The remote-task ring made one round at a time (taskRingRounds, in the
// storage of the previous round) is the whole schedule's rounds, for
// every node, with the sync once or every round.
func TestTaskRingRoundsMatchSchedule(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8} {
		l := newRingLayout(10007, n, 1)
		for i := range n {
			for _, perRound := range []bool{false, true} {
				want := taskRingSchedule(l, 4096, i, perRound)
				rounds, round := taskRingRounds(l, 4096, i, perRound)
				if rounds != len(want) {
					t.Fatalf("n=%d node %d perRound %v: %d rounds, want %d", n, i, perRound, rounds, len(want))
				}
				for r := range rounds {
					if got := round(r); !slices.Equal(got, want[r]) {
						t.Fatalf("n=%d node %d perRound %v round %d: %+v, want %+v", n, i, perRound, r, got, want[r])
					}
				}
			}
		}
	}
}

// A node memory recycled from a sweep's point before holds that point's
// bytes, and the input fill does not clear them first (it writes the whole
// data part through mem.Memory.BytesToWrite): the data part it leaves,
// padding and sequence words included, must equal a fill of a fresh
// memory, and the receive slots must still read as zeros.
func TestFillOverwritesARecycledMemoryWhole(t *testing.T) {
	const elems, n, w = 600000, 7, 3 // a layout of megabytes: mapped, recycled
	l := newRingLayout(elems, n, w)
	fresh := mem.New("fresh", true)
	fb := fresh.Alloc(mem.GPU, l.totalSize, "buf")
	fresh.ScratchSlots(fb+mem.Addr(l.recvBase), int(l.totalSize-l.recvBase), int(l.recvSlot))
	l.fill(fresh, fb, 2)
	want := slices.Clone(fresh.Bytes(fb, int(l.recvBase)))

	a := mem.NewArena()
	defer a.Close()
	old := mem.New("old", true)
	old.UseArena(a)
	ob := old.Alloc(mem.GPU, l.totalSize+12345, "buf") // the point before: a little larger
	junk := old.Bytes(ob, int(l.totalSize+12345))
	for i := range junk {
		junk[i] = byte(i%253 + 1)
	}
	old.Release()
	if a.Idle() != 1 {
		t.Fatalf("the old memory's backing did not go back to the arena (%d idle)", a.Idle())
	}
	m := mem.New("m", true)
	m.UseArena(a)
	base := m.Alloc(mem.GPU, l.totalSize, "buf")
	m.ScratchSlots(base+mem.Addr(l.recvBase), int(l.totalSize-l.recvBase), int(l.recvSlot))
	l.fill(m, base, 2)
	if a.Idle() != 0 {
		t.Fatalf("the fill did not take the recycled backing")
	}
	got := m.Bytes(base, int(l.recvBase))
	if i := slices.Compare(got, want); i != 0 {
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("byte %d of the data part = %d after a fill over a recycled memory, want %d (a fresh memory's)", j, got[j], want[j])
			}
		}
	}
	for st := range n - 1 {
		for s := range w {
			slot := make([]byte, l.recvSlot)
			m.Read(base+mem.Addr(l.recv(st, s)), slot)
			if slices.ContainsFunc(slot, func(b byte) bool { return b != 0 }) {
				t.Fatalf("receive slot (%d, %d) holds the old point's bytes", st, s)
			}
		}
	}
}
