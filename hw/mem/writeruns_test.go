package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// WriteRuns leaves bytes, control words and touches as Write of the dense
// buffer (zeros but for the runs) does, in functional and payload-free
// memory, with runs anywhere, cut at the write's end.
func TestWriteRunsMatchesWrite(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		functional := rapid.Bool().Draw(t, "functional")
		size := rapid.IntRange(64, 4096).Draw(t, "size")
		ctrl := rapid.SliceOfN(rapid.IntRange(0, size/8-1), 0, 8).Draw(t, "ctrl")
		dirty := rapid.SliceOfN(rapid.Uint64(), len(ctrl), len(ctrl)).Draw(t, "dirty")
		off := rapid.IntRange(0, size-1).Draw(t, "off")
		n := rapid.IntRange(1, size-off).Draw(t, "n")
		var offs, lens []uint64
		var src []byte
		for o := rapid.IntRange(0, n).Draw(t, "first"); o < n+100; {
			l := rapid.IntRange(1, 150).Draw(t, "len")
			offs, lens = append(offs, uint64(o)), append(lens, uint64(l))
			src = append(src, rapid.SliceOfN(rapid.Byte(), l, l).Draw(t, "run")...)
			o += l + rapid.IntRange(0, 200).Draw(t, "gap")
		}
		dense := make([]byte, n+400)
		k := uint64(0)
		for i, o := range offs {
			copy(dense[o:], src[k:k+lens[i]])
			k += lens[i]
		}
		var mems [2]*Memory
		var bases [2]Addr
		var woken [2]int
		for i := range mems {
			m := New("m", functional)
			a := m.Alloc(GPU, uint64(size), "buf")
			for k, w := range ctrl {
				m.MarkControl(a+Addr(8*w), 8)
				m.Store64(a+Addr(8*w), dirty[k])
			}
			i := i
			m.onTouch = append(m.onTouch, func(Addr, int) { woken[i]++ })
			mems[i], bases[i] = m, a
		}
		mems[0].Write(bases[0]+Addr(off), dense[:n])
		mems[1].WriteRuns(bases[1]+Addr(off), n, offs, lens, src)
		for _, w := range ctrl {
			if x, y := mems[0].Load64(bases[0]+Addr(8*w)), mems[1].Load64(bases[1]+Addr(8*w)); x != y {
				t.Fatalf("control word %d: Write left %#x, WriteRuns %#x", w, x, y)
			}
		}
		if functional && !bytes.Equal(mems[0].Bytes(bases[0], size), mems[1].Bytes(bases[1], size)) {
			t.Fatalf("bytes differ")
		}
		if woken[0] != woken[1] {
			t.Fatalf("touches: Write %d, WriteRuns %d", woken[0], woken[1])
		}
	})
}
