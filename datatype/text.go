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
	t, err := p.typ(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %q after the type", p.rest())
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

type parser struct {
	s string
	i int
}

func (p *parser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrSyntax, p.i, fmt.Sprintf(format, args...))
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

func (p *parser) expect(ch byte) error {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != ch {
		if p.i >= len(p.s) {
			return p.errorf("expected %q, found end of text", ch)
		}
		return p.errorf("expected %q, found %q", ch, p.rest())
	}
	p.i++
	return nil
}

func (p *parser) peek(ch byte) bool {
	p.skip()
	return p.i < len(p.s) && p.s[p.i] == ch
}

func (p *parser) num() (int, error) {
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
	if err != nil {
		p.i = j
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%w at offset %d: number %s out of range", ErrOverflow, j, tok)
		}
		return 0, p.errorf("expected a number, found %q", p.rest())
	}
	if v > maxSpan || v < -maxSpan {
		return 0, fmt.Errorf("%w at offset %d: number %d beyond ±2^61", ErrOverflow, j, v)
	}
	return int(v), nil
}

// list reads n comma-separated numbers.
func (p *parser) list(n int) ([]int, error) {
	out := make([]int, 0, min(n, 1024))
	for k := range n {
		if k > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		v, err := p.num()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// count reads a list length and checks it.
func (p *parser) count(what string) (int, error) {
	at := p.i
	n, err := p.num()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%w at offset %d: %s = %d", ErrNegative, at, what, n)
	}
	if n > maxParseList {
		return 0, fmt.Errorf("%w at offset %d: %s = %d is too long for text", ErrOverflow, at, what, n)
	}
	return n, nil
}

func (p *parser) base(depth int) (*Type, error) {
	if err := p.expect('<'); err != nil {
		return nil, err
	}
	t, err := p.typ(depth + 1)
	if err != nil {
		return nil, err
	}
	if err := p.expect('>'); err != nil {
		return nil, err
	}
	return t, nil
}

// nums reads a fixed sequence of numbers separated by the given separators.
func (p *parser) nums(seps string) ([]int, error) {
	out := make([]int, 0, len(seps)+1)
	for k := 0; ; k++ {
		v, err := p.num()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if k == len(seps) {
			return out, nil
		}
		if err := p.expect(seps[k]); err != nil {
			return nil, err
		}
	}
}

func (p *parser) typ(depth int) (*Type, error) {
	if depth > maxParseDepth {
		return nil, p.errorf("types nested deeper than %d", maxParseDepth)
	}
	start := p.i
	name := p.ident()
	if t, ok := namedTypes[name]; ok {
		return t, nil
	}
	wrap := func(t *Type, err error) (*Type, error) {
		if err != nil {
			return nil, fmt.Errorf("%s at offset %d: %w", name, start, err)
		}
		return t, nil
	}
	switch name {
	case "dup":
		old, err := p.base(depth)
		if err != nil {
			return nil, err
		}
		return wrap(Dup(old))
	case "contig", "contiguous", "vector", "hvector", "resized":
		seps := map[string]string{"contig": "", "contiguous": "", "vector": ",,", "hvector": ",,", "resized": ","}[name]
		if err := p.expect('('); err != nil {
			return nil, err
		}
		v, err := p.nums(seps)
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		old, err := p.base(depth)
		if err != nil {
			return nil, err
		}
		switch name {
		case "vector":
			return wrap(Vector(v[0], v[1], v[2], old))
		case "hvector":
			return wrap(HVector(v[0], v[1], v[2], old))
		case "resized":
			return wrap(Resized(old, v[0], v[1]))
		}
		return wrap(Contiguous(v[0], old))
	case "indexed", "hindexed":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		n, err := p.count("count")
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		bls, err := p.list(n)
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		ds, err := p.list(n)
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		old, err := p.base(depth)
		if err != nil {
			return nil, err
		}
		if name == "indexed" {
			return wrap(Indexed(bls, ds, old))
		}
		return wrap(HIndexed(bls, ds, old))
	case "indexed_block", "hindexed_block":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		n, err := p.count("count")
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		bl, err := p.num()
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		ds, err := p.list(n)
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		old, err := p.base(depth)
		if err != nil {
			return nil, err
		}
		if name == "indexed_block" {
			return wrap(IndexedBlock(bl, ds, old))
		}
		return wrap(HIndexedBlock(bl, ds, old))
	case "struct":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		n, err := p.count("count")
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		bls, err := p.list(n)
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		ds, err := p.list(n)
		if err != nil {
			return nil, err
		}
		if err := p.expect(';'); err != nil {
			return nil, err
		}
		types := make([]*Type, 0, min(n, 1024))
		for k := range n {
			if k > 0 {
				if err := p.expect(','); err != nil {
					return nil, err
				}
			}
			ty, err := p.typ(depth + 1)
			if err != nil {
				return nil, err
			}
			types = append(types, ty)
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		return wrap(Struct(bls, ds, types))
	case "subarray":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		n, err := p.count("ndims")
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		var order Order
		switch o := p.ident(); o {
		case "C", "c":
			order = OrderC
		case "F", "f":
			order = OrderFortran
		default:
			return nil, p.errorf("subarray order must be C or F, found %q", o)
		}
		var lists [3][]int
		for k := range lists {
			if err := p.expect(';'); err != nil {
				return nil, err
			}
			if lists[k], err = p.list(n); err != nil {
				return nil, err
			}
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		old, err := p.base(depth)
		if err != nil {
			return nil, err
		}
		return wrap(Subarray(lists[0], lists[1], lists[2], order, old))
	case "":
		p.skip()
		if p.i >= len(p.s) {
			return nil, p.errorf("expected a type, found end of text")
		}
		return nil, p.errorf("expected a type, found %q", p.rest())
	}
	p.i = start
	p.skip()
	return nil, p.errorf("unknown type %q", name)
}
