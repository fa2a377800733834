package datatype

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestBadInput(t *testing.T) {
	deep := strings.Repeat("dup<", 70) + "byte" + strings.Repeat(">", 70)
	for _, tc := range []struct {
		text string
		want error
	}{
		{"", ErrSyntax},
		{"foo", ErrSyntax},
		{"vector(1,2)<float64>", ErrSyntax},
		{"vector(1,1,1)<float64>>", ErrSyntax},
		{"struct(2;1,1;0,8;float64)", ErrSyntax},
		{"indexed(3;1,1;0,0)<byte>", ErrSyntax},
		{"subarray(1,X;4;2;1)<byte>", ErrSyntax},
		{"resized(0,8)<", ErrSyntax},
		{deep, ErrSyntax},
		{"contig(-1)<byte>", ErrNegative},
		{"vector(2,-1,3)<byte>", ErrNegative},
		{"hvector(-2,1,3)<byte>", ErrNegative},
		{"indexed(2;1,-1;0,0)<byte>", ErrNegative},
		{"indexed_block(1,-1;0)<byte>", ErrNegative},
		{"struct(1;-1;0;byte)", ErrNegative},
		{"indexed(-1;;)<byte>", ErrNegative},
		{"contig(99999999999999999999)<byte>", ErrOverflow},
		{"contig(4611686018427387903)<float64>", ErrOverflow},
		{"contig(1000000000)<contig(1000000000)<contig(1000000000)<byte>>>", ErrOverflow},
		{"hvector(2,1,2305843009213693951)<float64>", ErrOverflow},
		{"vector(3,1,1000000000000)<contig(1000000000)<byte>>", ErrOverflow},
		{"resized(2000000000000000000,2000000000000000000)<byte>", ErrOverflow},
		{"subarray(2,C;4,4;2,2;3,1)<byte>", ErrSubarray},
		{"subarray(1,C;4;5;0)<byte>", ErrSubarray},
		{"subarray(1,C;4;2;-1)<byte>", ErrSubarray},
		{"subarray(1,F;0;0;0)<byte>", ErrSubarray},
		{"subarray(0,C;;;)<byte>", ErrMismatch},
	} {
		ty, err := Parse(tc.text)
		if !errors.Is(err, tc.want) || ty != nil {
			t.Errorf("Parse(%.40q) = %v, %v; want error %v", tc.text, ty, err, tc.want)
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	for name, f := range map[string]func() (*Type, error){
		"nil base":        func() (*Type, error) { return Contiguous(1, nil) },
		"nil struct type": func() (*Type, error) { return Struct([]int{1}, []int{0}, []*Type{nil}) },
		"indexed lists":   func() (*Type, error) { return Indexed([]int{1}, []int{1, 2}, Byte()) },
		"struct lists":    func() (*Type, error) { return Struct([]int{1}, []int{1, 2}, []*Type{Byte()}) },
		"subarray order":  func() (*Type, error) { return Subarray([]int{2}, []int{1}, []int{0}, Order(7), Byte()) },
		"resized nil":     func() (*Type, error) { return Resized(nil, 0, 1) },
		"dup nil":         func() (*Type, error) { return Dup(nil) },
	} {
		if ty, err := f(); err == nil || ty != nil {
			t.Errorf("%s: got %v, %v", name, ty, err)
		}
	}
}

func TestBufferErrors(t *testing.T) {
	c := MustParse("vector(4,2,3)<float64>").Commit() // touches [0, 88), packs 64
	src, packed := make([]byte, 88), make([]byte, 64)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"short source", second(c.Pack(packed, src[:87], 0, 1)), ErrBuffer},
		{"origin past start", second(c.Pack(packed, src, -1, 1)), ErrBuffer},
		{"short packed", second(c.Pack(packed[:63], src, 0, 1)), ErrBuffer},
		{"count 2 too big", second(c.Pack(make([]byte, 128), src, 0, 2)), ErrBuffer},
		{"negative count", second(c.Pack(packed, src, 0, -1)), ErrNegative},
		{"huge count", second(c.Pack(packed, src, 0, 1<<62)), ErrOverflow},
		{"unpack short dst", second(c.Unpack(src[:80], 0, packed, 1)), ErrBuffer},
		{"unpack short packed", second(c.Unpack(src, 0, packed[:10], 1)), ErrBuffer},
		{"unpack huge origin", second(c.Unpack(src, 1<<62, packed, 1)), ErrBuffer},
		{"segment range", second(mustSegment(t, c, 1).Pack(packed, src, 0, 10, 65)), ErrArguments},
		{"segment reversed", second(mustSegment(t, c, 1).Unpack(src, 0, packed, 10, 5)), ErrArguments},
		{"segment short dst", second(mustSegment(t, c, 1).Pack(packed[:3], src, 0, 0, 10)), ErrBuffer},
		{"checkpoint interval", second(c.Checkpoints(1, 0)), ErrArguments},
		{"segment count", second(c.NewSegment(-1)), ErrNegative},
		{"segment huge count", second(c.NewSegment(1 << 60)), ErrOverflow},
		{"block list range", second(mustSegment(t, c, 1).BlockList(0, 100, nil)), ErrArguments},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	// Nothing was written by the failed packs.
	for i, b := range packed {
		if b != 0 {
			t.Fatalf("failed pack wrote packed[%d]", i)
		}
	}
	other := mustSegment(t, MustParse("contig(2)<byte>").Commit(), 1)
	if err := other.Restore(mustSegment(t, c, 1).Checkpoint()); !errors.Is(err, ErrArguments) {
		t.Errorf("restore across types: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestNamedTypes(t *testing.T) {
	for _, tc := range []struct {
		t           *Type
		name        string
		size, align int
	}{
		{Byte(), "byte", 1, 1}, {Int8(), "int8", 1, 1}, {Uint8(), "uint8", 1, 1},
		{Int16(), "int16", 2, 2}, {Uint16(), "uint16", 2, 2}, {Int32(), "int32", 4, 4},
		{Uint32(), "uint32", 4, 4}, {Int64(), "int64", 8, 8}, {Uint64(), "uint64", 8, 8},
		{Float32(), "float32", 4, 4}, {Float64(), "float64", 8, 8},
		{Complex64(), "complex64", 8, 4}, {Complex128(), "complex128", 16, 8},
	} {
		if tc.t.String() != tc.name || tc.t.Size() != tc.size || tc.t.Extent() != tc.size ||
			tc.t.Alignment() != tc.align || tc.t.LB() != 0 || tc.t.TrueExtent() != tc.size {
			t.Errorf("%s: got %v size %d extent %d align %d", tc.name, tc.t, tc.t.Size(), tc.t.Extent(), tc.t.Alignment())
		}
		if n, ok := Named(tc.name); !ok || n != tc.t {
			t.Errorf("Named(%q) = %v, %v", tc.name, n, ok)
		}
	}
	if _, ok := Named("float16"); ok {
		t.Error("Named(float16) found")
	}
}

func TestQueries(t *testing.T) {
	for _, tc := range []struct {
		text                                  string
		size, lb, ub, tlb, tub, blocks, align int
	}{
		{"struct(2;1,1;0,8;float64,int8)", 9, 0, 16, 0, 9, 1, 8},
		{"struct(2;1,1;0,8;complex64,int8)", 9, 0, 12, 0, 9, 1, 4},
		{"resized(-8,40)<contig(2)<float64>>", 16, -8, 32, 0, 16, 1, 8},
		{"vector(3,0,2)<float64>", 0, 0, 32, 0, 32, 0, 8},
		{"indexed(3;0,2,0;1,4,6)<int16>", 4, 8, 12, 8, 12, 1, 2},
		{"indexed(2;0,0;1,4)<int16>", 0, 0, 0, 0, 0, 0, 2},
		{"subarray(2,C;6,8;2,3;1,4)<float64>", 48, 0, 384, 96, 184, 2, 8},
		{"hvector(2,1,-24)<contig(2)<int32>>", 16, -24, 8, -24, 8, 2, 4},
	} {
		ty := MustParse(tc.text)
		got := []int{ty.Size(), ty.LB(), ty.UB(), ty.TrueLB(), ty.TrueUB(), ty.NumBlocks(1), ty.Alignment()}
		want := []int{tc.size, tc.lb, tc.ub, tc.tlb, tc.tub, tc.blocks, tc.align}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: size,lb,ub,tlb,tub,blocks,align = %v, want %v", tc.text, got, want)
		}
	}
}

// TestSegmentStats: catch-up, reset and region counts follow the spec's
// Process semantics.
func TestSegmentStats(t *testing.T) {
	c := MustParse("vector(100,1,2)<float64>").Commit() // 100 blocks of 8 bytes
	s := mustSegment(t, c, 1)
	regions, _ := s.BlockList(0, 20, nil) // blocks 0, 1, half of 2
	if len(regions) != 3 || regions[2] != (Block{Off: 32, Len: 4, Stream: 16}) {
		t.Fatalf("regions %v", regions)
	}
	s.BlockList(400, 408, nil) // catch-up over blocks 2..49
	st := s.Stats()
	if st.CatchUps != 1 || st.CatchUpBytes != 380 || st.SkippedBlocks != 48 || st.Resets != 0 {
		t.Fatalf("after catch-up %+v", st)
	}
	s.BlockList(8, 16, nil) // behind: reset
	st = s.Stats()
	if st.Resets != 1 || s.Position() != 16 {
		t.Fatalf("after reset %+v at %d", st, s.Position())
	}
	cps, err := c.Checkpoints(1, 256)
	if err != nil || len(cps) != 4 || cps[3].Position() != 768 || CheckpointFor(cps, 700) != cps[2] {
		t.Fatalf("checkpoints %v %v", cps, err)
	}
	if cps[1].Depth() != 1 || cps[1].Bytes() <= 0 {
		t.Fatalf("checkpoint depth %d bytes %d", cps[1].Depth(), cps[1].Bytes())
	}
}

func ExampleParse() {
	t, err := Parse("struct(2;1,1;0,8;float64,int8)")
	if err != nil {
		panic(err)
	}
	fmt.Println(t, t.Size(), t.Extent(), t.TrueExtent())
	for off, n := range t.Blocks(2) {
		fmt.Println(off, n)
	}
	// Output:
	// struct(2;1,1;0,8;float64,int8) 9 16 9
	// 0 9
	// 16 9
}

func ExampleSegment_BlockList() {
	c := MustParse("vector(4,2,3)<float64>").Commit()
	seg, _ := c.NewSegment(1)
	// The regions of one 40-byte packet starting at stream byte 8.
	blocks, _ := seg.BlockList(8, 48, nil)
	for _, b := range blocks {
		fmt.Printf("host %d len %d stream %d\n", b.Off, b.Len, b.Stream)
	}
	// Output:
	// host 8 len 8 stream 8
	// host 24 len 16 stream 16
	// host 48 len 16 stream 32
}

// TestTransposeKernels: interleaved columns (the FFT2D receive shape) take
// the tiled transpose kernels; they must agree with the oracle.
func TestTransposeKernels(t *testing.T) {
	for _, text := range []string{
		"contig(7)<resized(0,4)<vector(9,1,8)<float32>>>",
		"contig(20)<resized(0,8)<vector(5,1,21)<float64>>>",
		"contig(5)<resized(0,16)<vector(6,1,-7)<complex128>>>",
		"contig(3)<resized(0,32)<vector(11,1,3)<contig(2)<complex128>>>>",
		"contig(9)<resized(0,12)<vector(4,1,10)<contig(3)<int32>>>>",
		"contig(2)<resized(0,8)<hvector(8,1,16)<float64>>>",
	} {
		ty := MustParse(text)
		c := ty.Commit()
		if c.root.kind != kRep || !c.root.tr {
			t.Errorf("%s: not compiled as a transpose (%v)", text, c.root.kind)
		}
		for count := range 3 {
			checkOracle(t, ty, count, plan{cuts: []int{5, 17, 40}, order: []int{3, 1, 0, 2}, interval: 24})
		}
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		text  string
		count int
		want  Shape
	}{
		{"contig(3)<float64>", 2, Shape{Kind: ShapeContiguous, Count: 1, BlockLen: 48}},
		{"vector(4,2,3)<float64>", 1, Shape{Kind: ShapeVector, Count: 4, BlockLen: 16, Stride: 24}},
		{"resized(0,16)<float64>", 3, Shape{Kind: ShapeVector, Count: 3, BlockLen: 8, Stride: 16}},
		{"indexed_block(3,1;5,0,2)<int32>", 1, Shape{Kind: ShapeIndexBlock, Count: 3, BlockLen: 4, Offsets: []int{20, 0, 8}}},
		{"hindexed(2;1,2;-8,4)<int32>", 1, Shape{Kind: ShapeIndexed, Count: 2, Offsets: []int{-8, 4}, Lens: []int{4, 8}}},
		{"subarray(2,C;4,4;2,2;1,1)<float64>", 1, Shape{Kind: ShapeVector, Count: 2, Base: 40, BlockLen: 16, Stride: 32}},
		{"vector(2,1,3)<vector(2,1,2)<int8>>", 1, Shape{Kind: ShapeGeneral}},
		{"contig(0)<byte>", 5, Shape{Kind: ShapeEmpty}},
	} {
		c := MustParse(tc.text).Commit()
		got, err := c.Shape(tc.count)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s ×%d: Shape = %+v, %v; want %+v", tc.text, tc.count, got, err, tc.want)
		}
		if got.Kind != ShapeEmpty && c.DataloopBytes(tc.count) <= 0 {
			t.Errorf("%s: DataloopBytes = %d", tc.text, c.DataloopBytes(tc.count))
		}
	}
}

func TestSaturating(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{0, 5, 0}, {3, 4, 12}, {5e9, 2, 1e10}, {1 << 40, 1 << 40, math.MaxInt64 / 2}, {-1, 3, 0},
	} {
		if got := satMul(tc.a, tc.b); got != tc.want {
			t.Errorf("satMul(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := satAdd(math.MaxInt64/2, math.MaxInt64/2); got != math.MaxInt64/2 {
		t.Errorf("satAdd saturates at %d", got)
	}
}

// TestTiledKernels: repetitions of short block lists (arrays of structs)
// take the tiled kernels; overlapping ones only for pack. All must agree
// with the oracle.
func TestTiledKernels(t *testing.T) {
	for _, tc := range []struct {
		text  string
		count int
		want  tileMode
	}{
		{"struct(3;1,1,1;0,8,16;int32,float64,int16)", 300, tileAny},
		{"contig(40)<struct(2;1,1;0,12;float64,int8)>", 1, tileAny},
		{"hvector(20,1,-40)<hindexed(3;1,2,1;0,12,30)<int32>>", 1, tileAny},
		{"contig(17)<indexed_block(3,1;0,5,2)<float32>>", 2, tileAny},
		{"contig(33)<hindexed(2;3,1;0,5)<byte>>", 1, tileAny},
		{"contig(20)<resized(0,4)<hindexed(3;1,1,1;0,6,9)<int16>>>", 1, tilePack},
		{"contig(18)<hindexed(2;2,1;0,4)<int32>>", 1, tilePack},
		{"resized(0,13)<hindexed(3;1,1,1;0,2,7)<int16>>", 300, tileAny},
	} {
		ty := MustParse(tc.text)
		c := ty.Commit()
		var w node
		r := repInto(&w, tc.count, c.extent, c.root)
		if r.tile != tc.want {
			t.Errorf("%s ×%d: tile mode %d, want %d (root %v)", tc.text, tc.count, r.tile, tc.want, r.kind)
		}
		checkOracle(t, ty, tc.count, plan{cuts: []int{7, 100, 101, 250}, order: []int{4, 2, 0, 3, 1}, interval: 33})
	}
}

// ExampleCommitted_Checkpoints shows the two checkpoint uses of
// the SC'19 paper: RO-CP copies the nearest checkpoint into a private
// segment per packet; RW-CP gives each sequence a working segment that
// progresses in place and is restored from its checkpoint when a packet
// arrives out of order.
func ExampleCommitted_Checkpoints() {
	c := MustParse("vector(64,1,2)<float64>").Commit() // 512 packed bytes
	const k = 64                                       // packet payload
	cps, _ := c.Checkpoints(1, 2*k)                    // Δr = 2 packets

	// RO-CP: any packet, any order, any handler.
	scratch, _ := c.NewSegment(1)
	_ = scratch.Restore(CheckpointFor(cps, 5*k))
	regions, _ := scratch.BlockList(5*k, 6*k, nil)
	fmt.Println("RO-CP packet 5:", len(regions), "regions from host offset", regions[0].Off)

	// RW-CP: sequence j owns checkpoint j; packets 2 and 3 form sequence 1.
	work := cps[1].Segment()
	for _, pkt := range []int{3, 2} { // packet 3 arrives first
		if work.Position() > pkt*k {
			_ = work.Restore(cps[1]) // behind the working copy: restore the master
		}
		regions, _ = work.BlockList(pkt*k, (pkt+1)*k, regions[:0])
		fmt.Println("RW-CP packet", pkt, "starts at host offset", regions[0].Off)
	}
	// Output:
	// RO-CP packet 5: 8 regions from host offset 640
	// RW-CP packet 3 starts at host offset 384
	// RW-CP packet 2 starts at host offset 256
}
