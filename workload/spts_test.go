package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Every class gives a lower-triangular matrix with the diagonal last,
// close to the requested nonzeros, the same for the same seed.
func TestGenSynthetic(t *testing.T) {
	for _, class := range SpTSClasses() {
		ref := SpTSReferences()[class]
		rows := 4096
		nnz := int(ref.LowerNNZPerRow() * float64(rows))
		a, err := GenSynthetic(rows, nnz, class, 7)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.N {
			cs, vs := a.Row(i)
			if int(cs[len(cs)-1]) != i || vs[len(vs)-1] <= 0 {
				t.Fatalf("%s row %d: diagonal not last or not positive: %v", class, i, cs)
			}
			for k := 1; k < len(cs); k++ {
				if cs[k] <= cs[k-1] {
					t.Fatalf("%s row %d: columns not strictly increasing: %v", class, i, cs)
				}
			}
		}
		if got := a.NNZ(); got < nnz*3/4 || got > nnz*5/4 {
			t.Errorf("%s: %d nonzeros, want about %d", class, got, nnz)
		}
		b, _ := GenSynthetic(rows, nnz, class, 7)
		if b.NNZ() != a.NNZ() || b.Val[b.NNZ()/2] != a.Val[a.NNZ()/2] {
			t.Errorf("%s: not deterministic in the seed", class)
		}
		y := spTSRHS(a.N, 1)
		if r := a.Residual(a.Solve(y), y); r > 1e-12 {
			t.Errorf("%s: serial residual %g", class, r)
		}
	}
	if _, err := GenSynthetic(100, 100, "mesh", 1); err == nil {
		t.Error("unknown class accepted")
	}
}

// solveOn runs the solve of a on nodes nodes under s with the strategy's
// preset and returns the result.
func solveOn(t *testing.T, s strategy.Strategy, a *TriMatrix, nodes int, sh shmem.Spec) SpTSResult {
	t.Helper()
	sd, err := strategy.Lookup(string(s))
	if err != nil {
		t.Fatal(err)
	}
	hw, err := cluster.Preset(sd.Preset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCluster(sd.Adjust(hw), nodes, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := SpTS{Matrix: a, WGs: 32, Seed: 3}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), Shmem: sh})
	if err != nil {
		t.Fatalf("%s on %d nodes: %v", s, nodes, err)
	}
	if !r.Verified {
		t.Fatalf("%s on %d nodes: not verified", s, nodes)
	}
	return r
}

// The distributed solve verifies on every implementation family and node
// count, sends x values between nodes, and the device-shmem solve sends
// exactly one value per (row, other node owning a dependent).
func TestSpTSDistributed(t *testing.T) {
	a, err := GenSynthetic(1024, 1024*3, ClassPowerLaw, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, nodes := range []int{2, 3} {
		pl := newSpTSPlan(a, nodes, 3)
		want := uint64(0)
		for i := range a.N {
			want += uint64(len(pl.targets[i]))
		}
		for _, s := range []strategy.Strategy{strategy.GNNGIO, strategy.GHNDGPU, strategy.GNNGPURDMA, strategy.HDN, strategy.HDNOverlap, strategy.CPU} {
			r := solveOn(t, s, a, nodes, shmem.DefaultSpec())
			if r.RemoteValues != want || want == 0 {
				t.Errorf("%s on %d nodes: %d remote values, want %d (> 0)", s, nodes, r.RemoteValues, want)
			}
		}
	}
}

// On one GPU, the solve on GIO's L2-uncacheable heap is slower than with
// the heap cacheable (shader L2 maintenance), and only the former sends
// bulk lines past the L2 for being uncacheable: the L2-off overhead
// emerges from the attribute.
func TestSpTSL2OffOverhead(t *testing.T) {
	a, err := GenSynthetic(2048, 2048*7, ClassKKT, 5)
	if err != nil {
		t.Fatal(err)
	}
	off := solveOn(t, strategy.GNNGIO, a, 1, shmem.DefaultSpec())
	sh := shmem.DefaultSpec()
	sh.GIO.ShaderL2Maintenance = true
	on := solveOn(t, strategy.GNNGIO, a, 1, sh)
	if off.Time <= on.Time {
		t.Errorf("L2 off %v, L2 on %v: want the uncacheable heap slower", off.Time, on.Time)
	}
	if off.UncachedLines == 0 || on.UncachedLines != 0 {
		t.Errorf("uncached bulk lines: off %d, on %d; want > 0 and 0", off.UncachedLines, on.UncachedLines)
	}
	if on.BulkHitRate <= off.BulkHitRate {
		t.Errorf("bulk L2 hit rate: on %.3f, off %.3f; want higher with the heap cacheable", on.BulkHitRate, off.BulkHitRate)
	}
	t.Logf("L2 off %v, on %v (+%.1f%%); hit rates %.3f / %.3f", off.Time, on.Time, 100*(float64(off.Time)/float64(on.Time)-1), off.BulkHitRate, on.BulkHitRate)
	// The power-law class, with about one nonzero per row, has little x
	// reuse to lose: its overhead is smaller than the banded class's.
	p, err := GenSynthetic(2048, 2048*5/4, ClassPowerLaw, 5)
	if err != nil {
		t.Fatal(err)
	}
	poff, pon := solveOn(t, strategy.GNNGIO, p, 1, shmem.DefaultSpec()), solveOn(t, strategy.GNNGIO, p, 1, sh)
	if ratio, pratio := float64(off.Time)/float64(on.Time), float64(poff.Time)/float64(pon.Time); pratio >= ratio {
		t.Errorf("L2-off slowdown: power-law %.4f, banded %.4f: want less for the class with less reuse", pratio, ratio)
	}
}

// HDN_OVERLAP overlaps each level's exchange with the next level's rows
// that need none of its remote values, so on the banded class (every
// level has such rows) it finishes before the in-order HDN schedule.
func TestSpTSOverlapBeatsInOrder(t *testing.T) {
	a, err := GenSynthetic(1024, 1024*8, ClassKKT, 5)
	if err != nil {
		t.Fatal(err)
	}
	hdn := solveOn(t, strategy.HDN, a, 2, shmem.DefaultSpec())
	ovl := solveOn(t, strategy.HDNOverlap, a, 2, shmem.DefaultSpec())
	if ovl.Time >= hdn.Time {
		t.Errorf("HDN_OVERLAP %v, HDN %v: want the overlapped schedule faster", ovl.Time, hdn.Time)
	}
}

// The device-verbs solve on a road-class matrix over three nodes: x lines
// straddle the row blocks, so a gather racing a NIC write would read a
// stale x unless the acquire follows the notification (it verifies).
func TestSpTSDeviceVerbsRoad(t *testing.T) {
	a, err := GenSynthetic(8192, int(SpTSReferences()[ClassRoad].LowerNNZPerRow()*8192), ClassRoad, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCluster(cluster.GPURDMA(), 3, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := SpTS{Matrix: a, WGs: 128, Seed: 1}.Run(c, strategy.GNNGPURDMA, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil || !r.Verified || r.RemoteValues == 0 {
		t.Fatalf("%+v, %v", r, err)
	}
}
