package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// ctrlIn, which starts from a block index of the control lines, returns
// exactly the lines a linear scan finds, whatever the buffer's size, the
// order of queries and the lines added between them (the index is rebuilt,
// or kept when the new line comes after every other).
func TestCtrlInMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New("m", false)
		size := rapid.IntRange(1, 1<<20).Draw(t, "size")
		base := m.Alloc(GPU, uint64(size), "buf")
		r, err := m.find(base, size)
		if err != nil {
			t.Fatal(err)
		}
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			a := base + Addr(rapid.IntRange(0, size-1).Draw(t, "a"))
			n := rapid.IntRange(1, min(4096, int(base+Addr(size)-a))).Draw(t, "n")
			switch rapid.IntRange(0, 5).Draw(t, "mark") {
			case 0:
				n = min(n, 256)
				m.MarkControl(a, n)
				continue
			case 1: // after every line so far (the index is kept)
				next := base
				if len(r.ctrl) > 0 {
					next = r.ctrl[len(r.ctrl)-1].line + LineSize
				}
				if next < base+Addr(size) {
					next += Addr(rapid.IntRange(0, int(base+Addr(size)-next-1)).Draw(t, "gap"))
					m.MarkControl(next, 1)
				}
				continue
			}
			var want []Addr
			for _, c := range r.ctrl {
				if c.line+LineSize > a && c.line < a+Addr(n) {
					want = append(want, c.line)
				}
			}
			got := r.ctrlIn(a, n)
			if len(got) != len(want) {
				t.Fatalf("ctrlIn(%#x, %d) = %d lines, scan %d", a, n, len(got), len(want))
			}
			for i := range got {
				if got[i].line != want[i] {
					t.Fatalf("ctrlIn(%#x, %d)[%d] = %#x, scan %#x", a, n, i, got[i].line, want[i])
				}
			}
		}
	})
}

// ReadControlInto on zeros reads what Read reads, and writes nothing
// outside the span it returns.
func TestReadControlIntoMatchesRead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New("m", false)
		const size = 1 << 14
		base := m.Alloc(GPU, size, "buf")
		for range rapid.IntRange(0, 20).Draw(t, "lines") {
			a := base + Addr(rapid.IntRange(0, size-8).Draw(t, "at"))&^7
			m.MarkControl(a, 8)
			m.Store64(a, rapid.Uint64Range(1, 1<<63).Draw(t, "v"))
		}
		a := base + Addr(rapid.IntRange(0, size-1).Draw(t, "a"))
		n := rapid.IntRange(1, int(base+size-a)).Draw(t, "n")
		want := make([]byte, n)
		m.Read(a, want)
		got := make([]byte, n)
		lo, hi := m.ReadControlInto(a, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("ReadControlInto(%#x, %d) differs from Read", a, n)
		}
		for i, x := range got {
			if x != 0 && (i < lo || i >= hi) {
				t.Fatalf("byte %d = %d outside the returned span [%d, %d)", i, x, lo, hi)
			}
		}
		// ReadControl returns that span alone (nil without control lines).
		span, at := m.ReadControl(a, n)
		if lo == hi && span != nil || lo < hi && (at != lo || !bytes.Equal(span, got[lo:hi])) {
			t.Fatalf("ReadControl(%#x, %d) = %d bytes at %d, want got[%d:%d]", a, n, len(span), at, lo, hi)
		}
	})
}
