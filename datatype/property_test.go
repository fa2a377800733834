package datatype

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// maxOracleEntries keeps random cases small enough for the naive oracle.
const maxOracleEntries = 1 << 14

// plan says how to cut the stream and in which order to process the pieces.
type plan struct {
	cuts     []int // sorted interior cut points
	order    []int // permutation of the pieces
	interval int   // checkpoint interval
}

func (p plan) pieces(total int) [][2]int {
	pts := []int{0}
	for _, c := range p.cuts {
		pts = append(pts, min(max(c, 0), total))
	}
	pts = append(pts, total)
	var out [][2]int
	for i := 1; i < len(pts); i++ {
		if pts[i] > pts[i-1] {
			out = append(out, [2]int{pts[i-1], pts[i]})
		}
	}
	ord := make([][2]int, 0, len(out))
	for _, k := range p.order {
		if k < len(out) {
			ord = append(ord, out[k])
		}
	}
	for k := len(p.order); k < len(out); k++ {
		ord = append(ord, out[k])
	}
	return ord
}

// failer is what checkOracle needs from *testing.T and *rapid.T.
type failer interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// checkOracle compares every engine path on count elements of ty with the
// naive interpreter. It returns false if the case is too big to check.
func checkOracle(t failer, ty *Type, count int, p plan) bool {
	t.Helper()
	if satMul(count, ty.nelems) > maxOracleEntries {
		return false
	}
	es := naiveMap(ty, count)
	total := 0
	for _, e := range es {
		total += e.size
	}
	if want := count * ty.Size(); total != want {
		t.Fatalf("%v ×%d: oracle packs %d bytes, Size says %d", ty, count, total, want)
	}
	// Text round trip.
	if back, err := Parse(ty.String()); err != nil || back.String() != ty.String() {
		t.Fatalf("Parse(String()) of %v: %v, %v", ty, back, err)
	}
	// Type map.
	var got [][2]int
	for off, n := range ty.Blocks(count) {
		got = append(got, [2]int{off, n})
	}
	if want := naiveBlocks(es); !equalIov(got, want) {
		t.Fatalf("%v ×%d: Blocks %v, want %v", ty, count, trim(got), trim(want))
	}
	c := ty.Commit()
	lo, hi := naiveSpan(es)
	slo, shi, err := c.Span(count)
	if err != nil || slo != lo || shi != hi {
		t.Fatalf("%v ×%d: Span = [%d,%d) %v, want [%d,%d)", ty, count, slo, shi, err, lo, hi)
	}
	origin := -lo + 3
	n := hi - lo + 7
	src := fill(n)
	want := naivePack(es, src, origin)
	packed := make([]byte, total)
	if k, err := c.Pack(packed, src, origin, count); err != nil || k != total {
		t.Fatalf("%v ×%d: Pack = %d, %v", ty, count, k, err)
	}
	if !bytes.Equal(packed, want) {
		t.Fatalf("%v ×%d: Pack differs from the oracle\ngot  %x\nwant %x", ty, count, head(packed), head(want))
	}
	overlap := overlapping(es)
	wantU := make([]byte, n)
	naiveUnpack(es, wantU, origin, packed)
	if !overlap {
		gotU := make([]byte, n)
		if _, err := c.Unpack(gotU, origin, packed, count); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotU, wantU) {
			t.Fatalf("%v ×%d: Unpack differs from the oracle", ty, count)
		}
		// Round trip: the type map's bytes come back, the rest stays zero.
		for _, e := range es {
			if !bytes.Equal(gotU[origin+e.off:origin+e.off+e.size], src[origin+e.off:origin+e.off+e.size]) {
				t.Fatalf("%v ×%d: round trip lost bytes at %d", ty, count, e.off)
			}
		}
	}
	// Pieces through one segment, in the plan's order (catch-up and reset).
	pcs := p.pieces(total)
	seg := mustSegment(t, c, count)
	part := make([]byte, total)
	for _, r := range pcs {
		if _, err := seg.Pack(part[r[0]:r[1]], src, origin, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(part, packed) {
		t.Fatalf("%v ×%d: segment pack in pieces %v differs", ty, count, pcs)
	}
	if !overlap {
		gotU := make([]byte, n)
		for _, r := range pcs {
			if _, err := seg.Unpack(gotU, origin, packed[r[0]:r[1]], r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(gotU, wantU) {
			t.Fatalf("%v ×%d: segment unpack in pieces %v differs", ty, count, pcs)
		}
	}
	// Process: the emitted regions, applied as copies, unpack the pieces;
	// regions are clipped to each piece and merged within it.
	if !overlap {
		gotU := make([]byte, n)
		pseg := mustSegment(t, c, count)
		for _, r := range pcs {
			sum := 0
			nreg, err := pseg.Process(r[0], r[1], func(host, k, stream int) {
				if stream < r[0] || stream+k > r[1] || k <= 0 {
					t.Fatalf("region stream [%d,%d) outside piece %v", stream, stream+k, r)
				}
				copy(gotU[origin+host:origin+host+k], packed[stream:stream+k])
				sum += k
			})
			if err != nil || sum != r[1]-r[0] || (nreg == 0) != (sum == 0) {
				t.Fatalf("Process %v: %d regions, %d bytes, %v", r, nreg, sum, err)
			}
		}
		if !bytes.Equal(gotU, wantU) {
			t.Fatalf("%v ×%d: Process regions in pieces %v differ", ty, count, pcs)
		}
	}
	// Checkpoints: read-only use on a private scratch segment, and
	// progressing use on per-checkpoint working segments.
	cps, err := c.Checkpoints(count, max(1, p.interval))
	if err != nil {
		t.Fatal(err)
	}
	scratch := mustSegment(t, c, count)
	working := map[*Checkpoint]*Segment{}
	ro, rw := make([]byte, total), make([]byte, total)
	for _, r := range pcs {
		cp := CheckpointFor(cps, r[0])
		if cp.Position() > r[0] {
			t.Fatalf("checkpoint at %d for first %d", cp.Position(), r[0])
		}
		if err := scratch.Restore(cp); err != nil {
			t.Fatal(err)
		}
		if _, err := scratch.Pack(ro[r[0]:r[1]], src, origin, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
		w := working[cp]
		if w == nil {
			w = cp.Segment()
			working[cp] = w
		}
		if w.Position() > r[0] { // out of order: restore from the master copy
			if err := w.Restore(cp); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Pack(rw[r[0]:r[1]], src, origin, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(ro, packed) || !bytes.Equal(rw, packed) {
		t.Fatalf("%v ×%d: checkpointed pack (interval %d) differs", ty, count, p.interval)
	}
	if !overlap { // read-only checkpoints also unpack the pieces in any order
		gotU := make([]byte, n)
		for _, r := range pcs {
			if err := scratch.Restore(CheckpointFor(cps, r[0])); err != nil {
				t.Fatal(err)
			}
			if _, err := scratch.Unpack(gotU, origin, packed[r[0]:r[1]], r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(gotU, wantU) {
			t.Fatalf("%v ×%d: checkpointed unpack (interval %d) differs", ty, count, p.interval)
		}
	}
	// Block lists of the pieces, in stream order, merge back to the type map.
	var bl []Block
	sorted := slices.Clone(pcs)
	slices.SortFunc(sorted, func(a, b [2]int) int { return a[0] - b[0] })
	for _, r := range sorted {
		if bl, err = seg.BlockList(r[0], r[1], bl); err != nil {
			t.Fatal(err)
		}
	}
	var merged [][2]int
	next := 0
	for _, b := range bl {
		if b.Stream != next {
			t.Fatalf("block list stream offset %d, want %d", b.Stream, next)
		}
		next += b.Len
		if m := len(merged) - 1; m >= 0 && merged[m][0]+merged[m][1] == b.Off {
			merged[m][1] += b.Len
			continue
		}
		merged = append(merged, [2]int{b.Off, b.Len})
	}
	if !equalIov(merged, got) {
		t.Fatalf("%v ×%d: block lists %v, want %v", ty, count, trim(merged), trim(got))
	}
	// Buffers one byte short are rejected without touching anything.
	if total > 0 {
		if _, err := c.Pack(packed, src[:origin+hi-1], origin, count); !errors.Is(err, ErrBuffer) {
			t.Fatalf("short source: %v", err)
		}
		if _, err := c.Pack(packed[:total-1], src, origin, count); !errors.Is(err, ErrBuffer) {
			t.Fatalf("short destination: %v", err)
		}
		if _, err := c.Unpack(make([]byte, n), n-lo, packed, count); !errors.Is(err, ErrBuffer) {
			t.Fatalf("origin outside: %v", err)
		}
	}
	return true
}

type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) intn(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(c.t, label)
}

func drawPlan(t *rapid.T, maxPos int) plan {
	var p plan
	ncut := rapid.IntRange(0, 8).Draw(t, "ncut")
	for range ncut {
		p.cuts = append(p.cuts, rapid.IntRange(0, max(0, maxPos)).Draw(t, "cut"))
	}
	slices.Sort(p.cuts)
	idx := make([]int, ncut+1)
	for i := range idx {
		idx[i] = i
	}
	p.order = rapid.Permutation(idx).Draw(t, "order")
	p.interval = rapid.IntRange(1, 64).Draw(t, "interval")
	return p
}

// TestRandomTypesAgainstOracle: random nested types, random splits of the
// stream processed in random order through segments and checkpoints, equal
// the naive interpreter; pack then unpack round-trips.
func TestRandomTypesAgainstOracle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ty := genType(rapidChooser{rt}, rapid.IntRange(0, 3).Draw(rt, "depth"))
		count := rapid.IntRange(0, 3).Draw(rt, "count")
		total := satMul(count, ty.Size())
		checkOracle(rt, ty, count, drawPlan(rt, total))
	})
}

// TestFixturePieces: every fixture type, split at random points and
// processed in random order, packs to the reference bytes.
func TestFixturePieces(t *testing.T) {
	fs := loadFixtures(t)
	rapid.Check(t, func(rt *rapid.T) {
		f := fs[rapid.IntRange(0, len(fs)-1).Draw(rt, "fixture")]
		ty := MustParse(f.Desc)
		if f.packed == nil && f.PackedLen > 0 {
			return
		}
		checkOracle(rt, ty, f.Count, drawPlan(rt, f.PackedLen))
	})
}

// FuzzNestedTypes checks randomly generated nested types against the naive
// type-map interpreter.
func FuzzNestedTypes(f *testing.F) {
	f.Add([]byte{3, 2, 2, 3, 1, 4, 0, 9})
	f.Add([]byte{3, 8, 2, 1, 2, 3, 7, 9, 2, 1, 0, 5, 4, 3, 2})
	f.Add([]byte{2, 9, 3, 2, 3, 4, 1, 2, 0, 1, 1, 1, 2, 7})
	f.Add([]byte{3, 10, 200, 40, 4, 3, 1, 5, 2, 3, 1})
	f.Add([]byte{1, 5, 3, 1, 2, 3, 200, 100, 50, 6, 11})
	f.Add([]byte{2, 7, 4, 2, 100, 156, 3, 4, 6, 6, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{b: data}
		ty := genType(c, c.intn("depth", 0, 3))
		count := c.intn("count", 0, 3)
		total := satMul(count, ty.Size())
		var p plan
		for range c.intn("ncut", 0, 6) {
			p.cuts = append(p.cuts, c.intn("cut", 0, max(0, min(total, 255))))
		}
		slices.Sort(p.cuts)
		for i := range len(p.cuts) + 1 {
			p.order = append(p.order, (i*5+c.intn("rot", 0, 7))%(len(p.cuts)+1))
		}
		p.order = dedupePerm(p.order, len(p.cuts)+1)
		p.interval = c.intn("interval", 1, 40)
		checkOracle(t, ty, count, p)
	})
}

// dedupePerm turns v into a permutation of [0, n) keeping first occurrences.
func dedupePerm(v []int, n int) []int {
	seen := make([]bool, n)
	var out []int
	for _, x := range v {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for x := range n {
		if !seen[x] {
			out = append(out, x)
		}
	}
	return out
}

// FuzzParse: the parser never panics, accepted text round-trips through
// String, and accepted types pack like the oracle.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"byte", "float64", "complex128", "contig(3)<float64>", "vector(4,2,3)<float64>",
		"vector(3,0,2)<float64>", "hvector(3,1,-12)<int32>", "indexed(3;2,1,3;0,5,9)<int32>",
		"hindexed(3;1,2,1;-8,4,40)<int32>", "indexed_block(4,2;6,0,10,3)<int16>",
		"hindexed_block(3,3;30,0,-9)<byte>", "struct(3;1,2,1;0,8,24;int32,float64,int8)",
		"subarray(3,F;5,4,3;2,2,2;1,1,0)<int32>", "resized(-8,40)<contig(2)<float64>>",
		"dup<vector(3,1,2)<int32>>", " vector ( 2 , 1 , 3 ) < uint16 > ",
		"struct(2;1,1;0,256;subarray(2,C;4,4;2,2;1,1)<float64>,subarray(3,F;3,3,3;1,2,2;2,0,1)<int32>)",
		// Malformed inputs.
		"", "vector(1,2)<float64>", "contig(-1)<byte>", "indexed(2;1;0)<byte>", "struct(1;1;0;)",
		"subarray(2,C;4,4;2,2;3,1)<byte>", "subarray(1,X;4;2;1)<byte>", "contig(99999999999999999999)<byte>",
		"contig(4611686018427387903)<float64>", "resized(0,8)<", "dup<dup<dup<", "foo", "vector(1,1,1)<float64>>",
		"hvector(3,-1,4)<byte>", "indexed(-1;;)<byte>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ty, err := Parse(text)
		if err != nil {
			if ty != nil {
				t.Fatalf("Parse returned both a type and %v", err)
			}
			return
		}
		s := ty.String()
		back, err := Parse(s)
		if err != nil || back.String() != s {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
		if ty.TrueExtent() > 1<<16 || ty.Extent() > 1<<16 || ty.Extent() < -(1<<16) {
			return
		}
		checkOracle(t, ty, 1, plan{cuts: []int{ty.Size() / 3, ty.Size() / 2}, order: []int{2, 0, 1}, interval: 5})
	})
}

// FuzzPackUnpack: unpacking what was packed restores exactly the type-map
// bytes of a random type and leaves every other byte alone.
func FuzzPackUnpack(f *testing.F) {
	f.Add([]byte{2, 2, 3, 1, 4, 9, 1, 7}, uint8(2))
	f.Add([]byte{3, 8, 2, 1, 2, 3, 7, 9, 2, 1, 0, 5}, uint8(1))
	f.Add([]byte{1, 9, 2, 3, 2, 1, 0, 1, 1}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, cnt uint8) {
		ty := genType(&byteChooser{b: data}, 3)
		count := int(cnt % 4)
		if satMul(count, ty.nelems) > maxOracleEntries {
			return
		}
		es := naiveMap(ty, count)
		if overlapping(es) {
			return
		}
		lo, hi := naiveSpan(es)
		origin, n := 5-lo, hi-lo+11
		src := fill(n)
		c := ty.Commit()
		packed := make([]byte, count*ty.Size())
		if _, err := c.Pack(packed, src, origin, count); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, n)
		for i := range dst {
			dst[i] = 0xA5
		}
		if _, err := c.Unpack(dst, origin, packed, count); err != nil {
			t.Fatal(err)
		}
		touched := make([]bool, n)
		for _, e := range es {
			for k := range e.size {
				touched[origin+e.off+k] = true
			}
		}
		for i := range dst {
			if touched[i] && dst[i] != src[i] || !touched[i] && dst[i] != 0xA5 {
				t.Fatalf("%v ×%d: byte %d = %#x (touched %v), source %#x", ty, count, i-origin, dst[i], touched[i], src[i])
			}
		}
	})
}
