package nic

// table is a numbered array of pointers, most of them nil, in chunks made
// when an entry in them is first set: a runtime that reserves a QP number
// and a CQ number for every connection to every peer (GIO: two QPs and a
// CQ per context and PE, thousands per NIC) and makes the few it uses
// pays for those, not for every number (a chunk pointer per 32).
type table[T any] struct {
	n      int
	chunks []*[tableChunk]*T
}

const tableChunk = 32

// Len returns how many numbers the table holds.
func (t *table[T]) Len() int { return t.n }

// grow adds k numbers, nil until set.
func (t *table[T]) grow(k int) {
	t.n += k
	for len(t.chunks)*tableChunk < t.n {
		t.chunks = append(t.chunks, nil)
	}
}

// get returns entry i (0 ≤ i < Len), or nil.
func (t *table[T]) get(i int) *T {
	if c := t.chunks[i/tableChunk]; c != nil {
		return c[i%tableChunk]
	}
	return nil
}

// set sets entry i (0 ≤ i < Len).
func (t *table[T]) set(i int, v *T) {
	c := t.chunks[i/tableChunk]
	if c == nil {
		if v == nil {
			return
		}
		c = new([tableChunk]*T)
		t.chunks[i/tableChunk] = c
	}
	c[i%tableChunk] = v
}

// push appends v and returns its index.
func (t *table[T]) push(v *T) int {
	i := t.n
	t.grow(1)
	t.set(i, v)
	return i
}

// each calls f with every non-nil entry in index order.
func (t *table[T]) each(f func(*T)) {
	for _, c := range t.chunks {
		if c == nil {
			continue
		}
		for _, v := range c {
			if v != nil {
				f(v)
			}
		}
	}
}
