package datatype

import "iter"

// Blocks iterates over the flattened type map of count elements of t in pack
// order, as (byte offset from the origin, length) pairs. Entries that are
// adjacent both in memory and in the packed stream are merged, so the result
// is the iovec list an MPI library would build. Offsets may be negative.
//
// Blocks walks the type description directly (it is the package's reference
// interpreter); Committed.Segment is the fast way to get the same blocks.
func (t *Type) Blocks(count int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		var m merger
		m.yield = yield
		for i := 0; i < count && !m.stop; i++ {
			t.walk(i*t.Extent(), &m)
		}
		m.flush()
	}
}

// BlocksWithin is Blocks taking at most work steps of the type-map walk
// (one per element visited; a run of abutting named elements is one), so
// that a caller printing a type's head answers in bounded time whatever
// its counts. truncated, called after the loop, reports whether the walk
// stopped for the budget (the blocks seen are then a prefix).
func (t *Type) BlocksWithin(count, work int) (blocks iter.Seq2[int, int], truncated func() bool) {
	var m merger
	return func(yield func(int, int) bool) {
		m = merger{yield: yield, budget: max(1, work)}
		for i := 0; i < count && !m.stop; i++ {
			t.walk(i*t.Extent(), &m)
		}
		m.flush()
	}, func() bool { return m.truncated }
}

// NumBlocks is the number of merged contiguous blocks in count elements of t.
func (t *Type) NumBlocks(count int) int {
	n := 0
	for range t.Blocks(count) {
		n++
	}
	return n
}

// merger merges adjacent blocks before yielding them.
type merger struct {
	yield     func(int, int) bool
	off, len  int
	stop      bool
	budget    int // walk steps allowed; 0: unbounded
	steps     int
	truncated bool // stopped because steps reached budget
}

func (m *merger) add(off, n int) {
	if m.stop || n == 0 {
		return
	}
	if m.len > 0 && m.off+m.len == off {
		m.len += n
		return
	}
	m.flush()
	m.off, m.len = off, n
}

func (m *merger) flush() {
	if m.len > 0 && !m.stop {
		if !m.yield(m.off, m.len) {
			m.stop = true
		}
	}
	m.len = 0
}

// step counts one step of the walk against the budget; false (the walk
// stopped, truncated) once the budget is spent.
func (m *merger) step() bool {
	if m.budget > 0 {
		if m.steps++; m.steps > m.budget {
			m.stop, m.truncated = true, true
			return false
		}
	}
	return true
}

// walk emits the type map of one element of t placed at base.
func (t *Type) walk(base int, m *merger) {
	if m.stop || t.size == 0 {
		return
	}
	if !m.step() {
		return
	}
	e := 0
	if t.old != nil {
		e = t.old.Extent()
	}
	switch t.comb {
	case CombinerNamed:
		m.add(base, t.size)
	case CombinerContiguous:
		if t.old.comb == CombinerNamed { // abutting elements: one run, whatever the count
			m.add(base, t.count*e)
			return
		}
		for i := 0; i < t.count && !m.stop; i++ { // a consumer that stopped ends the walk, whatever the count
			t.old.walk(base+i*e, m)
		}
	case CombinerVector, CombinerHVector:
		sb := t.stride
		if t.comb == CombinerVector {
			sb *= e
		}
		for i := 0; i < t.count && !m.stop; i++ {
			// Each block after the first is a step: blocks of a named
			// type are added without a walk of their own, so a count of
			// 10^6 vectors of 10^6 abutting blocks merged 10^12 of them
			// within 10^6 steps (ddt inspect --count: hours).
			if i > 0 && !m.step() {
				break
			}
			t.old.run(base+i*sb, t.blocklen, e, m)
		}
	case CombinerIndexed, CombinerHIndexed:
		for i, bl := range t.bls {
			d := t.displs[i]
			if t.comb == CombinerIndexed {
				d *= e
			}
			t.old.run(base+d, bl, e, m)
		}
	case CombinerIndexedBlock, CombinerHIndexedBlock:
		for _, d := range t.displs {
			if t.comb == CombinerIndexedBlock {
				d *= e
			}
			t.old.run(base+d, t.blocklen, e, m)
		}
	case CombinerStruct:
		for i, ty := range t.types {
			ty.run(base+t.displs[i], t.bls[i], ty.Extent(), m)
		}
	case CombinerSubarray:
		t.subInner.walk(base+t.subDisp, m)
	case CombinerResized, CombinerDup:
		t.old.walk(base, m)
	}
}

// run emits n elements of t at base, base+e, ...: a named type's elements
// abut (extent = size), so they are one block, emitted at once however
// large n is; others are walked one by one until the consumer stops.
func (t *Type) run(base, n, e int, m *merger) {
	if t.comb == CombinerNamed && e == t.size {
		if n > 0 {
			m.add(base, n*e)
		}
		return
	}
	for j := 0; j < n && !m.stop; j++ {
		t.walk(base+j*e, m)
	}
}
