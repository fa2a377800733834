package workload

import (
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// BenchmarkDDTVector4MiB runs the §11.1 sweep (4 MiB, blocks 4 B … 4 KiB,
// stride 2 × block, real bytes, verified) once per method per iteration,
// on the ARM HPUs (preset spin) and on the PULP accelerator (preset pulp),
// and reports simulated events per wall second.
func BenchmarkDDTVector4MiB(b *testing.B) {
	const size = 4 << 20
	blocks := []int{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}
	types := make([]*datatype.Committed, len(blocks))
	for i, bl := range blocks {
		t, err := datatype.Vector(size/bl, bl, 2*bl, datatype.Byte())
		if err != nil {
			b.Fatal(err)
		}
		types[i] = t.Commit()
	}
	for _, preset := range []string{"spin", "pulp"} {
		hw, err := cluster.Preset(preset)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range spinmodel.Methods() {
			benchDDTVector(b, preset, hw, m, types)
		}
	}
}

// benchDDTVector is one method's sweep on one preset.
func benchDDTVector(b *testing.B, preset string, hw cluster.Spec, m spinmodel.Method, types []*datatype.Committed) {
	b.Run(preset+"/"+m.String(), func(b *testing.B) {
		var events uint64
		start := time.Now()
		for range b.N {
			for _, c := range types {
				cl, err := cluster.New(sim.New(1), hw, 2, true)
				if err != nil {
					b.Fatal(err)
				}
				r, err := DDTUnpack{Type: c, Count: 1}.RunMethod(cl, m, spinmodel.DefaultCosts())
				if err != nil || !r.Verified {
					b.Fatalf("%v: verified %v, %v", m, r.Verified, err)
				}
				events += cl.Engine.Events()
				cl.Engine.Close()
			}
		}
		b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(float64(events)/float64(b.N), "events/op")
	})
}
