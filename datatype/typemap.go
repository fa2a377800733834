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
	yield    func(int, int) bool
	off, len int
	stop     bool
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

// walk emits the type map of one element of t placed at base.
func (t *Type) walk(base int, m *merger) {
	if m.stop || t.size == 0 {
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
		for i := range t.count {
			t.old.walk(base+i*e, m)
		}
	case CombinerVector, CombinerHVector:
		sb := t.stride
		if t.comb == CombinerVector {
			sb *= e
		}
		for i := range t.count {
			for j := range t.blocklen {
				t.old.walk(base+i*sb+j*e, m)
			}
		}
	case CombinerIndexed, CombinerHIndexed:
		for i, bl := range t.bls {
			d := t.displs[i]
			if t.comb == CombinerIndexed {
				d *= e
			}
			for j := range bl {
				t.old.walk(base+d+j*e, m)
			}
		}
	case CombinerIndexedBlock, CombinerHIndexedBlock:
		for _, d := range t.displs {
			if t.comb == CombinerIndexedBlock {
				d *= e
			}
			for j := range t.blocklen {
				t.old.walk(base+d+j*e, m)
			}
		}
	case CombinerStruct:
		for i, ty := range t.types {
			for j := range t.bls[i] {
				ty.walk(base+t.displs[i]+j*ty.Extent(), m)
			}
		}
	case CombinerSubarray:
		t.subInner.walk(base+t.subDisp, m)
	case CombinerResized, CombinerDup:
		t.old.walk(base, m)
	}
}
