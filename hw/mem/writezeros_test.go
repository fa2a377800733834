package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// WriteAfterZeros leaves memory as Write of the dense buffer (zeros up to
// at, then src) does — bytes of a functional memory, control words of a
// payload-free one, whatever control lines the range crosses — and wakes
// the same lines' watchers.
func TestWriteAfterZerosMatchesWrite(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		functional := rapid.Bool().Draw(t, "functional")
		size := rapid.IntRange(64, 4096).Draw(t, "size")
		ctrl := rapid.SliceOfN(rapid.IntRange(0, size/8-1), 0, 8).Draw(t, "ctrl")
		dirty := rapid.SliceOfN(rapid.Uint64(), len(ctrl), len(ctrl)).Draw(t, "dirty")
		off := rapid.IntRange(0, size-1).Draw(t, "off")
		n := rapid.IntRange(1, size-off).Draw(t, "n")
		at := rapid.IntRange(0, n).Draw(t, "at")
		src := rapid.SliceOfN(rapid.Byte(), n-at, n-at).Draw(t, "src")
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
		dense := append(make([]byte, at), src...)
		mems[0].Write(bases[0]+Addr(off), dense)
		mems[1].WriteAfterZeros(bases[1]+Addr(off), n, at, src)
		for _, w := range ctrl {
			if x, y := mems[0].Load64(bases[0]+Addr(8*w)), mems[1].Load64(bases[1]+Addr(8*w)); x != y {
				t.Fatalf("control word %d: Write left %#x, WriteAfterZeros %#x", w, x, y)
			}
		}
		if functional {
			x, y := mems[0].Bytes(bases[0], size), mems[1].Bytes(bases[1], size)
			if !bytes.Equal(x, y) {
				t.Fatalf("bytes differ")
			}
		}
		if woken[0] != woken[1] {
			t.Fatalf("touches: Write %d, WriteAfterZeros %d", woken[0], woken[1])
		}
	})
}
