package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// ReadCached returns what Read returns, whatever was written, marked or
// allocated between two reads: payload-free allocations with control
// lines (where it keeps its answer), data allocations (where it does
// not), in a functional memory or not.
func TestReadCachedIsRead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New("m", rapid.Bool().Draw(t, "functional"))
		const size = 4096
		pf := m.Alloc(GPU, size, "ctrl")
		m.MarkControl(pf+64, 128)
		m.MarkControl(pf+1024, 64)
		da := m.AllocData(GPU, size, "data")
		bases := []Addr{pf, da}
		var c ReadCache
		for i := range rapid.IntRange(1, 80).Draw(t, "ops") {
			base := bases[rapid.IntRange(0, 1).Draw(t, "alloc")]
			off := rapid.IntRange(0, size-64).Draw(t, "off")
			n := rapid.IntRange(0, 64).Draw(t, "n")
			a := base + Addr(off)
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 0:
				m.Write(a, bytes.Repeat([]byte{byte(i + 1)}, n))
			case 1:
				m.Store64(a&^7, uint64(i)<<8|0xff)
			case 2:
				offs, lens := []uint64{uint64(n / 2)}, []uint64{uint64(n - n/2)}
				m.WriteRuns(a, n, offs, lens, bytes.Repeat([]byte{byte(i + 7)}, n-n/2))
			case 3:
				m.MarkControl(a, n)
			case 4:
				m.Alloc(Host, 256, "later") // moves the regions
			default: // read the same range again, or a new one
				if rapid.Bool().Draw(t, "again") && c.m != nil {
					a, n = c.a, c.n
				}
				got, want := make([]byte, n), make([]byte, n)
				m.ReadCached(&c, a, got)
				m.Read(a, want)
				if !bytes.Equal(got, want) {
					t.Fatalf("ReadCached(%#x, %d) = %v, Read %v", uint64(a), n, got, want)
				}
			}
		}
	})
}
