package nic

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestPPBZeroReadsMatchLineByLine: the PPB's bookkeeping of payload-free
// reads (readZeros, whose long reads of lines it does not hold replace
// its content at once) leaves the same hits, misses and lines in the same
// FIFO order as a FIFO of Lines lines updated line by line, over random
// reads of 1 to 3 × Lines lines that overlap earlier ones, data lines
// between them (whose slots a zero read reuses reads as zeros), and
// flushes; the run index (lookup) finds every line held in its slot and
// no other.
func TestPPBZeroReadsMatchLineByLine(t *testing.T) {
	for _, lines := range []int{1, 5, 64, 70} {
		r := rand.New(rand.NewPCG(3, uint64(lines)))
		p := &PPB{Lines: lines}
		var fifo []mem.Addr // the reference, oldest first
		var hits, misses uint64
		for step := range 20_000 {
			l := mem.Addr(1+r.IntN(8*lines)) * mem.LineSize
			end := l + mem.Addr(1+r.IntN(3*lines*int(mem.LineSize)))
			switch op := r.IntN(20); {
			case op == 0:
				p.empty()
				fifo = fifo[:0]
				continue
			case op < 4: // a data read of a line above the zero ones: its bytes filled
				d := mem.Addr(1<<20+r.IntN(2*lines)) * mem.LineSize
				if _, ok := p.lookup(d); !ok {
					i := p.insert(d)
					p.bytes[i] = [mem.LineSize]byte{1}
					if len(fifo) == lines {
						fifo = fifo[1:]
					}
					fifo = append(fifo, d)
				}
				continue
			}
			p.readZeros(mem.Line(l), end)
			for a := mem.Line(l); a < end; a += mem.LineSize {
				held := false
				for _, f := range fifo {
					held = held || f == a
				}
				if held {
					hits++
					continue
				}
				misses++
				if len(fifo) == lines {
					fifo = fifo[1:]
				}
				fifo = append(fifo, a)
			}
			if p.stats.Hits != hits || p.stats.Misses != misses || p.n != len(fifo) {
				t.Fatalf("lines %d step %d: %d hits, %d misses, %d lines; want %d, %d, %d", lines, step, p.stats.Hits, p.stats.Misses, p.n, hits, misses, len(fifo))
			}
			for range 8 { // and no line it does not hold
				a := mem.Addr(1+r.IntN(12*lines)) * mem.LineSize
				if r.IntN(2) == 0 {
					a = mem.Addr(1<<20+r.IntN(2*lines)) * mem.LineSize
				}
				held := false
				for _, f := range fifo {
					held = held || f == a
				}
				if _, ok := p.lookup(a); ok != held {
					t.Fatalf("lines %d step %d: lookup(%#x) finds it %v; want %v", lines, step, a, ok, held)
				}
			}
			for k, f := range fifo {
				i := (p.head + k) % p.Lines
				if j, ok := p.lookup(f); !ok || j != i {
					t.Fatalf("lines %d step %d: line %#x in slot %d, %v; want %d", lines, step, f, j, ok, i)
				}
				want := [mem.LineSize]byte{}
				if f >= 1<<20*mem.LineSize {
					want[0] = 1
				}
				// What slotBytes would return, without zeroing the slot
				// (a check that changed the state would hide a stale mark).
				b := p.bytes[i]
				if p.zero[i/64]&(1<<(i%64)) != 0 {
					b = [mem.LineSize]byte{}
				}
				if b != want {
					t.Fatalf("lines %d step %d: line %#x holds %v, want %v", lines, step, f, b[:8], want[:8])
				}
			}
		}
	}
}

// TestPPBFillZerosMatchesInserts: fillZeros leaves exactly the state
// (runs, ring, zero marks, byte slots) that emptying the PPB and inserting
// and marking zero each of Lines consecutive lines in turn leaves, from
// whatever the PPB held before (lines of data and zero reads, wrapped
// rings, several runs).
func TestPPBFillZerosMatchesInserts(t *testing.T) {
	for _, lines := range []int{1, 5, 63, 64, 65, 70, 130} {
		r := rand.New(rand.NewPCG(7, uint64(lines)))
		for trial := range 200 {
			a, b := twinPPBs(r, lines)
			l := mem.Addr(1+r.IntN(8*lines)) * mem.LineSize
			a.fillZeros(l)
			b.empty()
			for k := range lines {
				b.markZero(b.insert(l + mem.Addr(k)*mem.LineSize))
			}
			if a.head != b.head || a.n != b.n || !slices.Equal(a.runs[a.r0:], b.runs[b.r0:]) ||
				!slices.Equal(a.zero, b.zero) || len(a.bytes) != len(b.bytes) {
				t.Fatalf("lines %d trial %d: fillZeros left head %d n %d runs %v zero %x (%d slots); inserts %d %d %v %x (%d)",
					lines, trial, a.head, a.n, a.runs[a.r0:], a.zero, len(a.bytes), b.head, b.n, b.runs[b.r0:], b.zero, len(b.bytes))
			}
			for i := range lines {
				if *a.slotBytes(i) != *b.slotBytes(i) {
					t.Fatalf("lines %d trial %d: slot %d differs", lines, trial, i)
				}
			}
		}
	}
}

// TestPPBInsertZerosMatchesInserts: insertZeros of k < Lines lines the
// PPB does not hold leaves the state that inserting and marking zero each
// line in turn leaves (ring, zero marks, byte slots, and every line held
// in the same slot; the runs may be cut differently), from histories of
// data and zero lines, wrapped rings and several runs.
func TestPPBInsertZerosMatchesInserts(t *testing.T) {
	for _, lines := range []int{2, 5, 63, 64, 65, 130} {
		r := rand.New(rand.NewPCG(11, uint64(lines)))
		for trial := range 300 {
			a, b := twinPPBs(r, lines)
			k := 1 + r.IntN(lines-1)
			l := mem.Addr(1+r.IntN(8*lines)) * mem.LineSize
			if r.IntN(3) == 0 && a.n > 0 { // right after the newest run
				last := a.runs[len(a.runs)-1]
				l = last.start + mem.Addr(last.n)*mem.LineSize
			}
			if a.holdsAny(l, l+mem.Addr(k)*mem.LineSize) {
				continue
			}
			a.insertZeros(l, k)
			for j := range k {
				b.markZero(b.insert(l + mem.Addr(j)*mem.LineSize))
			}
			if a.head != b.head || a.n != b.n || !slices.Equal(a.zero, b.zero) || len(a.bytes) != len(b.bytes) {
				t.Fatalf("lines %d trial %d: insertZeros left head %d n %d zero %x (%d slots); inserts %d %d %x (%d)",
					lines, trial, a.head, a.n, a.zero, len(a.bytes), b.head, b.n, b.zero, len(b.bytes))
			}
			for x := mem.Addr(0); x < mem.Addr(10*lines)*mem.LineSize; x += mem.LineSize {
				i, ok := a.lookup(x)
				j, okb := b.lookup(x)
				if ok != okb || i != j {
					t.Fatalf("lines %d trial %d: line %#x in slot %d, %v; inserts %d, %v", lines, trial, x, i, ok, j, okb)
				}
			}
			for i := range lines {
				if i < len(a.bytes) && *a.slotBytes(i) != *b.slotBytes(i) {
					t.Fatalf("lines %d trial %d: slot %d differs", lines, trial, i)
				}
			}
		}
	}
}

// vreadLineByLine is vread of [a, a+len(dst)) line by line through the
// PPB (its form before the payload-free shortcuts), the reference of
// TestVreadMatchesLineByLine.
func (n *NIC) vreadLineByLine(a mem.Addr, dst []byte) {
	p := n.vs().ppb
	end := a + mem.Addr(len(dst))
	for l := mem.Line(a); l < end; l += mem.LineSize {
		var line *[mem.LineSize]byte
		if i, ok := p.lookup(l); ok {
			line = p.slotBytes(i)
			p.stats.Hits++
			n.checkPPB(l, line)
		} else {
			line = &p.bytes[p.insert(l)]
			p.stats.Misses++
			n.mem.Read(l, line[:])
		}
		lo, hi := max(l, a), min(l+mem.LineSize, end)
		copy(dst[lo-a:hi-a], line[lo-l:hi-l])
	}
}

// TestVreadMatchesLineByLine: NIC reads of a payload-free GPU buffer with
// control words here and there (vread, whose lines before the first and
// after the last control line are PPB bookkeeping only) return the bytes
// and leave the hits, misses, stale hits and held lines that reading
// every line through the PPB does, over random unaligned reads, control
// stores between them (stale PPB lines) and flushes.
func TestVreadMatchesLineByLine(t *testing.T) {
	for _, lines := range []int{5, 32, 64} {
		r := rand.New(rand.NewPCG(5, uint64(lines)))
		m := mem.New("gpu", false)
		base := m.Alloc(mem.GPU, 1<<16, "buf")
		a, b := &NIC{mem: m}, &NIC{mem: m}
		a.SetPPB(&PPB{Lines: lines})
		b.SetPPB(&PPB{Lines: lines})
		for step := range 20_000 {
			switch op := r.IntN(40); {
			case op == 0:
				a.vs().ppb.empty()
				b.vs().ppb.empty()
				continue
			case op < 4: // a control word (a stamp), written now and then
				w := base + mem.Addr(r.IntN(1<<13))*8
				m.MarkControl(w, 8)
				m.Store64(w, 1+r.Uint64N(1<<40))
				continue
			}
			at := base + mem.Addr(r.IntN(1<<16-4096))
			ln := 1 + r.IntN(3*lines*int(mem.LineSize))
			ln = min(ln, int(base+1<<16-at))
			got, want := make([]byte, ln), make([]byte, ln)
			for i := range got {
				got[i], want[i] = 0xee, 0xdd
			}
			a.vread(at, got)
			b.vreadLineByLine(at, want)
			pa, pb := a.vs().ppb, b.vs().ppb
			if !slices.Equal(got, want) || pa.stats != pb.stats {
				t.Fatalf("lines %d step %d: read %#x+%d: stats %+v; line by line %+v; bytes equal %v",
					lines, step, at, ln, pa.stats, pb.stats, slices.Equal(got, want))
			}
			// The lines held, oldest first, and their bytes (which slot
			// holds which is the PPB's own business).
			ha, hb := heldLines(pa), heldLines(pb)
			if !slices.Equal(ha, hb) {
				t.Fatalf("lines %d step %d: holds %v; line by line %v", lines, step, ha, hb)
			}
		}
	}
}

// heldLine is a line the PPB holds and the bytes a read of it returns.
type heldLine struct {
	l mem.Addr
	b [mem.LineSize]byte
}

// heldLines returns the lines p holds, oldest first, with their bytes
// (as slotBytes returns them, without changing p).
func heldLines(p *PPB) []heldLine {
	var out []heldLine
	for _, r := range p.runs[p.r0:] {
		for k := range r.n {
			i := (r.slot + k) % p.Lines
			b := p.bytes[i]
			if p.zero[i/64]&(1<<(i%64)) != 0 {
				b = [mem.LineSize]byte{}
			}
			out = append(out, heldLine{l: r.start + mem.Addr(k)*mem.LineSize, b: b})
		}
	}
	return out
}

// runFlushes runs NIC reads of a payload-free GPU buffer with control
// words and PPB flushes at random times from one seed, some at the same
// picosecond as a flush's end and scheduled before or after it, and
// returns what each read returned and counted, and the final counts.
func runFlushes(seed uint64, events bool) string {
	r := rand.New(rand.NewPCG(seed, 9))
	e := sim.New(1)
	m := mem.New("gpu", false)
	base := m.Alloc(mem.GPU, 1<<14, "buf")
	for k := range 8 {
		w := base + mem.Addr(k*1500)
		m.MarkControl(w, 8)
		m.Store64(w, uint64(k+1))
	}
	n := &NIC{mem: m, e: e}
	n.SetPPB(&PPB{Lines: 16, FlushLatency: 200, flushEvents: events})
	var out []string
	var ends []sim.Time
	for range 300 {
		t := sim.Time(r.IntN(20_000))
		if r.IntN(3) == 0 {
			e.At(t, func() { ends = append(ends, n.FlushPPBAt(e.Now()+sim.Time(r.IntN(50)))) })
			continue
		}
		at := base + mem.Addr(r.IntN(1<<14-2048))
		ln := 1 + r.IntN(2048)
		read := func() {
			b := make([]byte, ln)
			n.vread(at, b)
			var sum uint64
			for _, x := range b {
				sum = sum*31 + uint64(x)
			}
			out = append(out, fmt.Sprintf("%v %x %+v", e.Now(), sum, n.vs().ppb.stats))
		}
		if len(ends) > 0 && r.IntN(2) == 0 { // at a flush's end, before or after it
			end := ends[r.IntN(len(ends))]
			if end >= t {
				if r.IntN(2) == 0 {
					e.At(t, func() { e.At(end, read) })
				} else {
					e.At(end, func() { e.At(end, read) })
				}
				continue
			}
		}
		e.At(t, read)
	}
	if err := e.Run(); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v\n%+v end %v", out, n.PPBStats(), e.Now())
}

// TestPPBFlushMarksMatchEvents: a PPB flush's end as a mark, the PPB
// emptied at its next use (settle), leaves every NIC read the bytes, hits,
// misses and stale hits, and the run the flush count and end time, of the
// flush's end as an event, reads at the same picosecond before and after
// it included.
func TestPPBFlushMarksMatchEvents(t *testing.T) {
	for seed := range uint64(40) {
		want, got := runFlushes(seed, true), runFlushes(seed, false)
		if got != want {
			t.Fatalf("seed %d:\nmarks  %s\nevents %s", seed, got, want)
		}
	}
}

// twinPPBs returns two PPBs of lines lines with the same random history:
// up to 3*lines inserts of distinct lines, each marked zero or given data,
// wrapping the ring and cutting several runs.
func twinPPBs(r *rand.Rand, lines int) (a, b *PPB) {
	a, b = &PPB{Lines: lines}, &PPB{Lines: lines}
	for range r.IntN(3 * lines) {
		l := mem.Addr(1+r.IntN(4*lines)) * mem.LineSize
		if _, ok := a.lookup(l); ok {
			continue
		}
		i, j := a.insert(l), b.insert(l)
		if r.IntN(2) == 0 {
			a.markZero(i)
			b.markZero(j)
		} else {
			a.bytes[i], b.bytes[j] = [mem.LineSize]byte{2}, [mem.LineSize]byte{2}
		}
	}
	return a, b
}
