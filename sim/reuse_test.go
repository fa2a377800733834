package sim

import "testing"

// A FIFO keeps its order across the moves that reuse its storage, and an
// emptied one holds nothing.
func TestFIFOOrderAndReuse(t *testing.T) {
	var f FIFO[int]
	next, want := 0, 0
	for round := range 50 {
		for range round % 7 {
			f.Push(next)
			next++
		}
		for range round % 5 {
			if want == next {
				break
			}
			if got := *f.Front(); got != want {
				t.Fatalf("front = %d, want %d", got, want)
			}
			if got := f.Pop(); got != want {
				t.Fatalf("pop = %d, want %d", got, want)
			}
			want++
		}
		if f.Len() != next-want {
			t.Fatalf("len %d, want %d", f.Len(), next-want)
		}
	}
	for want < next {
		if got := f.Pop(); got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
		want++
	}
	if len(f.buf) != 0 || f.head != 0 {
		t.Fatalf("empty fifo holds %d slots from %d", len(f.buf), f.head)
	}
}

// A free list hands back what was put, last first, then reports empty.
func TestFreeListLastInFirstOut(t *testing.T) {
	var f FreeList[*int]
	a, b := new(int), new(int)
	f.Put(a)
	f.Put(b)
	if got, ok := f.Get(); !ok || got != b {
		t.Fatalf("first Get = %p, %v; want the last put %p", got, ok, b)
	}
	if got, ok := f.Get(); !ok || got != a || f.Len() != 0 {
		t.Fatalf("second Get = %p, %v (len %d); want %p", got, ok, f.Len(), a)
	}
	if got, ok := f.Get(); ok || got != nil {
		t.Fatalf("Get of an empty list = %p, %v", got, ok)
	}
}
