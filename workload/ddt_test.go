package workload

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/datatype/apps"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

func runDDT(t *testing.T, hw cluster.Spec, c *datatype.Committed, count int, m spinmodel.Method) (DDTResult, error) {
	t.Helper()
	cl, err := cluster.New(sim.New(1), hw, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Engine.Close()
	return DDTUnpack{Type: c, Count: count}.RunMethod(cl, m, spinmodel.DefaultCosts())
}

// TestDDTVectorSweep: every method leaves the receive buffer equal to
// datatype.Unpack for vectors of 4 B … 4 KiB blocks at stride 2 × block.
func TestDDTVectorSweep(t *testing.T) {
	const size = 128 << 10
	for _, bl := range []int{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096} {
		ty, err := datatype.Vector(size/bl, bl, 2*bl, datatype.Byte())
		if err != nil {
			t.Fatal(err)
		}
		c := ty.Commit()
		for _, m := range spinmodel.Methods() {
			t.Run(fmt.Sprintf("%dB/%v", bl, m), func(t *testing.T) {
				r, err := runDDT(t, cluster.Spin(), c, 1, m)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Verified || r.Time() <= 0 {
					t.Fatalf("verified %v, time %v", r.Verified, r.Time())
				}
			})
		}
	}
}

// TestDDTApps: every method on every application datatype fixture (the
// specialized handlers only where the type has a single level of blocks).
func TestDDTApps(t *testing.T) {
	cases, err := apps.FixtureCases()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ac := cases[name]
		c := ac.Type.Commit()
		for _, m := range spinmodel.Methods() {
			t.Run(name+"/"+m.String(), func(t *testing.T) {
				r, err := runDDT(t, cluster.Spin(), c, ac.Count, m)
				if m == spinmodel.Specialized && errors.Is(err, spinmodel.ErrNotApplicable) {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !r.Verified {
					t.Fatalf("%s under %v: receive buffer differs from datatype.Unpack", name, m)
				}
			})
		}
	}
}

// TestDDTOutOfOrder: on a fabric that spreads packets over random spines,
// the NIC-handler methods still place every byte where Unpack does.
func TestDDTOutOfOrder(t *testing.T) {
	hw := cluster.Spin()
	hw.Topology.Kind, hw.Topology.LeafSize, hw.Topology.InOrder = "fattree", 1, false
	hw.Switch.Latency = 0
	ty, err := datatype.Parse("struct(2;1,1;0,40000;vector(300,3,5)<float64>,indexed(3;7,1,20;0,50,30)<float32>)")
	if err != nil {
		t.Fatal(err)
	}
	c := ty.Commit()
	for _, m := range []spinmodel.Method{spinmodel.HPULocal, spinmodel.ROCP, spinmodel.RWCP} {
		t.Run(m.String(), func(t *testing.T) {
			r, err := runDDT(t, hw, c, 20, m)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Verified {
				t.Fatal("receive buffer differs from datatype.Unpack")
			}
			t.Logf("resets %d, catch-up blocks %d", r.Break.Resets, r.Break.CatchUpBlocks)
		})
	}
}
