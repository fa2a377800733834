package datatype

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Combiner names the constructor that made a Type, as MPI_Type_get_envelope
// would report it.
type Combiner uint8

// The combiners, one per constructor.
const (
	CombinerNamed Combiner = iota
	CombinerContiguous
	CombinerVector
	CombinerHVector
	CombinerIndexed
	CombinerHIndexed
	CombinerIndexedBlock
	CombinerHIndexedBlock
	CombinerStruct
	CombinerSubarray
	CombinerResized
	CombinerDup
)

var combinerNames = [...]string{
	"NAMED", "CONTIGUOUS", "VECTOR", "HVECTOR", "INDEXED", "HINDEXED",
	"INDEXED_BLOCK", "HINDEXED_BLOCK", "STRUCT", "SUBARRAY", "RESIZED", "DUP",
}

// String returns the MPI name of the combiner without the MPI_COMBINER_ prefix.
func (c Combiner) String() string {
	if int(c) < len(combinerNames) {
		return combinerNames[c]
	}
	return fmt.Sprintf("Combiner(%d)", c)
}

// Order is the storage order of a subarray's full array.
type Order uint8

// The two array orders of MPI_Type_create_subarray.
const (
	OrderC       Order = iota // row major: the last dimension varies fastest
	OrderFortran              // column major: the first dimension varies fastest
)

// Errors returned by the constructors and by Parse; they are wrapped with
// detail, so test them with errors.Is.
var (
	ErrNegative  = errors.New("datatype: negative count or length")
	ErrMismatch  = errors.New("datatype: argument lists of different lengths")
	ErrOverflow  = errors.New("datatype: size or displacement overflows")
	ErrSubarray  = errors.New("datatype: subarray outside its array")
	ErrNilType   = errors.New("datatype: nil type")
	ErrSyntax    = errors.New("datatype: syntax error")
	ErrBuffer    = errors.New("datatype: buffer too small for the type")
	ErrArguments = errors.New("datatype: bad argument")
)

// maxSpan bounds every size, displacement and bound of a type, so that sums
// of two such values never overflow an int64.
const maxSpan = math.MaxInt64 / 4

// Type is an MPI datatype: an ordered type map of (elementary type, byte
// displacement) pairs plus the bounds lb and ub. A Type is immutable and safe
// for concurrent use; build one with the constructors or Parse, then call
// Commit to pack and unpack with it.
type Type struct {
	comb Combiner
	name string // named types: "float64" ...

	count    int   // contiguous, vector, hvector, indexed_block, hindexed_block: count
	blocklen int   // vector, hvector, indexed_block, hindexed_block
	stride   int   // vector (in extents of old), hvector (bytes)
	bls      []int // indexed, hindexed, struct
	displs   []int // indexed, indexed_block (extents), h*, struct (bytes)
	types    []*Type
	old      *Type

	order                   Order // subarray
	sizes, subsizes, starts []int // subarray
	subInner                *Type // subarray: the sub-block as an hvector nest (offset subDisp)
	subDisp                 int

	// Derived attributes.
	size   int // packed bytes of one element
	lb, ub int
	tlb    int // true lb, meaningful only when size > 0 or bounds set by a constructor
	tub    int
	align  int // largest alignment of the elementary types inside
	nelems int // number of elementary entries in the type map (saturating)
}

// Combiner reports the constructor that made t.
func (t *Type) Combiner() Combiner { return t.comb }

// Size is the number of bytes one element of t packs into.
func (t *Type) Size() int { return t.size }

// LB is the lower bound of t in bytes.
func (t *Type) LB() int { return t.lb }

// UB is the upper bound of t in bytes.
func (t *Type) UB() int { return t.ub }

// Extent is UB − LB: the distance between consecutive elements of t.
func (t *Type) Extent() int { return t.ub - t.lb }

// TrueLB is the lowest byte the type map touches, ignoring resized bounds and padding.
func (t *Type) TrueLB() int { return t.tlb }

// TrueUB is one past the highest byte the type map touches.
func (t *Type) TrueUB() int { return t.tub }

// TrueExtent is TrueUB − TrueLB, the span of memory one element really touches.
func (t *Type) TrueExtent() int { return t.tub - t.tlb }

// Alignment is the largest alignment of the elementary types inside t; struct
// extents are padded to a multiple of it.
func (t *Type) Alignment() int { return t.align }

// Named types. Each function returns the same immutable value every time.
var (
	tByte       = named("byte", 1, 1)
	tInt8       = named("int8", 1, 1)
	tUint8      = named("uint8", 1, 1)
	tInt16      = named("int16", 2, 2)
	tUint16     = named("uint16", 2, 2)
	tInt32      = named("int32", 4, 4)
	tUint32     = named("uint32", 4, 4)
	tInt64      = named("int64", 8, 8)
	tUint64     = named("uint64", 8, 8)
	tFloat32    = named("float32", 4, 4)
	tFloat64    = named("float64", 8, 8)
	tComplex64  = named("complex64", 8, 4)
	tComplex128 = named("complex128", 16, 8)
)

var namedTypes = map[string]*Type{
	"byte": tByte, "int8": tInt8, "uint8": tUint8, "int16": tInt16, "uint16": tUint16,
	"int32": tInt32, "uint32": tUint32, "int64": tInt64, "uint64": tUint64,
	"float32": tFloat32, "float64": tFloat64, "complex64": tComplex64, "complex128": tComplex128,
}

func named(name string, size, align int) *Type {
	return &Type{comb: CombinerNamed, name: name, size: size, ub: size, tub: size, align: align, nelems: 1}
}

// Byte is MPI_BYTE (1 byte).
func Byte() *Type { return tByte }

// Int8 is MPI_INT8_T.
func Int8() *Type { return tInt8 }

// Uint8 is MPI_UINT8_T.
func Uint8() *Type { return tUint8 }

// Int16 is MPI_INT16_T.
func Int16() *Type { return tInt16 }

// Uint16 is MPI_UINT16_T.
func Uint16() *Type { return tUint16 }

// Int32 is MPI_INT32_T (MPI_INT on LP64).
func Int32() *Type { return tInt32 }

// Uint32 is MPI_UINT32_T.
func Uint32() *Type { return tUint32 }

// Int64 is MPI_INT64_T (MPI_LONG on LP64).
func Int64() *Type { return tInt64 }

// Uint64 is MPI_UINT64_T.
func Uint64() *Type { return tUint64 }

// Float32 is MPI_FLOAT.
func Float32() *Type { return tFloat32 }

// Float64 is MPI_DOUBLE.
func Float64() *Type { return tFloat64 }

// Complex64 is MPI_C_FLOAT_COMPLEX (8 bytes, 4-byte aligned).
func Complex64() *Type { return tComplex64 }

// Complex128 is MPI_C_DOUBLE_COMPLEX (16 bytes, 8-byte aligned).
func Complex128() *Type { return tComplex128 }

// Named returns the named type with the given text-form name ("float64",
// "int32", "byte", ...), or false if there is none.
func Named(name string) (*Type, bool) {
	t, ok := namedTypes[name]
	return t, ok
}

// calc does checked arithmetic, remembering the first overflow.
type calc struct{ err error }

func (c *calc) check(v int) int {
	if c.err == nil && (v > maxSpan || v < -maxSpan) {
		c.err = fmt.Errorf("%w: value %d beyond ±2^61", ErrOverflow, v)
	}
	return v
}

func (c *calc) mul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || a > maxSpan || b > maxSpan || a < -maxSpan || b < -maxSpan {
		if c.err == nil {
			c.err = fmt.Errorf("%w: %d × %d", ErrOverflow, a, b)
		}
		return 0
	}
	return c.check(p)
}

func (c *calc) add(a, b int) int { return c.check(a + b) }

// bounds accumulates lb/ub and true bounds over the blocks of a constructor.
type bounds struct {
	any            bool
	lb, ub, tl, tu int
}

// block adds bl copies of old placed at byte displacement d, each extent
// apart, using MPICH's formulas (a block of 0 elements still spans
// old.ub + (bl−1)·extent, which is what MPICH reports for vector(3,0,2)).
func (b *bounds) block(c *calc, d, bl int, old *Type) {
	b.span(c, d, c.mul(max(bl-1, 0), old.Extent()), old)
}

// span adds a block at d whose elements reach span bytes beyond the first.
func (b *bounds) span(c *calc, d, span int, old *Type) {
	e := old.Extent()
	lb, ub := c.add(d, old.lb), c.add(d, old.ub)
	tl, tu := c.add(d, old.tlb), c.add(d, old.tub)
	if e >= 0 {
		ub, tu = c.add(ub, span), c.add(tu, span)
	} else {
		lb, tl = c.add(lb, span), c.add(tl, span)
	}
	b.merge(lb, ub, tl, tu)
}

func (b *bounds) merge(lb, ub, tl, tu int) {
	if !b.any {
		b.any, b.lb, b.ub, b.tl, b.tu = true, lb, ub, tl, tu
		return
	}
	b.lb, b.ub = min(b.lb, lb), max(b.ub, ub)
	b.tl, b.tu = min(b.tl, tl), max(b.tu, tu)
}

func (b *bounds) set(t *Type) {
	if b.any {
		t.lb, t.ub, t.tlb, t.tub = b.lb, b.ub, b.tl, b.tu
	}
}

func checkType(what string, t *Type) error {
	if t == nil {
		return fmt.Errorf("%w: %s", ErrNilType, what)
	}
	return nil
}

func checkNonNeg(what string, v int) error {
	if v < 0 {
		return fmt.Errorf("%w: %s = %d", ErrNegative, what, v)
	}
	return nil
}

// satMul multiplies non-negative counts, saturating at MaxInt64/2.
func satMul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int(lo)
}

// satAdd adds non-negative counts, saturating at MaxInt64/2.
func satAdd(a, b int) int { return min(a+b, math.MaxInt64/2) }

func finish(t *Type, c *calc) (*Type, error) {
	if c.err != nil {
		return nil, fmt.Errorf("%s: %w", t.comb, c.err)
	}
	return t, nil
}

// Contiguous returns count copies of old laid end to end (MPI_Type_contiguous).
func Contiguous(count int, old *Type) (*Type, error) {
	if err := errors.Join(checkType("contiguous base", old), checkNonNeg("contiguous count", count)); err != nil {
		return nil, err
	}
	t := &Type{comb: CombinerContiguous, count: count, old: old, align: old.align}
	var c calc
	t.size = c.mul(count, old.size)
	t.nelems = satMul(count, old.nelems)
	if count > 0 {
		var b bounds
		b.block(&c, 0, count, old)
		b.set(t)
	}
	return finish(t, &c)
}

// Vector returns count blocks of blocklen copies of old, block i starting
// i·stride extents of old from the origin (MPI_Type_vector).
func Vector(count, blocklen, stride int, old *Type) (*Type, error) {
	return vector(CombinerVector, count, blocklen, stride, old)
}

// HVector is Vector with the stride given in bytes (MPI_Type_create_hvector).
func HVector(count, blocklen, strideBytes int, old *Type) (*Type, error) {
	return vector(CombinerHVector, count, blocklen, strideBytes, old)
}

func vector(comb Combiner, count, blocklen, stride int, old *Type) (*Type, error) {
	if err := errors.Join(checkType(comb.String()+" base", old), checkNonNeg(comb.String()+" count", count),
		checkNonNeg(comb.String()+" blocklength", blocklen)); err != nil {
		return nil, err
	}
	t := &Type{comb: comb, count: count, blocklen: blocklen, stride: stride, old: old, align: old.align}
	var c calc
	t.size = c.mul(c.mul(count, blocklen), old.size)
	t.nelems = satMul(satMul(count, blocklen), old.nelems)
	sb := stride
	if comb == CombinerVector {
		sb = c.mul(stride, old.Extent())
	}
	if count > 0 {
		// MPICH's vector formula: a block spans (blocklen−1) extents even
		// when blocklen is 0, which gives vector(3,0,2)<float64> extent 32.
		span := c.mul(blocklen-1, old.Extent())
		var b bounds
		b.span(&c, 0, span, old)
		b.span(&c, c.mul(count-1, sb), span, old)
		b.set(t)
	}
	return finish(t, &c)
}

// Indexed returns blocks of blocklens[i] copies of old at displs[i] extents of
// old (MPI_Type_indexed).
func Indexed(blocklens, displs []int, old *Type) (*Type, error) {
	return indexed(CombinerIndexed, blocklens, displs, old)
}

// HIndexed is Indexed with displacements in bytes (MPI_Type_create_hindexed).
func HIndexed(blocklens, displsBytes []int, old *Type) (*Type, error) {
	return indexed(CombinerHIndexed, blocklens, displsBytes, old)
}

func indexed(comb Combiner, blocklens, displs []int, old *Type) (*Type, error) {
	if err := checkType(comb.String()+" base", old); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) {
		return nil, fmt.Errorf("%w: %s has %d blocklengths and %d displacements", ErrMismatch, comb, len(blocklens), len(displs))
	}
	t := &Type{comb: comb, count: len(blocklens), bls: clone(blocklens), displs: clone(displs), old: old, align: old.align}
	var c calc
	var b bounds
	total := 0
	for i, bl := range blocklens {
		if err := checkNonNeg(fmt.Sprintf("%s blocklength[%d]", comb, i), bl); err != nil {
			return nil, err
		}
		d := displs[i]
		if comb == CombinerIndexed {
			d = c.mul(d, old.Extent())
		}
		total = c.add(total, bl)
		if bl > 0 { // MPICH ignores empty blocks for the bounds
			b.block(&c, d, bl, old)
		}
	}
	t.size = c.mul(total, old.size)
	t.nelems = satMul(total, old.nelems)
	b.set(t)
	return finish(t, &c)
}

// IndexedBlock returns blocks of blocklen copies of old at displs[i] extents
// of old (MPI_Type_create_indexed_block).
func IndexedBlock(blocklen int, displs []int, old *Type) (*Type, error) {
	return indexedBlock(CombinerIndexedBlock, blocklen, displs, old)
}

// HIndexedBlock is IndexedBlock with displacements in bytes
// (MPI_Type_create_hindexed_block).
func HIndexedBlock(blocklen int, displsBytes []int, old *Type) (*Type, error) {
	return indexedBlock(CombinerHIndexedBlock, blocklen, displsBytes, old)
}

func indexedBlock(comb Combiner, blocklen int, displs []int, old *Type) (*Type, error) {
	if err := errors.Join(checkType(comb.String()+" base", old), checkNonNeg(comb.String()+" blocklength", blocklen)); err != nil {
		return nil, err
	}
	t := &Type{comb: comb, count: len(displs), blocklen: blocklen, displs: clone(displs), old: old, align: old.align}
	var c calc
	var b bounds
	for _, d := range displs {
		if comb == CombinerIndexedBlock {
			d = c.mul(d, old.Extent())
		}
		b.block(&c, d, blocklen, old)
	}
	t.size = c.mul(c.mul(len(displs), blocklen), old.size)
	t.nelems = satMul(satMul(len(displs), blocklen), old.nelems)
	b.set(t)
	return finish(t, &c)
}

// Struct returns blocks of blocklens[i] copies of types[i] at byte
// displacement displs[i] (MPI_Type_create_struct). Like MPICH and Open MPI,
// the extent is padded up to a multiple of the largest alignment of the
// elementary types inside.
func Struct(blocklens, displs []int, types []*Type) (*Type, error) {
	if len(blocklens) != len(displs) || len(blocklens) != len(types) {
		return nil, fmt.Errorf("%w: struct has %d blocklengths, %d displacements, %d types",
			ErrMismatch, len(blocklens), len(displs), len(types))
	}
	t := &Type{comb: CombinerStruct, count: len(types), bls: clone(blocklens), displs: clone(displs),
		types: append([]*Type(nil), types...), align: 1}
	var c calc
	var b bounds
	for i, ty := range types {
		if err := errors.Join(checkType(fmt.Sprintf("struct type[%d]", i), ty),
			checkNonNeg(fmt.Sprintf("struct blocklength[%d]", i), blocklens[i])); err != nil {
			return nil, err
		}
		t.size = c.add(t.size, c.mul(blocklens[i], ty.size))
		t.nelems = satAdd(t.nelems, satMul(blocklens[i], ty.nelems))
		if blocklens[i] == 0 {
			continue
		}
		t.align = max(t.align, ty.align)
		b.block(&c, displs[i], blocklens[i], ty)
	}
	b.set(t)
	if b.any {
		if eps := (t.ub - t.lb) % t.align; eps != 0 {
			t.ub = c.add(t.ub, t.align-eps)
		}
	}
	return finish(t, &c)
}

// Subarray returns an n-dimensional sub-block of an n-dimensional array of
// old (MPI_Type_create_subarray). Its lb is 0 and its extent the whole array.
func Subarray(sizes, subsizes, starts []int, order Order, old *Type) (*Type, error) {
	if err := checkType("subarray base", old); err != nil {
		return nil, err
	}
	n := len(sizes)
	if n == 0 || len(subsizes) != n || len(starts) != n {
		return nil, fmt.Errorf("%w: subarray needs ndims ≥ 1 and equal lists (sizes %d, subsizes %d, starts %d)",
			ErrMismatch, len(sizes), len(subsizes), len(starts))
	}
	if order != OrderC && order != OrderFortran {
		return nil, fmt.Errorf("%w: subarray order %d", ErrArguments, order)
	}
	for i := range n {
		switch {
		case sizes[i] <= 0:
			return nil, fmt.Errorf("%w: subarray size[%d] = %d must be positive", ErrSubarray, i, sizes[i])
		case subsizes[i] <= 0 || subsizes[i] > sizes[i]:
			return nil, fmt.Errorf("%w: subarray subsize[%d] = %d not in [1, %d]", ErrSubarray, i, subsizes[i], sizes[i])
		case starts[i] < 0 || starts[i] > sizes[i]-subsizes[i]:
			return nil, fmt.Errorf("%w: subarray start[%d] = %d not in [0, %d]", ErrSubarray, i, starts[i], sizes[i]-subsizes[i])
		}
	}
	t := &Type{comb: CombinerSubarray, order: order, sizes: clone(sizes), subsizes: clone(subsizes),
		starts: clone(starts), old: old, align: old.align}
	// Dimensions from fastest to slowest.
	dim := func(k int) int {
		if order == OrderC {
			return n - 1 - k
		}
		return k
	}
	var c calc
	e := old.Extent()
	inner, err := Contiguous(subsizes[dim(0)], old)
	if err != nil {
		return nil, err
	}
	stride := e
	disp := c.mul(starts[dim(0)], e)
	for k := 1; k < n; k++ {
		stride = c.mul(stride, sizes[dim(k-1)])
		disp = c.add(disp, c.mul(starts[dim(k)], stride))
		if c.err != nil {
			break
		}
		if inner, err = HVector(subsizes[dim(k)], 1, stride, inner); err != nil {
			return nil, err
		}
	}
	total := c.mul(stride, sizes[dim(n-1)])
	if c.err != nil {
		return finish(t, &c)
	}
	t.subInner, t.subDisp = inner, disp
	t.size, t.nelems = inner.size, inner.nelems
	t.lb, t.ub = 0, total
	t.tlb, t.tub = c.add(disp, inner.tlb), c.add(disp, inner.tub)
	return finish(t, &c)
}

// Resized returns old with its lb and extent replaced (MPI_Type_create_resized).
func Resized(old *Type, lb, extent int) (*Type, error) {
	if err := checkType("resized base", old); err != nil {
		return nil, err
	}
	var c calc
	t := &Type{comb: CombinerResized, old: old, size: old.size, nelems: old.nelems, align: old.align,
		lb: c.check(lb), tlb: old.tlb, tub: old.tub}
	t.ub = c.add(lb, c.check(extent))
	return finish(t, &c)
}

// Dup returns a copy of old (MPI_Type_dup).
func Dup(old *Type) (*Type, error) {
	if err := checkType("dup base", old); err != nil {
		return nil, err
	}
	t := *old
	t.comb, t.old, t.name = CombinerDup, old, ""
	t.count, t.blocklen, t.stride, t.bls, t.displs, t.types = 0, 0, 0, nil, nil, nil
	t.sizes, t.subsizes, t.starts, t.subInner, t.subDisp = nil, nil, nil, nil, 0
	return &t, nil
}

func clone(s []int) []int { return append([]int(nil), s...) }
