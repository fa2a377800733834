package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// A snapshot yields the bytes its range held when it was taken, whatever
// happens to the memory before it is consumed: writes (Write, Store64,
// writes through Bytes) inside, across and outside its range, other
// snapshots taken, materialised, released or consumed, new allocations
// (which move the regions), and its destination in the same memory. The
// reference copies eagerly.
func TestSnapshotYieldsTheBytesOfItsMoment(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New("m", true)
		const size = 4096
		bases := []Addr{m.Alloc(Host, size, "a"), m.Alloc(GPU, size, "b")}
		type live struct {
			s    *Snapshot
			want []byte
			buf  []byte
		}
		var snaps []live
		for range rapid.IntRange(1, 120).Draw(t, "ops") {
			base := bases[rapid.IntRange(0, len(bases)-1).Draw(t, "region")]
			off := rapid.IntRange(0, size-1).Draw(t, "off")
			n := rapid.IntRange(1, min(512, size-off)).Draw(t, "n")
			a := base + Addr(off)
			switch op := rapid.IntRange(0, 7).Draw(t, "op"); op {
			case 0, 1: // take a snapshot
				want := make([]byte, n)
				copy(want, m.Bytes(a, n))
				buf := make([]byte, n)
				snaps = append(snaps, live{m.Snapshot(a, buf), want, buf})
			case 2: // write through Write
				src := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "src")
				m.Write(a, src)
			case 3: // write through a Bytes slice, as kernels do
				b := m.Bytes(a, n)
				for i := range b {
					b[i] ^= 0x5a
				}
			case 4: // a word store
				if n >= 8 {
					m.Store64(a, rapid.Uint64().Draw(t, "v"))
				}
			case 5: // consume a snapshot into memory (a landing)
				if len(snaps) > 0 {
					i := rapid.IntRange(0, len(snaps)-1).Draw(t, "which")
					l := snaps[i]
					snaps = append(snaps[:i], snaps[i+1:]...)
					k := rapid.IntRange(1, len(l.want)).Draw(t, "landed")
					dstOff := rapid.IntRange(0, size-k).Draw(t, "dst")
					dst := m.Bytes(base+Addr(dstOff), k)
					l.s.CopyTo(dst)
					if !bytes.Equal(m.Bytes(base+Addr(dstOff), k), l.want[:k]) {
						t.Fatalf("landed %v, want %v", m.Bytes(base+Addr(dstOff), k), l.want[:k])
					}
				}
			case 6: // materialise or release one (a packet read or detached)
				if len(snaps) > 0 {
					i := rapid.IntRange(0, len(snaps)-1).Draw(t, "which")
					l := snaps[i]
					if rapid.Bool().Draw(t, "release") {
						snaps = append(snaps[:i], snaps[i+1:]...)
						l.s.Release()
					} else {
						l.s.Materialize()
					}
					if !bytes.Equal(l.buf, l.want) {
						t.Fatalf("materialised %v, want %v", l.buf, l.want)
					}
				}
			case 7: // a new allocation moves the regions
				bases = append(bases, m.Alloc(Host, size, "more"))
			}
		}
		for _, l := range snaps {
			got := make([]byte, len(l.want))
			l.s.CopyTo(got)
			if !bytes.Equal(got, l.want) {
				t.Fatalf("at the end %v, want %v", got, l.want)
			}
		}
	})
}

// A snapshot is lazy until something reaches its range: a write elsewhere
// in the allocation leaves it in place, one inside it copies it out.
func TestSnapshotStaysLazyUntilItsRangeIsReached(t *testing.T) {
	m := New("m", true)
	a := m.Alloc(Host, 1<<12, "a")
	m.Write(a, bytes.Repeat([]byte{7}, 1<<12))
	s := m.Snapshot(a+1024, make([]byte, 512))
	m.Write(a, []byte{1, 2, 3})
	m.Store64(a+2048, 9)
	if !s.lazy {
		t.Fatal("a write outside the snapshot's range materialised it")
	}
	m.Store64(a+1024+504, 9)
	if s.lazy {
		t.Fatal("a write inside the snapshot's range left it lazy")
	}
	if !bytes.Equal(s.buf, bytes.Repeat([]byte{7}, 512)) {
		t.Fatalf("materialised %v", s.buf)
	}
}
