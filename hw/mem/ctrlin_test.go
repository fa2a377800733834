package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// ctrlIn, which starts from a block index of the control lines, returns
// exactly the lines a linear scan finds, whatever the buffer's size, the
// order of queries and the lines added between them (the index is shifted
// past a line inserted among the others, kept when the new line comes after
// every other, rebuilt once the lines have doubled).
func TestCtrlInMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkCtrlIn(t, 0, false) })
}

// With hundreds of lines (a GPU-TN node's flags) the hint decides most
// lookups: queries near a line, at it, below it (inside or just outside
// the hint's range) and after lines were added give the scan's lines too.
func TestCtrlInManyLinesMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkCtrlIn(t, rapid.IntRange(64, 300).Draw(t, "premark"), false) })
}

// Lines at a fixed stride, a few of them moved by a line or two (GPU-TN's
// flags and sequence words): ctrlFirst guesses from the even spread
// without the block index while they lie within maxCtrlDev of it, and the
// scan's lines come back whatever the queries and the lines added later.
func TestCtrlInEvenLinesMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		premark := rapid.IntRange(1, 300).Draw(t, "premark")
		checkCtrlIn(t, premark, true)
	})
}

// checkCtrlIn marks premark random lines of a fresh buffer (even: at a
// fixed stride, some moved by up to two lines), then checks ctrlIn against
// a linear scan over random queries and added lines.
func checkCtrlIn(t *rapid.T, premark int, even bool) *region {
	m := New("m", false)
	size := rapid.IntRange(max(1, premark*LineSize), 1<<20).Draw(t, "size")
	if even {
		size = premark * LineSize * rapid.IntRange(1, 16).Draw(t, "stride")
	}
	base := m.Alloc(GPU, uint64(size), "buf")
	r, err := m.find(base, size)
	if err != nil {
		t.Fatal(err)
	}
	if even {
		stride, moved := size/premark, rapid.IntRange(0, 3).Draw(t, "moved")
		for i := range premark {
			a := i*stride + rapid.IntRange(0, stride-1).Draw(t, "in")
			if rapid.IntRange(0, 3).Draw(t, "move") < moved {
				a += rapid.IntRange(-2, 2).Draw(t, "by") * LineSize
			}
			m.MarkControl(base+Addr(min(max(a, 0), size-1)), 1)
		}
	}
	for len(r.ctrl) < premark {
		m.MarkControl(base+Addr(rapid.IntRange(0, size-1).Draw(t, "pre")), 1)
	}
	for range rapid.IntRange(1, 200).Draw(t, "ops") {
		a := base + Addr(rapid.IntRange(0, size-1).Draw(t, "a"))
		if len(r.ctrl) > 0 && rapid.Bool().Draw(t, "near") {
			// Near a line: at, before or after it (the hint's bounds).
			c := r.ctrl[rapid.IntRange(0, len(r.ctrl)-1).Draw(t, "line")].addr()
			a = max(base, min(base+Addr(size)-1, c+Addr(rapid.IntRange(-2*LineSize, 2*LineSize).Draw(t, "off"))))
		}
		n := rapid.IntRange(1, min(4096, int(base+Addr(size)-a))).Draw(t, "n")
		switch rapid.IntRange(0, 5).Draw(t, "mark") {
		case 0:
			n = min(n, 256)
			m.MarkControl(a, n)
			continue
		case 1: // after every line so far (the index is kept)
			next := base
			if len(r.ctrl) > 0 {
				next = r.ctrl[len(r.ctrl)-1].addr() + LineSize
			}
			if next < base+Addr(size) {
				next += Addr(rapid.IntRange(0, int(base+Addr(size)-next-1)).Draw(t, "gap"))
				m.MarkControl(next, 1)
			}
			continue
		}
		checkCtrlInAt(t, r, a, n)
		// Then a few lines below: inside the bounds the first query
		// left, or just outside them.
		if b := a - Addr(rapid.IntRange(0, 4).Draw(t, "below"))*LineSize; b >= base && b < a {
			checkCtrlInAt(t, r, b, min(n, int(base+Addr(size)-b)))
		}
	}
	return r
}

// checkCtrlInAt compares r.ctrlIn(a, n) with a linear scan of r.ctrl.
func checkCtrlInAt(t *rapid.T, r *region, a Addr, n int) {
	var want []Addr
	for _, c := range r.ctrl {
		if c.addr()+LineSize > a && c.addr() < a+Addr(n) {
			want = append(want, c.addr())
		}
	}
	got := r.ctrlIn(a, n)
	if len(got) != len(want) {
		t.Fatalf("ctrlIn(%#x, %d) = %d lines, scan %d", a, n, len(got), len(want))
	}
	for i := range got {
		if got[i].addr() != want[i] {
			t.Fatalf("ctrlIn(%#x, %d)[%d] = %#x, scan %#x", a, n, i, got[i].addr(), want[i])
		}
	}
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
		// ReadControlRuns returns that span's control lines as increasing,
		// separate runs (nil without control lines), and WriteRuns of them
		// into another memory writes what Write of the span writes.
		data, at, span, offs, lens := m.ReadControlRuns(a, n)
		if lo == hi {
			if data != nil {
				t.Fatalf("ReadControlRuns(%#x, %d) = %d bytes, want none", a, n, len(data))
			}
			return
		}
		if at != lo || span != hi-lo {
			t.Fatalf("ReadControlRuns(%#x, %d): span [%d, +%d), want [%d, %d)", a, n, at, span, lo, hi)
		}
		dense, k := make([]byte, span), uint64(0)
		for i := range offs {
			if i > 0 && offs[i] <= offs[i-1]+lens[i-1] {
				t.Fatalf("runs %d and %d overlap or touch: %v %v", i-1, i, offs, lens)
			}
			copy(dense[offs[i]:offs[i]+lens[i]], data[k:k+lens[i]])
			k += lens[i]
		}
		if k != uint64(len(data)) || !bytes.Equal(dense, got[lo:hi]) {
			t.Fatalf("ReadControlRuns(%#x, %d) = runs %v %v, not got[%d:%d]", a, n, offs, lens, lo, hi)
		}
		// Destinations with a control word on every line: what lies
		// between the runs is written as zeros, as Write's span writes it.
		var w [2]*Memory
		var d [2]Addr
		for i := range w {
			w[i] = New("w", false)
			d[i] = w[i].Alloc(GPU, size, "buf")
			for l := Addr(0); l < size; l += LineSize {
				w[i].MarkControl(d[i]+l, 8)
				w[i].Store64(d[i]+l, 7)
			}
		}
		w1, w2, d1, d2 := w[0], w[1], d[0], d[1]
		w1.Write(d1+Addr(a-base)+Addr(at), got[lo:hi])
		w2.WriteRuns(d2+Addr(a-base)+Addr(at), span, offs, lens, data)
		b1, b2 := make([]byte, size), make([]byte, size)
		w1.Read(d1, b1)
		w2.Read(d2, b2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("WriteRuns of ReadControlRuns(%#x, %d) differs from Write of its span", a, n)
		}
	})
}
