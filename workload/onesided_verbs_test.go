package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The device-verbs Reduce (GPU work-groups write their slices with RDMA,
// the root's work-groups poll the sequence words and add on the GPU)
// equals the serial sum on odd and even node counts, with a vector that
// splits unevenly over its work-groups, and payload-free runs keep the
// functional timing.
func TestDeviceVerbsReduce(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		var times [2]int64
		for i, functional := range []bool{true, false} {
			c, err := newCluster(cluster.GPURDMA(), n, 1, functional)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Reduce{Size: 40*unit.KiB + 8, WGSize: 256, CPUThreads: 8}.Run(c, strategy.GNNGPURDMA, gnnConfig(nil))
			c.Engine.Close()
			if err != nil || r.Impl != "device-verbs" || r.Verified != functional || r.Time <= 0 {
				t.Fatalf("n=%d functional=%v: %+v %v", n, functional, r, err)
			}
			times[i] = int64(r.Time)
		}
		if times[0] != times[1] {
			t.Errorf("n=%d: functional %d ps, payload-free %d ps", n, times[0], times[1])
		}
	}
}

// The device-verbs Accumulate equals the serial reference with sizes
// cycling below and above one work-group's 16 KiB and accumulates that
// overlap (stride 0) or not; the target reuses each epoch's slots only
// after the initiator saw the epoch's acks.
func TestDeviceVerbsAccumulate(t *testing.T) {
	for _, stride := range []unit.Bytes{0, 2 * unit.KiB, 40 * unit.KiB} {
		a := Accumulate{Sizes: []unit.Bytes{4 * unit.KiB, 8, 40 * unit.KiB}, PerEpoch: 3, Epochs: 4, Stride: stride, WGSize: 256, CPUThreads: 8}
		r, err := a.Run(gpurdmaCluster(t, nil), strategy.GNNGPURDMA, gnnConfig(nil))
		if err != nil || !r.Verified || r.Impl != "device-verbs" || r.PerEpoch <= 0 {
			t.Errorf("stride %v: %+v %v", stride, r, err)
		}
	}
}
