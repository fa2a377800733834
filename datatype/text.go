package datatype

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// String prints t in the text form that Parse reads, for example
// "vector(4,2,3)<float64>" or "struct(2;1,1;0,8;float64,int8)".
func (t *Type) String() string {
	var sb strings.Builder
	t.format(&sb)
	return sb.String()
}

func (t *Type) format(sb *strings.Builder) {
	ints := func(v []int) {
		for i, x := range v {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(x))
		}
	}
	base := func() {
		sb.WriteByte('<')
		t.old.format(sb)
		sb.WriteByte('>')
	}
	switch t.comb {
	case CombinerNamed:
		sb.WriteString(t.name)
	case CombinerContiguous:
		fmt.Fprintf(sb, "contig(%d)", t.count)
		base()
	case CombinerVector, CombinerHVector:
		fmt.Fprintf(sb, "%s(%d,%d,%d)", map[Combiner]string{CombinerVector: "vector", CombinerHVector: "hvector"}[t.comb],
			t.count, t.blocklen, t.stride)
		base()
	case CombinerIndexed, CombinerHIndexed:
		if t.comb == CombinerIndexed {
			sb.WriteString("indexed(")
		} else {
			sb.WriteString("hindexed(")
		}
		fmt.Fprintf(sb, "%d;", t.count)
		ints(t.bls)
		sb.WriteByte(';')
		ints(t.displs)
		sb.WriteByte(')')
		base()
	case CombinerIndexedBlock, CombinerHIndexedBlock:
		if t.comb == CombinerIndexedBlock {
			sb.WriteString("indexed_block(")
		} else {
			sb.WriteString("hindexed_block(")
		}
		fmt.Fprintf(sb, "%d,%d;", t.count, t.blocklen)
		ints(t.displs)
		sb.WriteByte(')')
		base()
	case CombinerStruct:
		fmt.Fprintf(sb, "struct(%d;", t.count)
		ints(t.bls)
		sb.WriteByte(';')
		ints(t.displs)
		sb.WriteByte(';')
		for i, ty := range t.types {
			if i > 0 {
				sb.WriteByte(',')
			}
			ty.format(sb)
		}
		sb.WriteByte(')')
	case CombinerSubarray:
		o := "C"
		if t.order == OrderFortran {
			o = "F"
		}
		fmt.Fprintf(sb, "subarray(%d,%s;", len(t.sizes), o)
		ints(t.sizes)
		sb.WriteByte(';')
		ints(t.subsizes)
		sb.WriteByte(';')
		ints(t.starts)
		sb.WriteByte(')')
		base()
	case CombinerResized:
		fmt.Fprintf(sb, "resized(%d,%d)", t.lb, t.ub-t.lb)
		base()
	case CombinerDup:
		sb.WriteString("dup")
		base()
	}
}

// maxParseDepth bounds the nesting of parsed types.
const maxParseDepth = 64

// maxParseList bounds the length of a parsed number list.
const maxParseList = 1 << 24

// Parse reads a type in the fixtures' text form:
//
//	byte|int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64|complex64|complex128
//	contig(N)<T>
//	vector(N,BL,STRIDE)<T>              STRIDE in extents of T
//	hvector(N,BL,STRIDE_BYTES)<T>
//	indexed(N; BL1,..,BLN; D1,..,DN)<T>  D in extents of T
//	hindexed(N; BL..; DBYTES..)<T>
//	indexed_block(N,BL; D1,..,DN)<T>
//	hindexed_block(N,BL; DBYTES..)<T>
//	struct(N; BL..; DBYTES..; T1,..,TN)
//	subarray(NDIMS,C|F; SIZES..; SUBSIZES..; STARTS..)<T>
//	resized(LB,EXTENT)<T>
//	dup<T>
//
// Whitespace is ignored. Errors wrap ErrSyntax (malformed text) or the
// constructor's error, and give the byte offset of the problem.
func Parse(text string) (*Type, error) {
	p := parser{s: text}
	t := p.typ(0)
	if p.err == nil {
		p.skip()
		if p.i != len(p.s) {
			p.failf("unexpected %q after the type", p.rest())
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return t, nil
}

// MustParse is Parse that panics on error; for tests and constant types.
func MustParse(text string) *Type {
	t, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return t
}

// parser reads the text form with a sticky error, like bufio.Scanner: the
// readers below record the first error in err and, once it is set, do
// nothing and return zero values, so a caller reads a whole production and
// checks err once.
type parser struct {
	s   string
	i   int   // offset of the next byte to read
	err error // the first error met; Invariant: i does not move once set
}

func (p *parser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

// fail records err unless an earlier error is already recorded.
func (p *parser) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// failf records an ErrSyntax at the current offset.
func (p *parser) failf(format string, args ...any) {
	p.fail(fmt.Errorf("%w at offset %d: %s", ErrSyntax, p.i, fmt.Sprintf(format, args...)))
}

func (p *parser) skip() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) ident() string {
	if p.err != nil {
		return ""
	}
	p.skip()
	j := p.i
	for p.i < len(p.s) {
		ch := p.s[p.i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' {
			p.i++
			continue
		}
		break
	}
	return p.s[j:p.i]
}

func (p *parser) expect(ch byte) {
	if p.err != nil {
		return
	}
	p.skip()
	switch {
	case p.i >= len(p.s):
		p.failf("expected %q, found end of text", ch)
	case p.s[p.i] != ch:
		p.failf("expected %q, found %q", ch, p.rest())
	default:
		p.i++
	}
}

func (p *parser) num() int {
	if p.err != nil {
		return 0
	}
	p.skip()
	j := p.i
	if p.i < len(p.s) && (p.s[p.i] == '-' || p.s[p.i] == '+') {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	tok := p.s[j:p.i]
	v, err := strconv.ParseInt(tok, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		p.i = j
		p.fail(fmt.Errorf("%w at offset %d: number %s out of range", ErrOverflow, j, tok))
		return 0
	case err != nil:
		p.i = j
		p.failf("expected a number, found %q", p.rest())
		return 0
	case v > maxSpan || v < -maxSpan:
		p.fail(fmt.Errorf("%w at offset %d: number %d beyond ±2^61", ErrOverflow, j, v))
		return 0
	}
	return int(v)
}

// list reads n comma-separated numbers.
func (p *parser) list(n int) []int {
	if p.err != nil {
		return nil
	}
	out := make([]int, 0, min(n, 1024))
	for k := 0; k < n && p.err == nil; k++ {
		if k > 0 {
			p.expect(',')
		}
		out = append(out, p.num())
	}
	return out
}

// count reads a list length and checks it.
func (p *parser) count(what string) int {
	at := p.i
	n := p.num()
	switch {
	case p.err != nil:
		return 0
	case n < 0:
		p.fail(fmt.Errorf("%w at offset %d: %s = %d", ErrNegative, at, what, n))
		return 0
	case n > maxParseList:
		p.fail(fmt.Errorf("%w at offset %d: %s = %d is too long for text", ErrOverflow, at, what, n))
		return 0
	}
	return n
}

// base reads "<T>", the old type of a constructor at the given depth.
func (p *parser) base(depth int) *Type {
	p.expect('<')
	t := p.typ(depth + 1)
	p.expect('>')
	return t
}

// args reads "(A1,..,Ak)<T>", the shape of contig, resized, vector and hvector.
func (p *parser) args(k, depth int) ([]int, *Type) {
	p.expect('(')
	a := p.list(k)
	p.expect(')')
	return a, p.base(depth)
}

// blocks reads "N; BL1,..,BLN; D1,..,DN", shared by indexed, hindexed and struct.
func (p *parser) blocks() (bls, ds []int, n int) {
	n = p.count("count")
	p.expect(';')
	bls = p.list(n)
	p.expect(';')
	ds = p.list(n)
	return bls, ds, n
}

// order reads the C or F of a subarray.
func (p *parser) order() Order {
	switch o := p.ident(); o {
	case "C", "c":
		return OrderC
	case "F", "f":
		return OrderFortran
	default:
		p.failf("subarray order must be C or F, found %q", o)
		return OrderC
	}
}

// The readers of the shared shapes below call mk only if the text read
// well; otherwise they return nil, nil and p.err says why.

// vector reads "(N,BL,STRIDE)<T>" of vector and hvector.
func (p *parser) vector(depth int, mk func(n, bl, stride int, old *Type) (*Type, error)) (*Type, error) {
	a, old := p.args(3, depth)
	if p.err != nil {
		return nil, nil
	}
	return mk(a[0], a[1], a[2], old)
}

// indexed reads "(N; BL..; D..)<T>" of indexed and hindexed.
func (p *parser) indexed(depth int, mk func(bls, ds []int, old *Type) (*Type, error)) (*Type, error) {
	p.expect('(')
	bls, ds, _ := p.blocks()
	p.expect(')')
	old := p.base(depth)
	if p.err != nil {
		return nil, nil
	}
	return mk(bls, ds, old)
}

// indexedBlock reads "(N,BL; D..)<T>" of indexed_block and hindexed_block.
func (p *parser) indexedBlock(depth int, mk func(bl int, ds []int, old *Type) (*Type, error)) (*Type, error) {
	p.expect('(')
	n := p.count("count")
	p.expect(',')
	bl := p.num()
	p.expect(';')
	ds := p.list(n)
	p.expect(')')
	old := p.base(depth)
	if p.err != nil {
		return nil, nil
	}
	return mk(bl, ds, old)
}

// typ reads a type at the given nesting depth. A constructor's error is
// wrapped with the type's name and offset.
func (p *parser) typ(depth int) *Type {
	if p.err != nil {
		return nil
	}
	if depth > maxParseDepth {
		p.failf("types nested deeper than %d", maxParseDepth)
		return nil
	}
	start := p.i
	name := p.ident()
	if t, ok := namedTypes[name]; ok {
		return t
	}
	var t *Type
	var err error
	switch name {
	case "dup":
		old := p.base(depth)
		if p.err != nil {
			return nil
		}
		t, err = Dup(old)
	case "contig", "contiguous":
		a, old := p.args(1, depth) // N
		if p.err != nil {
			return nil
		}
		t, err = Contiguous(a[0], old)
	case "resized":
		a, old := p.args(2, depth) // LB,EXTENT
		if p.err != nil {
			return nil
		}
		t, err = Resized(old, a[0], a[1])
	case "vector":
		t, err = p.vector(depth, Vector)
	case "hvector":
		t, err = p.vector(depth, HVector)
	case "indexed":
		t, err = p.indexed(depth, Indexed)
	case "hindexed":
		t, err = p.indexed(depth, HIndexed)
	case "indexed_block":
		t, err = p.indexedBlock(depth, IndexedBlock)
	case "hindexed_block":
		t, err = p.indexedBlock(depth, HIndexedBlock)
	case "struct":
		p.expect('(')
		bls, ds, n := p.blocks()
		p.expect(';')
		types := make([]*Type, 0, min(n, 1024))
		for k := 0; k < n && p.err == nil; k++ {
			if k > 0 {
				p.expect(',')
			}
			types = append(types, p.typ(depth+1))
		}
		p.expect(')')
		if p.err != nil {
			return nil
		}
		t, err = Struct(bls, ds, types)
	case "subarray":
		p.expect('(')
		n := p.count("ndims")
		p.expect(',')
		order := p.order()
		var lists [3][]int // sizes, subsizes, starts
		for k := range lists {
			p.expect(';')
			lists[k] = p.list(n)
		}
		p.expect(')')
		old := p.base(depth)
		if p.err != nil {
			return nil
		}
		t, err = Subarray(lists[0], lists[1], lists[2], order, old)
	case "":
		p.skip()
		if p.i >= len(p.s) {
			p.failf("expected a type, found end of text")
		} else {
			p.failf("expected a type, found %q", p.rest())
		}
		return nil
	default:
		p.i = start
		p.skip()
		p.failf("unknown type %q", name)
		return nil
	}
	if err != nil {
		p.fail(fmt.Errorf("%s at offset %d: %w", name, start, err))
		return nil
	}
	if p.err != nil { // a shared-shape reader that stopped early
		return nil
	}
	return t
}
