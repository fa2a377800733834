package report

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestCheckTimes(t *testing.T) {
	ok := &Result{Tables: []Table{{Name: "t", Columns: []string{"a", "time"}, Rows: [][]any{{1, sim.Time(5)}, {-1, 0.5}}}}}
	if err := ok.CheckTimes(); err != nil {
		t.Errorf("non-negative times: %v", err)
	}
	bad := &Result{Tables: []Table{{Name: "split", Columns: []string{"variant", "communication"}, Rows: [][]any{{"host", sim.Time(1)}, {"rw-cp", sim.Time(-3)}}}}}
	err := bad.CheckTimes()
	if err == nil || !strings.Contains(err.Error(), `table "split" row 2 column communication holds the negative time`) {
		t.Errorf("negative time: %v", err)
	}
}
