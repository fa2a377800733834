package apps

import (
	"slices"
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/datatype"
)

// opTimes records the duration of single calls (the first len(d) of them)
// so that a benchmark can also report the throughput of its 10th
// percentile call, "GB/s-p10", which ignores calls slowed by other work on
// a shared machine (see the same type in package datatype). It does not
// allocate.
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

// BenchmarkMemcpy is the reference for this package's numbers: one copy
// of 4 MiB with datatype.Memcpy (glibc's way), as in package datatype.
func BenchmarkMemcpy(b *testing.B) {
	const n = 4 << 20
	src, dst := fill(n), make([]byte, n)
	b.SetBytes(n)
	b.ReportAllocs()
	var ot opTimes
	for b.Loop() {
		ot.start()
		datatype.Memcpy(dst, src)
		ot.stop()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	ot.report(b, n)
}

// BenchmarkApps packs and unpacks the application types the issue sets a
// throughput bar for, at their benchmark sizes (the types fix the size).
func BenchmarkApps(b *testing.B) {
	cases, err := BenchCases()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		cm := c.Type.Commit()
		user := fill(c.BufLen)
		packed := make([]byte, c.PackedSize())
		n := c.PackedSize()
		b.Run("pack/"+c.Name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var ot opTimes
			for b.Loop() {
				ot.start()
				_, err := cm.Pack(packed, user, 0, c.Count)
				ot.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			ot.report(b, n)
		})
		b.Run("unpack/"+c.Name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var ot opTimes
			for b.Loop() {
				ot.start()
				_, err := cm.Unpack(user, 0, packed, c.Count)
				ot.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			ot.report(b, n)
		})
	}
}
