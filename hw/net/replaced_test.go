package net

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The reallocations that replaced does without water-filling (every flow
// that ended replaced by one on the same path) leave every delivery where
// the water-filling's reallocation puts it, bit for bit and in the same
// order: random pieces queued per pair (the device-shmem puts), with
// random single messages beside them, on every topology (several paths
// per pair included), with and without a node fabric.
func TestReplacedMatchesFullReallocation(t *testing.T) {
	topos := []TopologySpec{star, tree, railSplit, dfSplit, treeOOO, railOOO, dfValiant, dfUGAL}
	type send struct {
		src, dst int
		n        unit.Bytes
		at       sim.Time
	}
	replacements := 0
	rapid.Check(t, func(t *rapid.T) {
		topo := topos[rapid.IntRange(0, len(topos)-1).Draw(t, "topology")]
		node := topo.Kind != "railfattree" && rapid.Bool().Draw(t, "node fabric")
		const n = 8
		var sends []send
		for range rapid.IntRange(1, 12).Draw(t, "pairs") {
			src := rapid.IntRange(0, n-1).Draw(t, "src")
			dst := (src + rapid.IntRange(1, n-1).Draw(t, "offset")) % n
			at := sim.Time(rapid.IntRange(0, 20).Draw(t, "instant")) * 500 * sim.Nanosecond
			piece := unit.Bytes(rapid.IntRange(1, 64<<10).Draw(t, "piece"))
			for range rapid.IntRange(1, 8).Draw(t, "pieces") {
				sends = append(sends, send{src, dst, piece, at})
			}
		}
		for range rapid.IntRange(0, 10).Draw(t, "singles") {
			src := rapid.IntRange(0, n-1).Draw(t, "src")
			sends = append(sends, send{src, (src + rapid.IntRange(1, n-1).Draw(t, "offset")) % n,
				unit.Bytes(rapid.IntRange(1, 256<<10).Draw(t, "bytes")),
				sim.Time(rapid.IntRange(0, 20).Draw(t, "instant")) * 500 * sim.Nanosecond})
		}
		run := func(fullOnly bool) (*recorder, *Fabric) {
			e := sim.New(1)
			f, err := New(e, n, LinkSpec{Bandwidth: unit.Rate(100e9 / 8), Payload: 2048, Header: 64},
				SwitchSpec{Latency: 100 * sim.Nanosecond}, topo)
			if err != nil {
				t.Fatal(err)
			}
			if node {
				if err := f.UseNodeFabric(nvswitch); err != nil {
					t.Fatal(err)
				}
			}
			f.UseFlows()
			f.fl.fullOnly = fullOnly
			f.fl.afterRealloc = func() {
				for fl, want := range fullRates(f.fl) {
					if fl.rate != want {
						t.Fatalf("full=%v at %v: flow %v rate %v, whole machine %v (replacements %d)", fullOnly, e.Now(), fl.p, fl.rate, want, f.fl.replacements)
					}
				}
			}
			r := &recorder{e: e, at: map[int]sim.Time{}}
			for i := range n {
				f.Attach(i, r)
			}
			for i, sd := range sends {
				e.At(sd.at, func() { f.Send(testMsg{sd.src, sd.dst, sd.n, i}) })
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if len(r.at) != len(sends) {
				t.Fatalf("%d of %d messages delivered", len(r.at), len(sends))
			}
			return r, f
		}
		want, _ := run(true)
		got, f := run(false)
		replacements += f.fl.replacements
		for i := range sends {
			if got.at[i] != want.at[i] {
				t.Fatalf("message %d (%+v): delivered at %v, with a water-filling at every reallocation %v", i, sends[i], got.at[i], want.at[i])
			}
		}
		for i := range want.seq {
			if got.seq[i] != want.seq[i] {
				t.Fatalf("delivery %d: message %d, with a water-filling at every reallocation %d", i, got.seq[i], want.seq[i])
			}
		}
	})
	if replacements == 0 {
		t.Fatal("no reallocation was a replacement: the test does not reach replaced")
	}
}
