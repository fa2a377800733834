package exp_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The README's first Go API snippet: run a registered experiment on a
// preset's configuration.
func Example() {
	cfg, _ := exp.DefaultConfig("gputn")
	cfg.Allreduce.Nodes = []int{2, 4, 8}
	cfg.Allreduce.Size = 256 * unit.KiB
	ex, _ := exp.Lookup("allreduce")
	res, err := ex.Run(cfg, exp.Env{}) // *report.Result: tables, plot, notes
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Tables[0]
	fmt.Println(t.Name, t.Columns)
	for _, row := range t.Rows {
		fmt.Println(row...)
	}
	// Output:
	// speedup vs CPU [nodes CPU time CPU speedup HDN time HDN speedup GDS time GDS speedup GHN_APU time GHN_APU speedup GPUTN time GPUTN speedup]
	// 2 32.212736us 1 38.667388us 0.833 37.757724us 0.853 27.94294us 1.153 26.467572us 1.217
	// 4 49.265891us 1 65.734979us 0.749 61.941307us 0.795 39.505448us 1.247 37.649652us 1.309
	// 8 65.766041us 1 105.245549us 0.625 95.704021us 0.687 51.200726us 1.284 43.798652us 1.502
}
