package apps

import (
	"testing"
)

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
			for b.Loop() {
				if _, err := cm.Pack(packed, user, 0, c.Count); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run("unpack/"+c.Name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cm.Unpack(user, 0, packed, c.Count); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
