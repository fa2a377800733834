package nic

import (
	"math/rand/v2"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestLineIndexMatchesMap: the PPB's line index answers as a map does
// over random puts, deletions (with backward shifts across the table's
// wrap) and resets, on addresses that collide in small tables.
func TestLineIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x lineIndex
	want := map[mem.Addr]int32{}
	for step := range 50_000 {
		l := mem.Addr(1+r.IntN(300)) * mem.LineSize
		switch op := r.IntN(10); {
		case op < 5:
			if _, ok := want[l]; !ok {
				v := int32(r.IntN(1 << 20))
				x.put(l, v)
				want[l] = v
			}
		case op < 9:
			x.del(l)
			delete(want, l)
		default:
			if r.IntN(100) == 0 {
				x.reset()
				clear(want)
			}
		}
		for k := mem.Addr(1); k <= 300; k++ {
			a := k * mem.LineSize
			v, ok := x.get(a)
			w, wok := want[a]
			if ok != wok || v != w {
				t.Fatalf("step %d: get(%#x) = %d, %v; want %d, %v", step, a, v, ok, w, wok)
			}
		}
		if x.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, x.n, len(want))
		}
	}
}

// TestPPBZeroReadsMatchLineByLine: the PPB's bookkeeping of payload-free
// reads (readZeros, whose long reads of lines it does not hold replace
// its content at once) leaves the same hits, misses and lines in the same
// FIFO order as a FIFO of Lines lines updated line by line, over random
// reads of 1 to 3 × Lines lines that overlap earlier ones, data lines
// between them (whose slots a zero read reuses reads as zeros), and
// flushes.
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
				p.index.reset()
				p.head, p.n = 0, 0
				fifo = fifo[:0]
				continue
			case op < 4: // a data read of a line above the zero ones: its bytes filled
				d := mem.Addr(1<<20+r.IntN(2*lines)) * mem.LineSize
				if _, ok := p.index.get(d); !ok {
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
			for k, f := range fifo {
				i := (p.head + k) % p.Lines
				if p.at[i] != f {
					t.Fatalf("lines %d step %d: line %d of the FIFO is %#x, want %#x", lines, step, k, p.at[i], f)
				}
				if j, ok := p.index.get(f); !ok || int(j) != i {
					t.Fatalf("lines %d step %d: index of %#x = %d, %v; want %d", lines, step, f, j, ok, i)
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
