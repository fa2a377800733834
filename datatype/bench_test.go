package datatype

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchPacked is the packed size of the vector sweep.
const benchPacked = 4 << 20

func reportGBs(b *testing.B, bytesPerOp int) {
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// opTimes records the duration of single calls (the first len(d) of them)
// so that a benchmark can also report the throughput of its 10th
// percentile call, "GB/s-p10". On a machine shared with other work the
// mean (GB/s) includes calls that were preempted or had their caches
// flushed; the low quantile is the kernel's own speed and varies far less
// from run to run. It does not allocate.
type opTimes struct {
	n  int
	t0 time.Time
	d  [4096]time.Duration
}

func (o *opTimes) start() { o.t0 = time.Now() }

func (o *opTimes) stop() {
	if o.n < len(o.d) {
		o.d[o.n] = time.Since(o.t0)
		o.n++
	}
}

// report adds the GB/s-p10 metric for calls moving bytesPerOp bytes.
func (o *opTimes) report(b *testing.B, bytesPerOp int) {
	if o.n == 0 {
		return
	}
	d := o.d[:o.n]
	slices.Sort(d)
	b.ReportMetric(float64(bytesPerOp)/d[len(d)/10].Seconds()/1e9, "GB/s-p10")
}

// BenchmarkMemcpy is the reference: one copy of 4 MiB with Memcpy, which
// copies as glibc's memcpy does (ordinary stores at this size).
// BenchmarkMemcpy/runtime is the Go runtime's copy of the same bytes
// (non-temporal stores from 1 MiB), for comparison: docs/ddt.md.
func BenchmarkMemcpy(b *testing.B) {
	for _, v := range []struct {
		name string
		f    func(dst, src []byte) int
	}{{"glibc", Memcpy}, {"runtime", func(dst, src []byte) int { return copy(dst, src) }}} {
		b.Run(v.name, func(b *testing.B) {
			src, dst := fill(benchPacked), make([]byte, benchPacked)
			b.SetBytes(benchPacked)
			b.ReportAllocs()
			var ot opTimes
			for b.Loop() {
				ot.start()
				v.f(dst, src)
				ot.stop()
			}
			reportGBs(b, benchPacked)
			ot.report(b, benchPacked)
		})
	}
}

// BenchmarkVector packs and unpacks vector(n, bl, 2·bl)<byte> with 4 MiB
// packed, for block sizes bl.
func BenchmarkVector(b *testing.B) {
	for _, bl := range []int{4, 8, 16, 64, 256, 2048} {
		ty, err := Vector(benchPacked/bl, bl, 2*bl, Byte())
		if err != nil {
			b.Fatal(err)
		}
		c := ty.Commit()
		user := fill(ty.TrueExtent())
		packed := make([]byte, ty.Size())
		b.Run(fmt.Sprintf("pack/block=%d", bl), func(b *testing.B) {
			b.SetBytes(int64(ty.Size()))
			b.ReportAllocs()
			var ot opTimes
			for b.Loop() {
				ot.start()
				_, err := c.Pack(packed, user, 0, 1)
				ot.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			reportGBs(b, ty.Size())
			ot.report(b, ty.Size())
		})
		b.Run(fmt.Sprintf("unpack/block=%d", bl), func(b *testing.B) {
			b.SetBytes(int64(ty.Size()))
			b.ReportAllocs()
			var ot opTimes
			for b.Loop() {
				ot.start()
				_, err := c.Unpack(user, 0, packed, 1)
				ot.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			reportGBs(b, ty.Size())
			ot.report(b, ty.Size())
		})
	}
}

// BenchmarkSegmentVector processes the 8-byte vector sweep in 2 KiB
// packets through a segment (the NIC's per-packet path).
func BenchmarkSegmentVector(b *testing.B) {
	ty, _ := Vector(benchPacked/8, 8, 16, Byte())
	c := ty.Commit()
	user := fill(ty.TrueExtent())
	packed := make([]byte, ty.Size())
	seg, err := c.NewSegment(1)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(ty.Size()))
	b.ReportAllocs()
	for b.Loop() {
		for a := 0; a < len(packed); a += 2048 {
			if _, err := seg.Unpack(user, 0, packed[a:a+2048], a, a+2048); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportGBs(b, ty.Size())
}

// BenchmarkStructArray packs and unpacks count elements of a padded
// struct (an array of C structs), about 4 MiB packed.
func BenchmarkStructArray(b *testing.B) {
	ty := MustParse("struct(3;1,1,1;0,8,16;int32,float64,int16)") // 14 bytes in a 24-byte extent
	c := ty.Commit()
	count := benchPacked / ty.Size()
	user := fill(count * ty.Extent())
	packed := make([]byte, count*ty.Size())
	b.Run("pack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Pack(packed, user, 0, count); err != nil {
				b.Fatal(err)
			}
		}
		reportGBs(b, len(packed))
	})
	b.Run("unpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Unpack(user, 0, packed, count); err != nil {
				b.Fatal(err)
			}
		}
		reportGBs(b, len(packed))
	})
}

// BenchmarkBlockList lists the regions of 2 KiB packets of the 8-byte
// vector sweep (256 regions each) without copying; it reports regions/s.
func BenchmarkBlockList(b *testing.B) {
	ty, _ := Vector(benchPacked/8, 8, 16, Byte())
	seg, err := ty.Commit().NewSegment(1)
	if err != nil {
		b.Fatal(err)
	}
	blocks := make([]Block, 0, 512)
	regions := 0
	b.ReportAllocs()
	for b.Loop() {
		for a := 0; a < benchPacked; a += 2048 {
			if blocks, err = seg.BlockList(a, a+2048, blocks[:0]); err != nil {
				b.Fatal(err)
			}
			regions += len(blocks)
		}
	}
	b.ReportMetric(float64(regions)/b.Elapsed().Seconds(), "regions/s")
}
