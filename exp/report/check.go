package report

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// CheckTimes returns an error naming the first table cell that holds a
// negative simulated time: times and durations a model reports are never
// negative, so one is a model output that broke its own invariant (an
// overflow, a total shorter than its parts), and the run fails instead of
// reporting it.
func (r *Result) CheckTimes() error {
	for _, t := range r.Tables {
		for i, row := range t.Rows {
			for j, c := range row {
				if v, ok := c.(sim.Time); ok && v < 0 {
					col := fmt.Sprint(j)
					if j < len(t.Columns) {
						col = t.Columns[j]
					}
					return fmt.Errorf("table %q row %d column %s holds the negative time %v: the model broke its own invariant (times are never negative)", t.Name, i+1, col, v)
				}
			}
		}
	}
	return nil
}
