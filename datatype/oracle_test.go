package datatype

import (
	"fmt"
	"slices"
)

// entry is one elementary type-map entry: size bytes at off.
type entry struct{ off, size int }

// naiveMap expands count elements of t into elementary entries, straight
// from the MPI definitions (subarrays by enumerating their indices). It is
// the oracle the committed engine is checked against.
func naiveMap(t *Type, count int) []entry {
	var out []entry
	for i := range count {
		out = naiveAppend(out, t, i*t.Extent())
	}
	return out
}

func naiveAppend(out []entry, t *Type, base int) []entry {
	var e int
	if t.old != nil {
		e = t.old.Extent()
	}
	switch t.comb {
	case CombinerNamed:
		return append(out, entry{base, t.size})
	case CombinerContiguous:
		for i := range t.count {
			out = naiveAppend(out, t.old, base+i*e)
		}
	case CombinerVector:
		for i := range t.count {
			for j := range t.blocklen {
				out = naiveAppend(out, t.old, base+(i*t.stride+j)*e)
			}
		}
	case CombinerHVector:
		for i := range t.count {
			for j := range t.blocklen {
				out = naiveAppend(out, t.old, base+i*t.stride+j*e)
			}
		}
	case CombinerIndexed:
		for i, bl := range t.bls {
			for j := range bl {
				out = naiveAppend(out, t.old, base+(t.displs[i]+j)*e)
			}
		}
	case CombinerHIndexed:
		for i, bl := range t.bls {
			for j := range bl {
				out = naiveAppend(out, t.old, base+t.displs[i]+j*e)
			}
		}
	case CombinerIndexedBlock:
		for _, d := range t.displs {
			for j := range t.blocklen {
				out = naiveAppend(out, t.old, base+(d+j)*e)
			}
		}
	case CombinerHIndexedBlock:
		for _, d := range t.displs {
			for j := range t.blocklen {
				out = naiveAppend(out, t.old, base+d+j*e)
			}
		}
	case CombinerStruct:
		for i, ty := range t.types {
			for j := range t.bls[i] {
				out = naiveAppend(out, ty, base+t.displs[i]+j*ty.Extent())
			}
		}
	case CombinerSubarray:
		// Enumerate sub-block indices in memory order.
		n := len(t.sizes)
		idx := slices.Clone(t.starts)
		// fastest dimension index
		dims := make([]int, n) // dims[k] = the k-th fastest dimension
		for k := range n {
			if t.order == OrderC {
				dims[k] = n - 1 - k
			} else {
				dims[k] = k
			}
		}
		for {
			lin, mul := 0, 1
			for k := range n {
				d := dims[k]
				lin += idx[d] * mul
				mul *= t.sizes[d]
			}
			out = naiveAppend(out, t.old, base+lin*e)
			k := 0
			for ; k < n; k++ {
				d := dims[k]
				idx[d]++
				if idx[d] < t.starts[d]+t.subsizes[d] {
					break
				}
				idx[d] = t.starts[d]
			}
			if k == n {
				break
			}
		}
	case CombinerResized, CombinerDup:
		return naiveAppend(out, t.old, base)
	default:
		panic(fmt.Sprintf("naiveAppend: combiner %v", t.comb))
	}
	return out
}

// naiveSpan is the smallest [lo, hi) holding every entry (0, 0 if none).
func naiveSpan(es []entry) (lo, hi int) {
	for i, e := range es {
		if i == 0 || e.off < lo {
			lo = e.off
		}
		if i == 0 || e.off+e.size > hi {
			hi = e.off + e.size
		}
	}
	return lo, hi
}

func naivePack(es []entry, src []byte, origin int) []byte {
	var out []byte
	for _, e := range es {
		out = append(out, src[origin+e.off:origin+e.off+e.size]...)
	}
	return out
}

func naiveUnpack(es []entry, dst []byte, origin int, packed []byte) {
	p := 0
	for _, e := range es {
		copy(dst[origin+e.off:origin+e.off+e.size], packed[p:p+e.size])
		p += e.size
	}
}

// naiveBlocks merges entries adjacent in memory and stream.
func naiveBlocks(es []entry) [][2]int {
	var out [][2]int
	for _, e := range es {
		if m := len(out) - 1; m >= 0 && out[m][0]+out[m][1] == e.off {
			out[m][1] += e.size
			continue
		}
		out = append(out, [2]int{e.off, e.size})
	}
	return out
}

// overlapping reports whether two entries write the same byte.
func overlapping(es []entry) bool {
	s := slices.Clone(es)
	slices.SortFunc(s, func(a, b entry) int { return a.off - b.off })
	for i := 1; i < len(s); i++ {
		if s[i].off < s[i-1].off+s[i-1].size {
			return true
		}
	}
	return false
}

// chooser supplies the random decisions of genType.
type chooser interface {
	// intn returns an integer in [lo, hi].
	intn(label string, lo, hi int) int
}

var namedList = []*Type{tByte, tInt8, tUint8, tInt16, tUint16, tInt32, tUint32, tInt64, tUint64,
	tFloat32, tFloat64, tComplex64, tComplex128}

// genType builds a random nested type; nil means the constructor rejected
// the random arguments (never happens for the ranges used) .
func genType(c chooser, depth int) *Type {
	k := 0 // named types only at the leaves
	if depth > 0 {
		k = c.intn("kind", 1, 11)
	}
	ints := func(label string, n, lo, hi int) []int {
		v := make([]int, n)
		for i := range v {
			v[i] = c.intn(label, lo, hi)
		}
		return v
	}
	sub := func() *Type { return genType(c, depth-1) }
	var t *Type
	var err error
	switch k {
	case 0:
		return namedList[c.intn("named", 0, len(namedList)-1)]
	case 1:
		t, err = Contiguous(c.intn("n", 0, 20), sub())
	case 2:
		t, err = Vector(c.intn("count", 0, 4), c.intn("bl", 0, 3), c.intn("stride", -4, 6), sub())
	case 3:
		t, err = HVector(c.intn("count", 0, 4), c.intn("bl", 0, 3), c.intn("stride", -40, 60), sub())
	case 4:
		n := c.intn("n", 0, 4)
		t, err = Indexed(ints("bl", n, 0, 3), ints("d", n, -5, 10), sub())
	case 5:
		n := c.intn("n", 0, 4)
		t, err = HIndexed(ints("bl", n, 0, 3), ints("d", n, -50, 100), sub())
	case 6:
		n := c.intn("n", 0, 4)
		t, err = IndexedBlock(c.intn("bl", 0, 3), ints("d", n, -5, 10), sub())
	case 7:
		n := c.intn("n", 0, 4)
		t, err = HIndexedBlock(c.intn("bl", 0, 3), ints("d", n, -50, 100), sub())
	case 8:
		n := c.intn("n", 1, 3)
		types := make([]*Type, n)
		for i := range types {
			types[i] = sub()
		}
		t, err = Struct(ints("bl", n, 0, 3), ints("d", n, -60, 120), types)
	case 9:
		n := c.intn("ndims", 1, 3)
		sizes := ints("size", n, 1, 4)
		subs, starts := make([]int, n), make([]int, n)
		for i := range n {
			subs[i] = c.intn("sub", 1, sizes[i])
			starts[i] = c.intn("start", 0, sizes[i]-subs[i])
		}
		order := Order(c.intn("order", 0, 1))
		t, err = Subarray(sizes, subs, starts, order, sub())
	case 10:
		t, err = Resized(sub(), c.intn("lb", -24, 24), c.intn("extent", 0, 64))
	case 11:
		t, err = Dup(sub())
	}
	if err != nil {
		panic(fmt.Sprintf("genType: %v", err))
	}
	return t
}

// byteChooser draws decisions from fuzz input; once the input is used up
// every decision is its lowest value.
type byteChooser struct{ b []byte }

func (c *byteChooser) intn(_ string, lo, hi int) int {
	if len(c.b) == 0 || hi <= lo {
		return lo
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return lo + v%(hi-lo+1)
}
