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
	// 2 32.212736us 1 38.651388us 0.833 37.741724us 0.854 27.93494us 1.153 26.459572us 1.217
	// 4 49.265891us 1 65.726979us 0.75 61.933307us 0.795 39.497448us 1.247 37.641652us 1.309
	// 8 65.766041us 1 105.237549us 0.625 95.696021us 0.687 51.192726us 1.285 43.790652us 1.502
}
