package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// TestMatrixComplete fails when a (strategy, workload) cell has neither an
// implementation nor a written reason it does not apply, or has both.
func TestMatrixComplete(t *testing.T) {
	for _, w := range Registry() {
		for _, s := range strategy.Registry() {
			im, ok := w.Impl(s)
			why, hasWhy := w.NotApplicable[s.Strategy]
			switch {
			case !ok && (!hasWhy || why == ""):
				t.Errorf("%s × %s: no implementation (caps %v) and no reason it does not apply", w.Name, s.Strategy, s.Caps)
			case ok && hasWhy:
				t.Errorf("%s × %s: implementation %q and also a reason it does not apply (%q)", w.Name, s.Strategy, im.Name, why)
			}
		}
		if b, err := strategy.Lookup(string(w.Baseline)); err != nil {
			t.Errorf("%s: baseline: %v", w.Name, err)
		} else if _, ok := w.Impl(b); !ok {
			t.Errorf("%s: baseline %s does not run it", w.Name, b.Strategy)
		}
		for name := range w.NotApplicable {
			if _, err := strategy.Lookup(string(name)); err != nil {
				t.Errorf("%s: NotApplicable names %v", w.Name, err)
			}
		}
	}
}

// TestMatrixCellsRun runs every applicable cell at its small size and checks
// it verifies.
func TestMatrixCellsRun(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	for _, w := range Registry() {
		for _, s := range strategy.Registry() {
			if _, ok := w.Impl(s); !ok {
				continue
			}
			hw, err := cluster.Preset(s.Preset)
			if err != nil {
				t.Fatal(err)
			}
			cell, err := w.Small(s, s.Adjust(hw), cfg, 1, true)
			if err != nil || !cell.Verified || cell.Time <= 0 {
				t.Errorf("%s × %s: %+v, %v", w.Name, s.Strategy, cell, err)
			}
		}
	}
}

func TestStrategyNamesAreUniqueAndParse(t *testing.T) {
	seen := map[strategy.Strategy]bool{}
	for _, s := range strategy.Registry() {
		if seen[s.Strategy] {
			t.Errorf("%s registered twice", s.Strategy)
		}
		seen[s.Strategy] = true
		if s.Setup == nil || s.Caps == 0 || s.Preset == "" {
			t.Errorf("%s: incomplete definition %+v", s.Strategy, s)
		}
		if _, err := cluster.Preset(s.Preset); err != nil {
			t.Errorf("%s: preset: %v", s.Strategy, err)
		}
	}
}
