package nic

import (
	"math/rand/v2"
	"testing"
)

// TestTableIsSparse: a table holds every number it was grown by, nil until
// set, in the order pushed and reserved; each visits the set ones in
// number order; and only chunks with a set entry are made.
func TestTableIsSparse(t *testing.T) {
	var tb table[int]
	vals := make([]int, 10)
	for i := range vals {
		vals[i] = i
	}
	if i := tb.push(&vals[0]); i != 0 {
		t.Fatalf("first push at %d", i)
	}
	tb.grow(5000)
	if i := tb.push(&vals[1]); i != 5001 || tb.Len() != 5002 {
		t.Fatalf("push after grow at %d, len %d", i, tb.Len())
	}
	tb.set(4000, &vals[2])
	tb.set(17, &vals[3])
	tb.set(3000, nil) // a nil set makes no chunk
	for i, want := range map[int]*int{0: &vals[0], 17: &vals[3], 4000: &vals[2], 5001: &vals[1], 18: nil, 3000: nil} {
		if got := tb.get(i); got != want {
			t.Errorf("get(%d) = %v, want %v", i, got, want)
		}
	}
	var order []int
	tb.each(func(v *int) { order = append(order, *v) })
	if len(order) != 4 || order[0] != 0 || order[1] != 3 || order[2] != 2 || order[3] != 1 {
		t.Errorf("each visited %v, want [0 3 2 1]", order)
	}
	made := 0
	for _, c := range tb.chunks {
		if c != nil {
			made++
		}
	}
	if made != 3 { // 0 and 17 share one
		t.Errorf("%d chunks made, want 3", made)
	}
}

// TestInMessagesMemo: the verbs state's in-flight messages looked up
// through their one-entry memo (inGet, inSet, inDel) are the map's, over
// random lookups, insertions, replacements and deletions of a few keys.
func TestInMessagesMemo(t *testing.T) {
	v := &verbs{in: map[uint64]*rcIn{}}
	ref := map[uint64]*rcIn{}
	r := rand.New(rand.NewPCG(1, 2))
	for step := range 20_000 {
		k := uint64(r.IntN(6))
		switch r.IntN(4) {
		case 0:
			m := &rcIn{msg: uint64(step)}
			v.inSet(k, m)
			ref[k] = m
		case 1:
			v.inDel(k)
			delete(ref, k)
		default:
			if got := v.inGet(k); got != ref[k] {
				t.Fatalf("step %d: inGet(%d) = %p, want %p", step, k, got, ref[k])
			}
		}
		if len(v.in) != len(ref) {
			t.Fatalf("step %d: %d messages, want %d", step, len(v.in), len(ref))
		}
	}
}
